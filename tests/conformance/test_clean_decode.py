"""Every dtype clean decodes and writes back, through both of its read paths
(rows of one value: run_tiles' blocks; wider rows: the chunker), against
numpy / ml_dtypes. lib/clean.c decode_run has a loop per dtype for
contiguous little-endian data (na_decode1's per-element dispatch was 65 %
of a clean of I8 data); each must give na_decode1's value exactly.

 - identity: `--nonfinite keep` and no other step writes every value back
   as it was (ints, F16/BF16 with +-0, subnormals, +-Inf,
   the canonical NaN): output bytes == input bytes;
 - minmax: the per-feature (x - min) / (max - min) over finite values,
   in float64, rounded to the output dtype (F32 for integers and BOOL, the
   input's for F16/BF16), equal exactly;
 - big-endian F16 and I32 (the element-by-element path) give the same
   values as their little-endian twins.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_clean_decode.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402

EXE = nacheck.nanaudit_path()
TMP = tempfile.mkdtemp(prefix="nacleandec.")
FAILS = []
RNG = np.random.default_rng(11)


def check(name, cond, msg=""):
    if not cond:
        FAILS.append(f"{name}: {msg}")
        print(f"FAIL {name}: {msg}")


def clean(name, dname, shape, data, *opts):
    src, out = os.path.join(TMP, name + ".in"), os.path.join(TMP, name + ".out")
    data.tofile(src)
    p = subprocess.run([EXE, "clean", "-q", "--dtype", dname, "--shape", shape, src, "-o", out,
                        "--force", *opts], capture_output=True, text=True)
    check(f"{name} {opts}: exit", p.returncode in (0, 1), f"{p.returncode}: {p.stderr}")
    return out


def values(dt, n):
    """n values of dt covering its range and, for floats, its specials."""
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        if info.bits == 64:  # clean refuses |x| >= 2^53 (double arithmetic)
            lo = -(2 ** 53) + 1 if info.min < 0 else 0
            v = RNG.integers(lo, 2 ** 53 - 1, n, dtype=dt, endpoint=True)
            v[:2] = [lo, 2 ** 53 - 1]
            return v
        v = RNG.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        v[:2] = [info.min, info.max]
        return v
    f = RNG.normal(0, 3, n).astype(dt)
    fi = ml_dtypes.finfo(dt)
    f[:6] = np.array([0.0, -0.0, float(fi.smallest_subnormal), -float(fi.max), float(fi.max),
                      float(fi.tiny)], np.float64).astype(dt)
    return f


DTYPES = [("I8", np.int8), ("U8", np.uint8), ("I16", np.int16),
          ("U16", np.uint16), ("I32", np.int32), ("U32", np.uint32), ("I64", np.int64),
          ("U64", np.uint64), ("F16", np.float16), ("BF16", ml_dtypes.bfloat16)]


def test_identity():
    for dname, dt in DTYPES:
        for shape in ("3000", "1000x3"):
            x = values(dt, 3000)
            if np.dtype(dt).kind == "V" or dname in ("F16", "BF16"):
                x[10:13] = np.array([np.inf, -np.inf, np.nan], np.float32).astype(dt)
            out = clean(f"id-{dname}-{shape}", dname, shape, x, "--nonfinite", "keep")
            check(f"identity {dname} {shape}", open(out, "rb").read() == x.tobytes())


def test_minmax():
    for dname, dt in DTYPES:
        x = values(dt, 3000)
        odt = dt if dname in ("F16", "BF16") else np.float32
        for shape, w in (("3000", 1), ("1000x3", 3)):
            out = clean(f"mm-{dname}-{shape}", dname, shape, x, "--normalize", "minmax",
                        "--nonfinite", "keep")
            X = x.astype(np.float64).reshape(-1, w)
            want = ((X - X.min(0)) / (X.max(0) - X.min(0))).astype(odt)
            got = np.fromfile(out, dtype=odt).reshape(-1, w)
            check(f"minmax {dname} {shape}", np.array_equal(got.view(np.uint8), want.view(np.uint8)),
                  f"{np.sum(got != want)} differ")


def test_big_endian():
    for dname, le, be in (("F16", "<f2", ">f2"), ("I32", "<i4", ">i4")):
        x = values(np.dtype(le).type, 999)
        a = clean(f"le-{dname}", dname, "333x3", x.astype(le), "--normalize", "zscore")
        src, b = os.path.join(TMP, f"be-{dname}.in"), os.path.join(TMP, f"be-{dname}.out")
        x.astype(be).tofile(src)
        p = subprocess.run([EXE, "clean", "-q", "--dtype", dname, "--endian", "big", "--shape",
                            "333x3", src, "-o", b, "--normalize", "zscore", "--force"],
                           capture_output=True, text=True)
        check(f"big-endian {dname}: exit", p.returncode == 0, p.stderr)
        oa = np.fromfile(a, dtype="<f2" if dname == "F16" else "<f4")
        # raw output keeps the input's byte order (clean_raw_endian.sh)
        ob = np.fromfile(b, dtype=">f2" if dname == "F16" else ">f4")
        check(f"big-endian {dname} == little-endian", np.array_equal(oa, ob), "")


def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    try:
        for t in tests:
            try:
                t()
            except Exception as e:  # noqa: BLE001 - any error is a failure
                FAILS.append(f"{t.__name__}: {e}")
                print(f"FAIL {t.__name__}: {e}")
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        return 1
    print("PASS test_clean_decode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
