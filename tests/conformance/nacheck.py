"""Shared helpers for the conformance tests (not a test itself: ctest runs
only test_*.py).

The reference for every number nanaudit reports is numpy computing in
float64 on the array that the official safetensors package reads
(safetensors.deserialize, torch-free; BF16/F8 are viewed with ml_dtypes):

  - counts (nan, pos_inf, neg_inf, zeros, subnormal, finite) exact;
    subnormal means 0 < |x| < smallest normal of the tensor's own dtype
    (ml_dtypes.finfo), zeros are x == 0 (integer 0, BOOL false);
  - min, max, abs_max exact, over finite values;
  - mean and std (population, ddof=0, numpy's default) over finite values,
    |delta| <= 1e-12 * (|mean| + std) (../../../shared/DESIGN.md);
    std exactly 0 when max == min;
  - z-score outliers: finite x with |x - mean| > K*std (strict), none when
    std == 0; locations are the first N row-major multi-indices;
  - nan_locations / inf_locations (+Inf and -Inf together): the same.

The JSON keys are the contract of issue 2, section 6.
"""
import glob
import json
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
from safetensors import deserialize

# safetensors dtype name -> numpy dtype of the stored element.
ST_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "BF16": ml_dtypes.bfloat16,
    "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2,
    "F8_E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "F8_E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64,
    "U8": np.uint8, "U16": np.uint16, "U32": np.uint32, "U64": np.uint64,
    "BOOL": np.bool_, "C64": np.complex64,
}
if hasattr(ml_dtypes, "float8_e8m0fnu"):
    ST_DTYPES["F8_E8M0"] = ml_dtypes.float8_e8m0fnu

REL_TOL = 1e-12          # DESIGN.md: |delta| <= 1e-12 * (|mean| + std)
BORDERLINE = 1e-9        # outlier margin (in std) below which a count is unstable
COUNT_KEYS = ("elements", "nan", "pos_inf", "neg_inf", "zeros", "subnormal", "finite")
EXACT_KEYS = ("min", "max", "abs_max")


class Mismatch(Exception):
    """nanaudit disagrees with the reference (message says where)."""


def nanaudit_path():
    """$NANAUDIT (set by ctest), else the newest build*/nanaudit."""
    exe = os.environ.get("NANAUDIT")
    if exe:
        return exe
    src = os.environ.get("NA_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
    found = sorted(glob.glob(os.path.join(src, "build*", "nanaudit")), key=os.path.getmtime)
    if not found:
        sys.exit("FAIL: no nanaudit binary: set $NANAUDIT or build into build*/")
    return found[-1]


def scan(paths, *args):
    """Run `nanaudit scan --format json ARGS PATHS`; return (exit code, JSON)."""
    cmd = [nanaudit_path(), "scan", "--format", "json", *args, *paths]
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        raise Mismatch(f"{' '.join(cmd)}: stdout is not JSON ({e}); exit {p.returncode};"
                       f" stderr: {p.stderr.decode(errors='replace')[:300]}")
    return p.returncode, doc


def header_order(path):
    """Tensor names in storage order (data_offsets), from the raw header."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        hdr = json.loads(f.read(n))
    hdr.pop("__metadata__", None)
    return [k for k, _ in sorted(hdr.items(), key=lambda kv: tuple(kv[1]["data_offsets"]))]


def read_reference(path):
    """[(name, dtype name, ndarray)] as the reference loader reads the file;
    a C64 tensor becomes NAME.real and NAME.imag (F32), as DESIGN.md says."""
    with open(path, "rb") as f:
        entries = deserialize(f.read())
    out = []
    for name, info in entries:
        dt = info["dtype"]
        if dt not in ST_DTYPES:
            raise Mismatch(f"{path}: tensor {name!r}: dtype {dt} has no numpy reference here")
        arr = np.frombuffer(bytes(info["data"]), dtype=ST_DTYPES[dt]).reshape(info["shape"])
        if dt == "C64":
            out.append((name + ".real", "F32", arr.real.copy(order="C")))
            out.append((name + ".imag", "F32", arr.imag.copy(order="C")))
        else:
            out.append((name, dt, arr))
    return out


def _locs(mask, shape, n):
    """First n row-major multi-indices where mask (flat) is true."""
    flat = np.flatnonzero(mask)[:n]
    return [[int(i) for i in np.unravel_index(int(j), shape)] for j in flat]


def reference_stats(arr, k, max_loc):
    """Expected JSON values for one tensor (see the module docstring)."""
    with np.errstate(invalid="ignore"):  # ml_dtypes warns when casting NaN
        x = arr.astype(np.float64).reshape(-1)
    fin = np.isfinite(x)
    f = x[fin]
    e = {"shape": list(arr.shape), "elements": int(x.size),
         "nan": int(np.isnan(x).sum()), "pos_inf": int((x == np.inf).sum()),
         "neg_inf": int((x == -np.inf).sum()), "finite": int(f.size),
         "zeros": int((f == 0).sum()), "subnormal": 0}
    if arr.dtype.kind in "fV":  # numpy floats; ml_dtypes types have kind 'V'
        tiny = float(ml_dtypes.finfo(arr.dtype).smallest_normal)
        e["subnormal"] = int(((f != 0) & (np.abs(f) < tiny)).sum())
    e["nan_locations"] = _locs(np.isnan(x), arr.shape, max_loc)
    e["inf_locations"] = _locs(np.isinf(x), arr.shape, max_loc)
    e["outlier_count"], e["outlier_locations"], e["margin"] = 0, [], np.inf
    if f.size == 0:
        for key in EXACT_KEYS + ("mean", "std"):
            e[key] = None
        return e
    e["min"], e["max"] = float(f.min()), float(f.max())
    e["abs_max"] = float(np.abs(f).max())
    e["mean"] = float(f.mean())
    e["std"] = 0.0 if e["min"] == e["max"] else float(f.std())
    if k > 0 and e["std"] > 0:
        with np.errstate(invalid="ignore"):  # NaN/Inf rows are masked by fin
            dev = np.abs(x - e["mean"])
            out = fin & (dev > k * e["std"])
        e["outlier_count"] = int(out.sum())
        e["outlier_locations"] = _locs(out, arr.shape, max_loc)
        e["margin"] = float(np.min(np.abs(dev[fin] - k * e["std"])) / e["std"])
    return e


def _close(got, exp, scale):
    return abs(got - exp) <= REL_TOL * scale


def compare_tensor(got, dtype, exp, k, where, check_outliers=True):
    """Raise Mismatch on the first key where got (a files[].tensors[] entry)
    differs from exp (reference_stats)."""
    def need(cond, what):
        if not cond:
            raise Mismatch(f"{where}: {what}")
    need(got.get("status") == "ok", f"status {got.get('status')!r} ({got.get('reason')})")
    need(got.get("dtype") == dtype, f"dtype {got.get('dtype')!r}, expected {dtype}")
    need(got.get("shape") == exp["shape"], f"shape {got.get('shape')}, expected {exp['shape']}")
    for key in COUNT_KEYS:
        need(got.get(key) == exp[key], f"{key} {got.get(key)}, numpy {exp[key]}")
    for key in EXACT_KEYS:
        g = got.get(key)
        need((g is None) == (exp[key] is None) and (g is None or float(g) == exp[key]),
             f"{key} {g!r}, numpy {exp[key]!r} (must be exact)")
    for key in ("mean", "std"):
        g = got.get(key)
        need((g is None) == (exp[key] is None), f"{key} {g!r}, numpy {exp[key]!r}")
        if g is not None:
            need(_close(float(g), exp[key], abs(exp["mean"]) + exp["std"]),
                 f"{key} {float(g)!r}, numpy {exp[key]!r}: |delta| "
                 f"{abs(float(g) - exp[key]):.3g} > 1e-12*(|mean|+std)")
    if exp["std"] is not None and exp["std"] == 0.0:
        need(float(got["std"]) == 0.0, f"std {got['std']!r}: a constant tensor has std exactly 0")
    for key in ("nan_locations", "inf_locations"):
        need(got.get(key) == exp[key], f"{key} {got.get(key)}, expected {exp[key]}")
    o = got.get("outliers") or {}
    need(o.get("method") == "zscore", f"outliers.method {o.get('method')!r}, expected 'zscore'")
    need(float(o.get("threshold", -1)) == k, f"outliers.threshold {o.get('threshold')!r}, expected {k}")
    if check_outliers:
        need(o.get("count") == exp["outlier_count"],
             f"outliers.count {o.get('count')}, numpy {exp['outlier_count']}")
        need(o.get("locations") == exp["outlier_locations"],
             f"outliers.locations {o.get('locations')}, expected {exp['outlier_locations']}")
    _compare_findings(got, exp, need, check_outliers)


def _compare_findings(got, exp, need, check_outliers):
    """The count findings of DESIGN.md that a default scan can raise."""
    want = {kind: exp[kind] for kind in ("nan", "pos_inf", "neg_inf", "subnormal") if exp[kind]}
    if check_outliers and exp["outlier_count"]:
        want["outliers"] = exp["outlier_count"]
    if exp["elements"] > 0 and exp["zeros"] == exp["elements"]:
        want["zero_tensor"] = None
    have = {}
    for fd in got.get("findings") or []:
        have[fd.get("kind")] = fd.get("count")
    if not check_outliers:
        have.pop("outliers", None)
    for kind, count in want.items():
        need(kind in have, f"findings lack {kind!r} (have {sorted(have)})")
        if count is not None:
            need(have[kind] == count, f"finding {kind!r} count {have[kind]}, expected {count}")
    extra = set(have) - set(want)
    need(not extra, f"unexpected findings {sorted(extra)}")


def describe(name, dtype, exp):
    """One line saying what was checked for a tensor."""
    s = (f"{name} {dtype}{exp['shape']}: nan={exp['nan']} +inf={exp['pos_inf']} "
         f"-inf={exp['neg_inf']} zeros={exp['zeros']} subnormal={exp['subnormal']} "
         f"outliers={exp['outlier_count']}")
    if exp["mean"] is not None:
        s += f" min={exp['min']:.6g} max={exp['max']:.6g} mean={exp['mean']:.6g} std={exp['std']:.6g}"
    return s


def run_main(fn):
    """Run a test body; print FAIL and exit 1 on the first mismatch."""
    try:
        fn()
    except Mismatch as e:
        print(f"FAIL: {e}", flush=True)
        sys.exit(1)
    print("PASS", flush=True)
