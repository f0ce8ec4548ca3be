#!/usr/bin/env python3
"""Sparse HDF5 datasets against h5py + numpy (issue 3, declared-huge
datasets): chunked datasets with a few chunks written out of many, whose
unallocated chunks nanaudit counts as copies of the fill value without
reading them (formats/hdf5.c h5_fill, lib/scan_fill.c).

For each file written with h5py:
  - every tensor equals h5py + numpy (test_hdf5.check_file: counts exact,
    min/max exact, mean/std to 1e-12, outlier counts and locations, NaN/Inf
    locations as the first row-major indices);
  - the JSON is byte-identical to the path that reads every block
    (NANAUDIT_HDF5_READ_ALL=1) and the same for --threads 1 and 3.
Cases: fill value 0, a nonzero fill value, NaN and -Inf fill values (every
unallocated element counted, locations before and after written chunks),
fill time "never" and an undefined fill value (both read as 0, what h5py
shows), a _FillValue attribute equal to the fill value (counted missing),
2-D datasets with partially covered edge chunks, a fill value that is
itself a z-score outlier (pass 2 counts it arithmetically), more than
1024 chunks written (read as before), and the
--range / --max-abs / --cast-check interval counts over the fill value.

Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_hdf5_sparse.py
"""
import ctypes
import glob
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402
import test_hdf5  # noqa: E402
from nacheck import Mismatch  # noqa: E402


def raw_json(path, *args, env=None):
    """stdout bytes and exit code of `nanaudit scan --format json ARGS path`."""
    cmd = [nacheck.nanaudit_path(), "scan", "--format", "json", *args, path]
    p = subprocess.run(cmd, capture_output=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout


def same_as_reading(path, *args):
    """JSON of the fill-run path == JSON of reading every block, and the
    same for --threads 1 and 3."""
    rc, fast = raw_json(path, *args)
    for extra, env in (((), {"NANAUDIT_HDF5_READ_ALL": "1"}), (("--threads", "1"), None),
                       (("--threads", "3"), None)):
        rc2, other = raw_json(path, *args, *extra, env=env)
        if (rc2, other) != (rc, fast):
            raise Mismatch(f"{path} {' '.join(args + extra)} {env or ''}: JSON differs from "
                           f"the fill-run path (exit {rc2} vs {rc})")
    return rc


def undefined_fill(f, name, shape, chunks, ftype):
    """Create a chunked dataset whose fill value is undefined
    (H5Pset_fill_value with a NULL value; h5py has no high-level way),
    through the libhdf5 that h5py itself loaded."""
    libs = glob.glob(os.path.join(os.path.dirname(h5py.__file__), "..", "h5py.libs",
                                  "libhdf5-*.so*"))
    lib = ctypes.CDLL(libs[0]) if libs else ctypes.CDLL(None)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    if lib.H5Pset_fill_value(ctypes.c_int64(dcpl.id), ctypes.c_int64(h5py.h5t.NATIVE_DOUBLE.id),
                             None) < 0 or dcpl.fill_value_defined() != 0:
        raise Mismatch("cannot make an undefined fill value with h5py's libhdf5")
    space = h5py.h5s.create_simple(shape)
    h5py.h5d.create(f.id, name.encode(), ftype, space, dcpl=dcpl)


def never_fill(f, name, shape, chunks, ftype, value):
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    dcpl.set_fill_value(np.array(value))
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    space = h5py.h5s.create_simple(shape)
    h5py.h5d.create(f.id, name.encode(), ftype, space, dcpl=dcpl)


def write_cases(p):
    rng = np.random.default_rng(3)
    with h5py.File(p, "w") as f:
        # fill 0, 1-D, 3 of 123 chunks written, the last one partial
        d = f.create_dataset("zero", shape=(1_000_003,), chunks=(8192,), dtype="<f4",
                             fillvalue=0)
        d[40960:49152] = rng.standard_normal(8192)
        d[500_000:508_192] = rng.standard_normal(8192) + 3
        d[999_424:] = 5.0
        # nonzero fill, big-endian f8, 2-D with partial edge chunks
        d = f.create_dataset("nonzero", shape=(1000, 700), chunks=(64, 300), dtype=">f8",
                             fillvalue=2.5)
        d[0:64, 0:300] = rng.standard_normal((64, 300))
        d[960:1000, 600:700] = -1.0  # the corner edge chunk, partial both ways
        # NaN fill: NaN before and after the written chunk, counted exactly
        d = f.create_dataset("nanfill", shape=(400_000,), chunks=(16384,), dtype="<f4",
                             fillvalue=np.nan)
        d[163840:180224] = rng.standard_normal(16384)
        d = f.create_dataset("nanfill_late", shape=(300, 1000), chunks=(50, 1000),
                             dtype="<f2", fillvalue=np.nan)
        d[0:50] = rng.standard_normal((50, 1000)).astype("<f2")
        # -Inf fill: the first Inf locations follow the written chunk
        d = f.create_dataset("neginf", shape=(200_000,), chunks=(20000,), dtype="<f8",
                             fillvalue=-np.inf)
        d[0:20000] = rng.standard_normal(20000)
        # integers with a negative fill
        d = f.create_dataset("int16", shape=(600, 600), chunks=(100, 100), dtype="<i2",
                             fillvalue=-7)
        d[100:200, 300:400] = rng.integers(-100, 100, (100, 100))
        # CF _FillValue equal to the fill value: the unwritten part is missing
        d = f.create_dataset("cf", shape=(250_000,), chunks=(25000,), dtype="<f4",
                             fillvalue=-999.0)
        d[25000:50000] = rng.standard_normal(25000)
        d.attrs["_FillValue"] = np.float32(-999.0)
        # more than 1024 chunks written: no fill runs (the child lists up to
        # 1024 allocated chunks), every window is read, same numbers
        d = f.create_dataset("many", shape=(3000 * 512,), chunks=(512,), dtype="<f4",
                             fillvalue=-1.5)
        x = rng.standard_normal(3000 * 512).astype("<f4")
        for k in range(2400):
            if k % 3:
                d[k * 512:(k + 1) * 512] = x[k * 512:(k + 1) * 512]
        d = f.create_dataset("many_rows", shape=(4000, 33), chunks=(2, 33), dtype="<f8",
                             fillvalue=4.0)
        d[0:2200] = rng.standard_normal((2200, 33))
        d = f.create_dataset("many_tiles", shape=(400, 400), chunks=(10, 10), dtype="<i4",
                             fillvalue=9)
        d[0:275] = rng.integers(-50, 50, (275, 400))
        # a fill value that is an outlier: 1 of 100 chunks unwritten, fill
        # 1000 lies beyond mean +- 6 std; all 16384 of its elements count
        d = f.create_dataset("fill_outlier", shape=(100 * 16384,), chunks=(16384,),
                             dtype="<f4", fillvalue=1000.0)
        for k in range(100):
            if k != 37:
                d[k * 16384:(k + 1) * 16384] = rng.standard_normal(16384)


def check_zero_reads(p):
    """Fill time "never" and an undefined fill value: libhdf5 leaves the
    unwritten part of the buffer alone, nanaudit zeroes it first, so it
    reads as 0. h5py's own buffer is not zeroed, so the reference is built
    here: zeros with the written values in place."""
    rng = np.random.default_rng(4)
    written = rng.standard_normal(30000)
    with h5py.File(p, "w") as f:
        never_fill(f, "never", (500_000,), (10000,), h5py.h5t.IEEE_F32LE, 7.0)
        f["never"][10000:20000] = 1.5
        undefined_fill(f, "undefined", (300_000,), (30000,), h5py.h5t.IEEE_F64LE)
        f["undefined"][30000:60000] = written
    ref = {"/never": np.zeros(500_000, np.float32), "/undefined": np.zeros(300_000)}
    ref["/never"][10000:20000] = 1.5
    ref["/undefined"][30000:60000] = written
    rc, doc = nacheck.scan([p])
    for t in doc["files"][0]["tensors"]:
        exp = nacheck.reference_stats(ref[t["name"]], test_hdf5.K, test_hdf5.NLOC)
        nacheck.compare_tensor(t, test_hdf5.na_dtype(ref[t["name"]]), exp, test_hdf5.K,
                               f"{p}: {t['name']}")
    if [t["zeros"] for t in doc["files"][0]["tensors"]] != [490_000, 270_000]:
        raise Mismatch(f"{p}: zeros {[t['zeros'] for t in doc['files'][0]['tensors']]}")
    same_as_reading(p)


def check_flags(p):
    """--range, --max-abs, --cast-check counts over the fill value equal
    numpy's, and the same JSON as reading every block."""
    with h5py.File(p, "w") as f:
        d = f.create_dataset("x", shape=(500_000,), chunks=(20000,), dtype="<f4",
                             fillvalue=1e5)
        rng = np.random.default_rng(5)
        d[60000:80000] = rng.standard_normal(20000)
        d[480000:500000] = -rng.random(20000)
    with h5py.File(p, "r") as f:
        x = f["x"][()].astype(np.float64)
    want = {"range": int(((x < -0.5) | (x > 10)).sum()),
            "max_abs": int((np.abs(x) > 1000).sum()),
            "cast_overflow": int((np.abs(x) >= 65520).sum())}
    args = ("--range", "-0.5:10", "--max-abs", "1000", "--cast-check", "F16")
    rc, doc = nacheck.scan([p], *args)
    got = {fd["kind"]: fd["count"] for fd in doc["files"][0]["tensors"][0]["findings"]}
    for kind, n in want.items():
        if got.get(kind, 0) != n:
            raise Mismatch(f"{p}: {kind} {got.get(kind, 0)}, numpy {n} ({got})")
    same_as_reading(p, *args)
    # the fill value as a missing value: no finding from it
    with h5py.File(p, "r+") as f:
        f["x"].attrs["_FillValue"] = np.float32(1e5)
    rc, doc = nacheck.scan([p], *args)
    t = doc["files"][0]["tensors"][0]
    got = {fd["kind"]: fd["count"] for fd in t["findings"]}
    if t["missing"] != 460000 or got.get("cast_overflow", 0) != 0:
        raise Mismatch(f"{p}: with _FillValue 1e5: missing {t['missing']}, findings {got}")
    same_as_reading(p, *args)


def main():
    rc, doc = test_hdf5.run([os.path.join(test_hdf5.H, "hdfgroup-tall.h5")])
    if "built without HDF5" in (doc["files"][0].get("error") or ""):
        print("SKIP test_hdf5_sparse: this nanaudit was built without HDF5")
        return
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "sparse.h5")
        write_cases(p)
        try:
            doc = test_hdf5.check_file(p, 1)
            ts = {t["name"]: t for t in doc["files"][0]["tensors"]}
            # exact counts that say the fill value was counted, not skipped
            want = {"/nanfill": ("nan", 400_000 - 16384), "/neginf": ("neg_inf", 180000),
                    "/cf": ("missing", 225_000), "/int16": ("finite", 360_000),
                    "/many_rows": ("unallocated_chunks", 900),
                    "/fill_outlier": ("outliers", 16384)}
            for name, (key, n) in want.items():
                v = ts[name][key]["count"] if key == "outliers" else ts[name][key]
                if v != n:
                    raise Mismatch(f"{p}: {name}: {key} {v}, expected {n}")
            locs = ts["/fill_outlier"]["outliers"]["locations"]
            if locs != [[37 * 16384 + i] for i in range(5)]:
                raise Mismatch(f"{p}: fill_outlier locations {locs}")
            if ts["/neginf"]["inf_locations"][0] != [20000]:
                raise Mismatch(f"{p}: neginf inf_locations {ts['/neginf']['inf_locations']}")
            same_as_reading(p)
            same_as_reading(p, "--max-locations", "0", "--zscore", "2")
            check_zero_reads(os.path.join(tmp, "zero_reads.h5"))
            check_flags(os.path.join(tmp, "flags.h5"))
        except Mismatch as e:
            print(f"FAIL: {e}")
            failures += 1
    if failures:
        sys.exit(1)
    print("PASS test_hdf5_sparse")


if __name__ == "__main__":
    main()
