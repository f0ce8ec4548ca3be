#!/usr/bin/env python3
"""Conformance: nanaudit's JSON against numpy on files written by the
official safetensors package (safetensors.numpy.save_file; BF16 and F8_*
arrays come from ml_dtypes, which the writer maps to the safetensors names).

For every dtype the writer supports (F64 F32 F16 BF16 F8_E4M3 F8_E5M2
F8_E4M3FNUZ F8_E5M2FNUZ F8_E8M0 I8..I64 U8..U64 BOOL C64) one file holds the
shapes [] [0] [2,0] [7] [3,5,7] [1000,300]; the two larger tensors get NaN
(several payloads), +-Inf where the dtype has them, zeros, subnormals and
outliers placed far outside mean +- K*std. Checks, per tensor, everything
nacheck.compare_tensor lists (counts exact, min/max exact, mean/std to
1e-12*(|mean|+std), outlier counts and first-N locations exact), then:
  - a 72 MB F32 tensor (more than one 64 MiB mapping window) with NaN, Inf
    and outliers on both sides of the window boundary;
  - the same JSON for --threads 1 and --threads 2;
  - --zscore 3 --max-locations 10 honoured;
  - F64 1e8 + N(0,1) and F32 1e4 + N(0,1): std matches numpy to 1e-9
    relative (cancellation);
  - exit code 1 (NaN/Inf found under the default --fail-on nan,inf).
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_conformance.py
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from safetensors.numpy import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402

K_DEFAULT = 6.0  # NA_DEFAULT_ZSCORE in lib/nanaudit.h
N_DEFAULT = 5    # NA_DEFAULT_MAX_LOCATIONS
SHAPES = {"scalar": (), "empty": (0,), "empty2": (2, 0), "vec": (7,),
          "cube": (3, 5, 7), "big": (1000, 300)}

# Outlier magnitude per float dtype: far beyond K*std, inside the range.
FLOAT_OUTLIER = {"F64": 1e6, "F32": 1e6, "F16": 3000.0, "BF16": 1e4,
                 "F8_E4M3": 200.0, "F8_E5M2": 1000.0, "F8_E4M3FNUZ": 200.0,
                 "F8_E5M2FNUZ": 1000.0}
# Extra NaN bit patterns (besides the canonical one from np.nan).
NAN_BITS = {"F64": (np.uint64, [0x7FF0000000000001, 0xFFF8000000000000]),
            "F32": (np.uint32, [0x7FC00000, 0xFFC00000, 0x7F800001]),
            "F16": (np.uint16, [0x7C01, 0xFE00]),
            "BF16": (np.uint16, [0x7F81, 0xFFC0])}
# Subnormal bit patterns (smallest, largest, negative) in each float dtype.
SUB_BITS = {"F64": (np.uint64, [1, 0x000FFFFFFFFFFFFF, 0x8000000000000001]),
            "F32": (np.uint32, [1, 0x007FFFFF, 0x80000001]),
            "F16": (np.uint16, [0x0001, 0x03FF, 0x8001]),
            "BF16": (np.uint16, [0x0001, 0x007F, 0x8001]),
            "F8_E4M3": (np.uint8, [0x01, 0x07, 0x81]),
            "F8_E5M2": (np.uint8, [0x01, 0x03, 0x81]),
            "F8_E4M3FNUZ": (np.uint8, [0x01, 0x07, 0x81]),
            "F8_E5M2FNUZ": (np.uint8, [0x01, 0x03, 0x81])}


def has_inf(dt):
    return bool(np.isinf(np.array(np.inf).astype(dt).astype(np.float64)))


def base_values(name, shape, rng):
    """Bulk data: N(0,1)-like floats, small integers, 30 % true bools."""
    dt = nacheck.ST_DTYPES[name]
    if name == "BOOL":
        return rng.random(shape) < 0.3
    if name == "F8_E8M0":  # powers of two only, no zero, no sign
        return (2.0 ** rng.integers(-8, 9, size=shape)).astype(dt)
    if name == "C64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if np.dtype(dt).kind in "iu":
        lo = 0 if np.dtype(dt).kind == "u" else -20
        return rng.integers(lo, lo + 41, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def set_bits(a, idx, utype, bits):
    flat = a.reshape(-1).view(utype)
    for i, b in zip(idx, bits):
        flat[i] = b


def sprinkle(name, a, n_out):
    """Put NaN/Inf, zeros, subnormals and n_out outliers at fixed places."""
    dt = a.dtype
    n = a.size
    flat = a.reshape(-1)
    if name == "C64":
        flat[3] = complex(np.nan, 1.0)
        flat[n - 2] = complex(2.0, np.inf)
        flat[n // 2] = complex(-np.inf, np.nan)
        flat[5] = complex(1e6, -1e6) if n_out > 2 else complex(40.0, -40.0)
        return
    if np.dtype(dt).kind in "iub":
        if name != "BOOL":
            info = np.iinfo(dt)
            # One outlier in a small tensor: two extremes of opposite sign
            # in 105 small integers sit right at 6 std (no stable count).
            for j in range(n_out if n > 200 else 1):
                flat[(j * 997 + 11) % n] = info.max if j % 2 == 0 else info.min
            flat[1] = 0
        return
    nan_at = [2, 9, n // 3, n // 2 + 1, n - 7, n - 1][: 6 if n > 200 else 2]
    for i in nan_at:
        flat[i] = np.nan
    if name in NAN_BITS and n > 200:
        set_bits(a, [n // 4, n // 4 + 3, n // 4 + 5][: len(NAN_BITS[name][1])], *NAN_BITS[name])
    if has_inf(dt):
        flat[4] = np.inf
        flat[n - 3] = -np.inf
        if n > 200:
            flat[[n // 5, n // 5 + 1]] = np.inf
            flat[[n // 6, 100]] = -np.inf
    flat[0] = 0.0 if name != "F8_E8M0" else 1.0
    if name in SUB_BITS:
        set_bits(a, [6, 7, 8], *SUB_BITS[name])
    big = FLOAT_OUTLIER.get(name, 2.0 ** 60)
    for j in range(n_out):
        sign = -1.0 if (j % 2 and name != "F8_E8M0") else 1.0
        flat[(j * 7919 + 13) % n] = sign * big


def special_vec(name):
    """[7] tensors with the extremes of the dtype (exact min/max checks)."""
    dt = nacheck.ST_DTYPES[name]
    if name in ("I64", "U64", "I32", "U32", "I16", "U16", "I8", "U8"):
        info = np.iinfo(dt)
        return np.array([info.min, info.max, 0, 1, info.max - 1, 2, 3], dtype=dt)
    if name == "F64":
        return np.array([1e150, -2.5e-310, 0.0, -0.0, 1.0, -1e-300, 3.0], dtype=dt)
    return None


def make_tensors(name, rng):
    tensors = {}
    for label, shape in SHAPES.items():
        a = np.array(base_values(name, shape, rng))
        if label == "scalar":
            a = np.array(3.5 if np.dtype(a.dtype).kind not in "iub" else 1).astype(a.dtype)
        elif label == "vec" and special_vec(name) is not None:
            a = special_vec(name)
        elif label == "cube":
            sprinkle(name, a, 2)
        elif label == "big":
            sprinkle(name, a, 7)
        # copy(), not ascontiguousarray(): the latter turns shape () into (1,).
        tensors[f"{name.lower()}_{label}"] = a.copy(order="C")
    return tensors


def write_files(tmp):
    rng = np.random.default_rng(12345)
    paths = []
    for name in nacheck.ST_DTYPES:
        path = os.path.join(tmp, f"{name.lower()}.safetensors")
        save_file(make_tensors(name, rng), path)
        paths.append(path)
    # Larger than one mapping window (NA_DEFAULT_WINDOW_BYTES, 64 MiB):
    # findings on both sides of the first window boundary and at the end.
    n = 6000 * 3000
    wide = rng.standard_normal(n, dtype=np.float32)
    edge = (64 << 20) // 4
    wide[[5, edge - 1, edge, n - 1]] = np.nan
    wide[[edge + 1, n - 2]] = [np.inf, -np.inf]
    wide[[17, edge - 2, edge + 7, n - 5]] = [50.0, -50.0, 60.0, -60.0]
    path = os.path.join(tmp, "window.safetensors")
    save_file({"wide": wide.reshape(6000, 3000)}, path)
    paths.append(path)
    # Cancellation: F64 1e8 + N(0,1), std ~ 1 (naive sum-of-squares fails).
    path = os.path.join(tmp, "cancel.safetensors")
    # The F32 twin (1e4 + N(0,1), about 1e-3 resolution) checks the same
    # through the F32 kernel.
    save_file({"shifted": 1e8 + rng.standard_normal(1_000_000),
               "shifted_f32": (1e4 + rng.standard_normal(1_000_000)).astype(np.float32)}, path)
    paths.append(path)
    return paths


def check_file(fjson, path, k, n):
    """Compare every tensor of one file; return how many were checked."""
    if fjson.get("status") != "ok":
        raise Mismatch(f"{path}: file status {fjson.get('status')!r}: {fjson.get('error')}")
    got = {t["name"]: t for t in fjson.get("tensors", [])}
    ref = nacheck.read_reference(path)
    names = [r[0] for r in ref]
    if sorted(got) != sorted(names):
        raise Mismatch(f"{path}: tensors {sorted(got)}, expected {sorted(names)}")
    for tname, dtype, arr in ref:
        exp = nacheck.reference_stats(arr, k, n)
        if exp["margin"] < nacheck.BORDERLINE:
            raise Mismatch(f"{path}: {tname}: test data has a value within "
                           f"{exp['margin']:.2g} std of the outlier threshold; change it")
        nacheck.compare_tensor(got[tname], dtype, exp, k, f"{os.path.basename(path)}: {tname}")
        print(f"  ok {nacheck.describe(tname, dtype, exp)}")
    return len(ref)


def check_cancellation(doc, path):
    """std of a large offset plus N(0,1): ~1, to 1e-9 relative of numpy's
    float64 two-pass std (a naive sum of squares loses every digit)."""
    got = {t["name"]: t for t in [f for f in doc["files"] if f["path"] == path][0]["tensors"]}
    for name, dtype, x in nacheck.read_reference(path):
        ref = float(x.astype(np.float64).std())
        std = float(got[name]["std"])
        if abs(std - ref) > 1e-9 * ref or abs(ref - 1.0) > 0.01:
            raise Mismatch(f"{path}: {name}: std {std!r}, numpy {ref!r} (rel 1e-9)")
        print(f"  ok {name} {dtype} offset+N(0,1): std {std!r} vs numpy {ref!r}")


def body():
    tmp = tempfile.mkdtemp(prefix="nanaudit-conf-")
    try:
        paths = write_files(tmp)
        rc, doc = nacheck.scan(paths, "--threads", "1")
        print(f"scan of {len(paths)} files (default K={K_DEFAULT}, N={N_DEFAULT}): exit {rc}")
        if rc != 1:
            raise Mismatch(f"exit code {rc}, expected 1 (NaN/Inf present, default --fail-on)")
        by_path = {f["path"]: f for f in doc["files"]}
        total = 0
        for p in paths:
            if p not in by_path:
                raise Mismatch(f"{p}: missing from files[] (have {sorted(by_path)})")
            print(f"{os.path.basename(p)}:")
            total += check_file(by_path[p], p, K_DEFAULT, N_DEFAULT)
        check_cancellation(doc, paths[-1])
        if doc["summary"].get("tensors") != total or doc["summary"].get("exit_code") != 1:
            raise Mismatch(f"summary {doc['summary']}: expected tensors {total}, exit_code 1")
        print(f"checked {total} tensors against numpy")

        rc2, doc2 = nacheck.scan(paths, "--threads", "2")
        if (rc2, doc2["files"], doc2["summary"]) != (rc, doc["files"], doc["summary"]):
            raise Mismatch("--threads 2 JSON differs from --threads 1")
        print("ok --threads 1 and --threads 2 give identical files[] and summary")

        some = [p for p in paths if os.path.basename(p) in ("f32.safetensors", "i32.safetensors",
                                                            "bf16.safetensors")]
        rc3, doc3 = nacheck.scan(some, "--zscore", "3", "--max-locations", "10")
        for f in doc3["files"]:
            check_file(f, f["path"], 3.0, 10)
        print(f"ok --zscore 3 --max-locations 10 on {len(some)} files (exit {rc3})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    nacheck.run_main(body)
