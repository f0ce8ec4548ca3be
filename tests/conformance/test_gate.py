#!/usr/bin/env python3
"""CI-gate findings (issue 5) against numpy / ml_dtypes references.

  - cast_overflow / cast_underflow for --cast-check F16, BF16, F8_E4M3,
    F8_E5M2: reference = the cast itself (numpy for F16, ml_dtypes for the
    others) of the float32 data: overflow = finite x whose cast is Inf or
    NaN, underflow = x != 0 whose cast is 0. The issue's three examples
    exactly, then values around every threshold (nextafter on both sides)
    in F32, F16 and BF16 sources, plus F64 -> F16 (numpy casts float64 to
    float16 directly, with one rounding);
  - range (--range LO:HI, open sides too), max_abs (--max-abs X) and
    negative (names *running_var* / *exp_avg_sq*): numpy counts of the
    finite values, in F32, F64, BF16 and I32 tensors over several blocks;
  - fails: negative is reported by default but fails only in --fail-on;
    --max-nan-fraction F tolerates count <= F * elements (exit 0) and
    fails above it (exit 1).
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_gate.py
"""
import os
import sys
import tempfile

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nacheck  # noqa: E402

TARGETS = {"F16": np.float16, "BF16": ml_dtypes.bfloat16,
           "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2}
# midpoints of DESIGN.md "Cast checks" (overflow, underflow = S/2)
LIMITS = {"F16": (65520.0, 2.0**-25), "BF16": ((2 - 2**-8) * 2.0**127, 2.0**-134),
          "F8_E4M3": (464.0, 2.0**-10), "F8_E5M2": (61440.0, 2.0**-17)}
FAILS = 0


def check(what, got, want):
    global FAILS
    if got != want:
        FAILS += 1
        print(f"FAIL {what}: got {got}, want {want}")


def findings(tensor):
    return {f["kind"]: f for f in tensor["findings"]}


def scan_one(tmp, name, arr, *args, tensor="x"):
    path = os.path.join(tmp, name + ".safetensors")
    save_file({tensor: np.ascontiguousarray(arr)}, path)
    rc, j = nacheck.scan([path], *args)
    return rc, j["files"][0]["tensors"][0]


def ref_cast(x, target):
    """(overflow, underflow) counts of casting float array x to target."""
    with np.errstate(over="ignore", invalid="ignore"):
        x64 = x.astype(np.float64)
        y = x.astype(TARGETS[target]).astype(np.float64)
    fin = np.isfinite(x64)
    over = int(np.sum(fin & ~np.isfinite(y)))
    under = int(np.sum(fin & (x64 != 0) & (y == 0)))
    return over, under


def cast_case(tmp, label, x, target, want=None):
    rc, t = scan_one(tmp, label, x, "--cast-check", target, "--zscore", "0",
                     "--fail-on", "cast_overflow")
    f = findings(t)
    got = (f.get("cast_overflow", {}).get("count", 0),
           f.get("cast_underflow", {}).get("count", 0))
    ref = ref_cast(x, target)
    check(f"{label} vs reference", got, ref)
    if want is not None:
        check(f"{label} issue example", got, want)
    check(f"{label} exit (fails on cast_overflow only)", rc, 1 if got[0] else 0)


def near(v):
    """v and its float32 neighbours, positive and negative."""
    f = np.float32(v)
    out = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(0))]
    return out + [-a for a in out]


def test_cast(tmp):
    f32 = np.float32
    cast_case(tmp, "e4m3", np.array([448, 464, 465, 1000, -1000], f32), "F8_E4M3", (3, 0))
    cast_case(tmp, "f16u", np.array([1e-5, 6e-8, 2.9e-8, 1e-9], f32), "F16", (0, 2))
    cast_case(tmp, "f16o", np.array([65504, 65519, 65520, 70000], f32), "F16", (2, 0))
    rng = np.random.default_rng(5)
    for target, (ovf, unf) in LIMITS.items():
        vals = near(ovf) + near(unf) + [f32(0), f32(-0.0), f32(np.nan), f32(np.inf),
                                          f32(-np.inf), f32(1.0)]
        edge = np.array(vals, f32)
        cast_case(tmp, "edge_" + target, edge, target)
        wide = (rng.standard_normal(50000) * 10.0 ** rng.integers(-45, 39, 50000))
        with np.errstate(over="ignore"):
            x = np.concatenate([edge, wide.astype(f32)])
        cast_case(tmp, "wide_" + target, x, target)
        # narrower sources: every F16 and every BF16 bit pattern
        for src in (np.float16, ml_dtypes.bfloat16):
            allv = np.arange(65536, dtype=np.uint16).view(src)
            cast_case(tmp, f"all_{np.dtype(src).name}_{target}", allv, target)
    # F64 -> F16: numpy casts double to half with a single rounding
    d = np.array([65520.0, np.nextafter(65520.0, 0), 2.0**-25,
                  np.nextafter(2.0**-25, 1), -2.0**-25, 1e300, -1e-300], np.float64)
    cast_case(tmp, "f64_f16", d, "F16")


def test_range_abs_negative(tmp):
    rng = np.random.default_rng(7)
    n = 70000  # several 16 Ki blocks
    base = rng.standard_normal(n) * 100
    base[::997] = np.nan
    base[5::1013] = np.inf
    for dt, name in ((np.float32, "F32"), (np.float64, "F64"), (ml_dtypes.bfloat16, "BF16"),
                     (np.int32, "I32")):
        x = base if name != "I32" else np.nan_to_num(base, nan=0, posinf=0).astype(np.int32)
        x = x.astype(dt)
        ref = x.astype(np.float64)
        fin = ref[np.isfinite(ref)]
        for lo, hi, arg in ((-50.0, 50.0, "-50:50"), (0.0, None, "0:"), (None, 12.5, ":12.5")):
            rc, t = scan_one(tmp, f"range_{name}", x, "--range", arg, "--zscore", "0")
            want = int(np.sum(fin < lo)) if lo is not None else 0
            want += int(np.sum(fin > hi)) if hi is not None else 0
            check(f"range {arg} {name}", findings(t).get("range", {}).get("count", 0), want)
            check(f"range {arg} {name} exit", rc, 1 if name != "I32" else 0)  # +Inf/NaN fail
        rc, t = scan_one(tmp, f"abs_{name}", x, "--max-abs", "150", "--fail-on", "max_abs")
        want = int(np.sum(np.abs(fin) > 150))
        check(f"max_abs {name}", findings(t).get("max_abs", {}).get("count", 0), want)
        check(f"max_abs {name} exit", rc, 1 if want else 0)
        for tname in ("bn.running_var", "state.0.exp_avg_sq", "weight"):
            rc, t = scan_one(tmp, f"neg_{name}", x, "--fail-on", "none", tensor=tname)
            want = int(np.sum(fin < 0)) if tname != "weight" else 0
            check(f"negative {tname} {name}", findings(t).get("negative", {}).get("count", 0),
                  want)
            check(f"negative {tname} {name} reported, not failing", rc, 0)
    # -0.0 is not negative; the rule fails only when asked
    x = np.array([0.0, -0.0, 1.0, -2.0, -3.0], np.float32)
    rc, t = scan_one(tmp, "negzero", x, tensor="layer1.bn.running_var")
    check("negative -0", findings(t)["negative"]["count"], 2)
    check("negative not in default fail-on", (rc, findings(t)["negative"]["fails"]), (0, False))
    rc, t = scan_one(tmp, "negzero", x, "--fail-on", "nan,inf,negative",
                     tensor="layer1.bn.running_var")
    check("negative in fail-on", (rc, findings(t)["negative"]["fails"]), (1, True))


def test_tolerance(tmp):
    x = np.ones(100, np.float32)
    x[[3, 50]] = np.nan
    rc, t = scan_one(tmp, "tol", x, "--max-nan-fraction", "0.02")
    check("2/100 NaN within 0.02", (rc, findings(t)["nan"]["fails"]), (0, False))
    rc, t = scan_one(tmp, "tol", x, "--max-nan-fraction", "0.019")
    check("2/100 NaN above 0.019", (rc, findings(t)["nan"]["fails"]), (1, True))
    x[7] = np.inf
    x[8] = -np.inf
    rc, t = scan_one(tmp, "tol", x, "--max-nan-fraction", "0.5", "--max-inf-fraction", "0.02")
    check("+Inf and -Inf summed: 2/100 within 0.02", rc, 0)
    rc, t = scan_one(tmp, "tol", x, "--max-nan-fraction", "0.5", "--max-inf-fraction", "0.015")
    check("+Inf and -Inf summed: 2/100 above 0.015", rc, 1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_cast(tmp)
        test_range_abs_negative(tmp)
        test_tolerance(tmp)
    if FAILS:
        print(f"{FAILS} failure(s)")
        return 1
    print("PASS test_gate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
