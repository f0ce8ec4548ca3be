#!/usr/bin/env python3
"""`nanaudit clean` on NumPy .npy input writes .npy (issue 4,
formats/npy_write.c), checked with np.load against the numpy reference of
test_clean.py (same steps, same tolerances: 1e-12 relative for F64, one
F32 ulp):

  - --nonfinite drop, and --zscore 3 --normalize minmax, on 1-D and 2-D
    F32/F64 arrays: np.load reads the output with the expected dtype,
    shape and values; the header is byte for byte the one np.save writes
    for the same array (64-byte alignment, version 1.0, growth spaces);
  - a big-endian input ('>f8', '>f4'): written little-endian, same values;
  - a Fortran-order input: written in C order (fortran_order False) with
    the values of the logical array;
  - a structured (record) .npy (one tensor per field) is refused with a
    one-line message, exit 3, and nothing appears under the output name
    nor as a temporary file.
Version 2.0 headers (over 64 KiB) need more dimensions than numpy allows
(64), so they are not reachable from a .npy input.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_clean_npy.py
"""
import io
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_clean as tc  # noqa: E402  (its numpy reference and comparison)

EXE = tc.EXE
TMP = tc.TMP


def header_of(b):
    """Magic through the '\\n' that ends an .npy header."""
    return b[:b.index(b"\n") + 1]


def npy_case(tag, x, opts, stored=None, **ref):
    """Clean x saved as .npy (dtype `stored`, default x's) and compare."""
    src = os.path.join(TMP, f"{tag}.npy")
    out = os.path.join(TMP, f"{tag}.out.npy")
    np.save(src, x if stored is None else x.astype(stored))
    p = subprocess.run([EXE, "clean", src, "-o", out, "--max-drop-fraction", "1"] + opts,
                       capture_output=True, text=True)
    tc.check(tag + " exit", p.returncode == 0, f"{p.returncode} {p.stderr}")
    if not os.path.exists(out):
        tc.check(tag, False, "no output")
        return
    got = np.load(out)
    dt = np.dtype(x.dtype if stored is None else stored).newbyteorder("=")
    tc.check(tag + " dtype", got.dtype == dt.newbyteorder("<"), str(got.dtype))
    want, _, _ = tc.reference(x.astype(dt), True, **ref)
    want = want.reshape((want.shape[0],) + x.shape[1:])
    tc.check(tag + " shape", got.shape == want.shape, f"{got.shape} != {want.shape}")
    tc.close(got, want, dt.type, tag)
    buf = io.BytesIO()
    np.save(buf, got)
    data = open(out, "rb").read()
    tc.check(tag + " header", header_of(data) == header_of(buf.getvalue()),
             f"{header_of(data)!r} != {header_of(buf.getvalue())!r}")
    tc.check(tag + " aligned", len(header_of(data)) % 64 == 0, str(len(header_of(data))))
    print(f"ok {tag}: {got.shape} {got.dtype}")


def main():
    rng = np.random.default_rng(7)
    one = rng.normal(3.0, 2.0, 1500)
    one[[7, 300, 1499]] = [40.0, -35.0, 50.0]
    one[[11, 500]] = [np.nan, np.inf]
    two = rng.normal(0, 1, (500, 4)) * [1, 10, 0.1, 5] + [0, 100, -3, 7]
    two[[5, 70, 300], [0, 1, 3]] = [30.0, 300.0, 100.0]
    two[[9, 99], [2, 3]] = [np.nan, -np.inf]
    cases = [(["--nonfinite", "drop"], dict(nonfinite="drop")),
             (["--zscore", "3", "--normalize", "minmax"],
              dict(method="zscore", k=3.0, normalize="minmax"))]
    for dt in (np.float64, np.float32):
        for data, dim in ((one, "1d"), (two, "2d")):
            for i, (opts, ref) in enumerate(cases):
                npy_case(f"npy-{dim}-{np.dtype(dt).name}-{i}", data.astype(dt), opts, **ref)
    # big-endian input: the values, written little-endian
    for st in (">f8", ">f4"):
        npy_case(f"npy-be-{st[1:]}", two, ["--zscore", "3", "--normalize", "minmax"], stored=st,
                 method="zscore", k=3.0, normalize="minmax")
    # Fortran order: the logical array, written C order
    src = os.path.join(TMP, "fortran.npy")
    out = os.path.join(TMP, "fortran.out.npy")
    np.save(src, np.asfortranarray(two))
    p = subprocess.run([EXE, "clean", src, "-o", out, "--zscore", "3", "--normalize", "minmax",
                        "--max-drop-fraction", "1"], capture_output=True, text=True)
    tc.check("fortran exit", p.returncode == 0, p.stderr)
    got = np.load(out)
    want, _, _ = tc.reference(two, True, method="zscore", k=3.0, normalize="minmax")
    tc.check("fortran order", b"'fortran_order': False" in open(out, "rb").read(128), "")
    tc.check("fortran shape", got.shape == want.shape, str(got.shape))
    tc.close(got, want, np.float64, "fortran")
    # a structured array: one tensor per field, which clean copies whole
    # (tests/cli/clean_npy_parts.sh); the output loads as the same records
    rec = np.zeros(10, dtype=[("a", "<f4"), ("b", "<f8")])
    rec["a"] = np.arange(10)
    src = os.path.join(TMP, "rec.npy")
    out = os.path.join(TMP, "rec.out.npy")
    np.save(src, rec)
    p = subprocess.run([EXE, "clean", src, "-o", out, "--nonfinite", "zero"],
                       capture_output=True, text=True)
    tc.check("structured exit", p.returncode == 0, f"{p.returncode} {p.stderr}")
    got = np.load(out) if os.path.exists(out) else None
    tc.check("structured copied", got is not None and got.dtype == rec.dtype and
             np.array_equal(got, rec), repr(got))
    tc.check("structured no temporary file",
             not any(n.startswith(".nanaudit-tmp-") for n in os.listdir(TMP)), "left a file")
    if tc.FAILS:
        print(f"{len(tc.FAILS)} failure(s)")
        return 1
    print("all clean .npy checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
