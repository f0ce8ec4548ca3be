#!/usr/bin/env python3
"""Generate the dtype reference tables in tests/data/dtype/.

tests/unit/test_dtype.c compares nanaudit's decoder (na_decode1 and the
F16/BF16 helpers of lib/decode.h) with these tables, so the reference is
numpy + ml_dtypes, not our own reading of the specs.

Run from anywhere with the project's venv python:
    .venv/bin/python tests/tools/gen_dtype_tables.py [OUTDIR]
    .venv/bin/python tests/tools/gen_dtype_tables.py --check [OUTDIR]
The output is deterministic (no timestamps, fixed random seed); commit it.
--check regenerates in memory and exits 1 when a committed file differs.

Files:
  <DTYPE>.tbl   for every 8- and 16-bit float dtype: a text header of '#'
                lines ending with a line '%%', then one 5-byte record per
                code, codes 0 .. 2^bits-1 in order:
                  uint32 LE  binary32 bits of the decoded value
                             (x.astype(np.float32); every value of these
                             formats is exactly a binary32, checked below)
                  uint8      class, as na_class_t: 0 normal, 1 zero,
                             2 subnormal, 3 NaN, 4 +Inf, 5 -Inf
                Class rules, from numpy only: isnan, isposinf, isneginf;
                zero when x == 0; subnormal when x != 0 and
                |x| < ml_dtypes.finfo(dtype).smallest_normal.
  int_edges.txt integer conversions: lines "DTYPE DECIMAL HEXDOUBLE" with
                HEXDOUBLE = float.hex(np.array(DECIMAL, dtype).astype(
                np.float64)), i.e. numpy's rounding of big 64-bit integers.
"""
import os
import sys

import ml_dtypes
import numpy as np

FLOATS = [
    # (safetensors name, numpy dtype, bits)
    ("F16", np.dtype(np.float16), 16),
    ("BF16", np.dtype(ml_dtypes.bfloat16), 16),
    ("F8_E4M3", np.dtype(ml_dtypes.float8_e4m3fn), 8),
    ("F8_E5M2", np.dtype(ml_dtypes.float8_e5m2), 8),
    ("F8_E8M0", np.dtype(ml_dtypes.float8_e8m0fnu), 8),
    ("F8_E4M3FNUZ", np.dtype(ml_dtypes.float8_e4m3fnuz), 8),
    ("F8_E5M2FNUZ", np.dtype(ml_dtypes.float8_e5m2fnuz), 8),
]

INTS = {
    "U8": np.uint8, "I8": np.int8, "U16": np.uint16, "I16": np.int16,
    "U32": np.uint32, "I32": np.int32, "U64": np.uint64, "I64": np.int64,
}

# na_class_t values (lib/nanaudit.h)
NORMAL, ZERO, SUBNORMAL, NAN, POS_INF, NEG_INF = range(6)


def classify(x, smallest_normal):
    """na_class_t of each float64 value, from numpy predicates only."""
    cls = np.full(x.shape, NORMAL, dtype=np.uint8)
    tiny = (x != 0) & (np.abs(x) < smallest_normal)
    cls[tiny] = SUBNORMAL
    cls[x == 0] = ZERO
    cls[np.isposinf(x)] = POS_INF
    cls[np.isneginf(x)] = NEG_INF
    cls[np.isnan(x)] = NAN
    return cls


def float_table(name, dt, bits):
    codes = np.arange(1 << bits, dtype=np.uint16 if bits == 16 else np.uint8)
    vals = codes.view(dt)
    with np.errstate(invalid="ignore"):  # casting signalling NaNs warns
        f32 = vals.astype(np.float32)
        f64 = vals.astype(np.float64)
    # binary32 holds every value exactly: widening it again changes nothing
    with np.errstate(invalid="ignore"):
        same = (f32.astype(np.float64) == f64) | (np.isnan(f32) & np.isnan(f64))
    assert same.all(), name
    smallest = float(ml_dtypes.finfo(dt).smallest_normal)
    cls = classify(f64, smallest)
    rec = np.zeros(len(codes), dtype=[("v", "<u4"), ("c", "u1")])
    rec["v"] = f32.view(np.uint32)
    rec["c"] = cls
    counts = {n: int((cls == i).sum()) for i, n in
              enumerate(["normal", "zero", "subnormal", "nan", "pos_inf", "neg_inf"])}
    header = (
        "# nanaudit dtype reference table; binary records follow the '%%' line\n"
        f"# dtype: {name} = numpy/ml_dtypes {dt.name}\n"
        f"# made by: tests/tools/gen_dtype_tables.py, numpy {np.__version__}, "
        f"ml_dtypes {ml_dtypes.__version__}\n"
        f"# codes: {len(codes)}; record: uint32 LE binary32 bits of "
        "x.astype(float32), uint8 na_class_t\n"
        f"# smallest_normal: {smallest!r}\n"
        f"# classes: {counts}\n"
        "%%\n"
    )
    return header.encode("ascii") + rec.tobytes()


def int_lines():
    lines = []
    rng = np.random.default_rng(20261129)
    for name, t in INTS.items():
        info = np.iinfo(t)
        vals = {info.min, info.max, 0, 1, info.max - 1}
        if info.min < 0:
            vals |= {-1, info.min + 1}
        if info.bits == 64:
            # around 2^53, where doubles start to skip integers, ties included
            for base in (1 << 53, 1 << 54, 1 << 62, info.max):
                for d in range(-3, 4):
                    if info.min <= base + d <= info.max:
                        vals.add(base + d)
                    if info.min <= -base - d <= info.max:
                        vals.add(-base - d)
            vals |= {int(v) for v in rng.integers(info.min, info.max, 64,
                                                  dtype=t, endpoint=True)}
        for v in sorted(vals):
            d = np.array(v, dtype=t).astype(np.float64)
            lines.append(f"{name} {v} {float(d).hex()}\n")
    return ("# nanaudit integer -> float64 reference: DTYPE DECIMAL "
            "float.hex(np.array(DECIMAL, DTYPE).astype(np.float64))\n"
            f"# made by: tests/tools/gen_dtype_tables.py, numpy {np.__version__}\n"
            + "".join(lines))


def main():
    """Write the tables, or with --check compare them with the files there
    (exit 1 on any difference: a new numpy/ml_dtypes changed a result)."""
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    here = os.path.dirname(os.path.abspath(__file__))
    out = args[0] if args else os.path.join(here, "..", "data", "dtype")
    files = {name + ".tbl": float_table(name, dt, bits) for name, dt, bits in FLOATS}
    files["int_edges.txt"] = int_lines().encode("ascii")
    if check:
        def body(b):  # ignore the '# made by' version line, compare the rest
            return b"\n".join(l for l in b.split(b"\n") if not l.startswith(b"# made by"))
        bad = []
        for fname, data in files.items():
            try:
                with open(os.path.join(out, fname), "rb") as f:
                    if body(f.read()) != body(data):
                        bad.append(fname)
            except OSError:
                bad.append(fname)
        for fname in bad:
            print(f"{fname}: differs from numpy {np.__version__} / ml_dtypes "
                  f"{ml_dtypes.__version__}", file=sys.stderr)
        return 1 if bad else 0
    os.makedirs(out, exist_ok=True)
    for fname, data in files.items():
        with open(os.path.join(out, fname), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
