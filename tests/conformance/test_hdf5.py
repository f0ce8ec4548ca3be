#!/usr/bin/env python3
"""HDF5 / netCDF-4 / MATLAB v7.3 against h5py + numpy (issue 3).

Part 1 writes files with h5py (the official writer) for the cases of the
issue and checks nanaudit's JSON against numpy on what h5py reads:
big-endian >f8 and >i8 contiguous and chunked+gzip+shuffle, f2, nested
groups, compound with float fields, complex compounds, a NaN fill value
with unwritten chunks, fill time "never", empty / null / scalar
dataspaces, a feature dataset with one -Inf at [2,1], strings skipped,
10,000 small datasets.

Part 2 runs every HDF5 and netCDF file under tests/data/real/ and checks
the outcome its SOURCES.md row implies (the table OUTCOMES below): exit
code, which entries are errors or skipped (with their message), and for
every audited tensor the numbers of nacheck.compare_tensor against the
array h5py reads (counts exact, min/max exact, mean/std to 1e-12).

Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_hdf5.py
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402

K = 6.0
NLOC = 5
DATA = os.environ.get("NA_TEST_DATA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "data")
REAL = os.path.join(DATA, "real")

NP_TO_NA = {("f", 2): "F16", ("f", 4): "F32", ("f", 8): "F64", ("f", 16): "F80",
            ("i", 1): "I8", ("i", 2): "I16", ("i", 4): "I32", ("i", 8): "I64",
            ("u", 1): "U8", ("u", 2): "U16", ("u", 4): "U32", ("u", 8): "U64"}


def na_dtype(arr):
    return NP_TO_NA[(arr.dtype.kind, arr.dtype.itemsize)]


def ref_array(f, name):
    """The numpy array h5py reads for nanaudit tensor `name`: the dataset
    path is the longest prefix that is a dataset, the rest a field chain
    (".real"/".imag" for complex)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        path = ".".join(parts[:i])
        obj = f.get(path)
        if isinstance(obj, h5py.Dataset):
            break
    else:
        raise Mismatch(f"{name}: no such dataset in h5py")
    val = obj[()]
    if isinstance(val, h5py.Empty):
        return np.zeros((0,), dtype=obj.dtype), True, obj
    arr = np.asarray(val)
    if unsigned_view(obj) and i == len(parts):
        arr = arr.view(arr.dtype.str.replace("i", "u"))
    for fld in parts[i:]:
        if fld in ("real", "imag") and arr.dtype.kind == "c":
            arr = arr.real if fld == "real" else arr.imag
        else:
            arr = arr[fld]
    return np.array(arr, order="C"), False, obj  # keeps 0-d arrays 0-d


def unsigned_view(obj):
    """netCDF's _Unsigned = "true" (or "True") on a signed integer dataset:
    netCDF4-python reads the unsigned integers of the same bits."""
    u = obj.attrs.get("_Unsigned")
    if isinstance(u, bytes):
        u = u.decode("ascii", "replace")
    return obj.dtype.kind == "i" and u in ("true", "True")


def run(paths, *args):
    return nacheck.scan(paths, *args)


# netCDF-C's default fill values (netcdf.h NC_FILL_*) by numpy type code
NC_FILL = {"f4": np.float32(9.969209968386869e36), "f8": 9.969209968386869e36, "i1": -127,
           "u1": 255, "i2": -32767, "u2": 65535, "i4": -2147483647, "u4": 4294967295,
           "i8": -9223372036854775806, "u8": 18446744073709551614}


def nc_default_fill(obj):
    """The netCDF default fill of a netCDF-4 variable without _FillValue,
    which netCDF4-python masks (bytes only with fill on), when the HDF5
    fill value is it; else None."""
    if "_FillValue" in obj.attrs or obj.dtype.str[1:] not in NC_FILL:
        return None
    if not ("_NCProperties" in obj.file.attrs or
            any(k in obj.attrs for k in ("_Netcdf4Dimid", "_Netcdf4Coordinates", "DIMENSION_LIST"))):
        return None
    pl = obj.id.get_create_plist()
    if pl.fill_value_defined() != h5py.h5d.FILL_VALUE_USER_DEFINED:
        return None
    if obj.dtype.itemsize == 1 and pl.get_fill_time() == h5py.h5d.FILL_TIME_NEVER:
        return None
    want = NC_FILL[obj.dtype.str[1:]]
    return float(want) if obj.fillvalue == np.array(want, obj.dtype) else None


def missing_values(obj):
    """CF missing values of a dataset: first element of _FillValue and of
    missing_value when numeric, and a netCDF-4 variable's default fill (the
    rule of --missing auto)."""
    vals = []
    uns = unsigned_view(obj)
    for key in ("_FillValue", "missing_value"):
        if key in obj.attrs:
            v = np.asarray(obj.attrs[key]).reshape(-1)
            if v.size and v.dtype.kind in "fiu":
                m = v[0]
                if uns and v.dtype.kind == "i":   # viewed as the data are
                    m = np.array(m, obj.dtype).view(obj.dtype.str.replace("i", "u"))
                vals.append(float(m))
    # _Unsigned: netCDF4-python compares the signed default with the
    # unsigned view, and masks none
    d = nc_default_fill(obj) if obj.dtype.kind in "fiu" and not uns else None
    if d is not None and d not in vals:
        vals.append(d)
    return vals


def check_tensor(f, t, where, use_missing=True):
    arr, null, obj = ref_array(f, t["name"])
    vals = missing_values(obj) if use_missing else []
    nmiss = 0
    if vals:
        # finite values equal to a missing value leave the statistics:
        # the reference marks them NaN, then takes them off the NaN count
        with np.errstate(invalid="ignore"):
            x = arr.astype(np.float64)
        miss = np.isfinite(x) & np.isin(x, vals)
        nmiss = int(miss.sum())
        ref = arr.copy() if arr.dtype.kind == "f" else x
        ref[miss] = np.nan
        exp = nacheck.reference_stats(ref, K, NLOC)
        exp["nan"] -= nmiss
        exp["nan_locations"] = nacheck.reference_stats(arr, K, NLOC)["nan_locations"]
    else:
        exp = nacheck.reference_stats(arr, K, NLOC)
    if t.get("missing") != nmiss:
        raise Mismatch(f"{where}: {t['name']}: missing {t.get('missing')}, h5py {nmiss}")
    if null:
        exp["shape"] = []
    nacheck.compare_tensor(t, na_dtype(arr), exp, K, f"{where}: {t['name']}",
                           check_outliers=exp["margin"] > nacheck.BORDERLINE)


def check_file(path, want_rc, errors=(), skipped=(), names=None, args=(), use_missing=True):
    """Scan path; exit code want_rc; entries named in errors (name ->
    message part) have status error, in skipped status skipped; all others
    are ok and equal to h5py + numpy. names: the exact list, in order."""
    rc, doc = run([path], *args)
    fr = doc["files"][0]
    if rc != want_rc:
        raise Mismatch(f"{path}: exit {rc}, expected {want_rc}: {fr.get('error')}")
    if fr.get("format") != "hdf5":
        raise Mismatch(f"{path}: format {fr.get('format')!r}: {fr.get('error')}")
    got = [t["name"] for t in fr["tensors"]]
    if names is not None and got != names:
        raise Mismatch(f"{path}: tensors {got}, expected {names}")
    errors, skipped = dict(errors), dict(skipped)
    with h5py.File(path, "r") as f:
        for t in fr["tensors"]:
            n = t["name"]
            if n in errors:
                if t["status"] != "error" or errors[n] not in (t.get("reason") or ""):
                    raise Mismatch(f"{path}: {n}: {t['status']} {t.get('reason')!r}, expected "
                                   f"error with {errors.pop(n)!r}")
                errors.pop(n)
            elif n in skipped:
                if t["status"] != "skipped" or skipped[n] not in (t.get("reason") or ""):
                    raise Mismatch(f"{path}: {n}: {t['status']} {t.get('reason')!r}, expected "
                                   f"skipped with {skipped[n]!r}")
                skipped.pop(n)
            else:
                check_tensor(f, t, path, use_missing)
    if errors or skipped:
        raise Mismatch(f"{path}: entries not reported: {sorted(errors) + sorted(skipped)}")
    return doc


# ---- part 1: files written with h5py ----------------------------------------

def gen_values(rng, n, specials=True):
    x = rng.standard_normal(n)
    x[n // 3] = 40.0  # an outlier at K = 6
    if specials:
        x[5] = np.nan
        x[7] = np.inf
    return x


def part1(tmp):
    rng = np.random.default_rng(3)
    p = os.path.join(tmp, "be.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("f8_contig", data=gen_values(rng, 1000).astype(">f8"))
        f.create_dataset("i8_contig", data=rng.integers(-10**15, 10**15, 1000).astype(">i8"))
        f.create_dataset("f8_gzip", data=gen_values(rng, 60000).reshape(300, 200).astype(">f8"),
                         chunks=(64, 50), compression="gzip", shuffle=True)
        f.create_dataset("i8_gzip", data=rng.integers(-999, 999, (300, 200)).astype(">i8"),
                         chunks=(64, 50), compression="gzip", shuffle=True)
    doc = check_file(p, 1, names=["/f8_contig", "/f8_gzip", "/i8_contig", "/i8_gzip"])
    t = doc["files"][0]["tensors"]
    if t[0]["byte_order"] != "big" or t[0]["dtype"] != "F64":
        raise Mismatch(f"{p}: >f8 is {t[0]['dtype']} {t[0]['byte_order']}, expected F64 big")

    p = os.path.join(tmp, "f2.h5")
    with h5py.File(p, "w") as f:
        h = gen_values(rng, 5000).astype(np.float16)
        h[10:20] = np.float16(3e-6)  # subnormal in F16
        f.create_dataset("half", data=h)
    check_file(p, 1, names=["/half"])

    p = os.path.join(tmp, "nested.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("a/b/c/deep", data=np.arange(24, dtype="<f4").reshape(2, 3, 4))
        f.create_dataset("a/z", data=np.arange(5, dtype="<i2"))
        f.create_dataset("a/b/m", data=np.ones(3))
        f["a/hard"] = f["a/z"]            # second hard link: audited once
        f["a/soft"] = h5py.SoftLink("/a/b/m")
        f["a/dangling"] = h5py.SoftLink("/nowhere")
        f["a/l1"] = h5py.SoftLink("/a/l2")  # a cycle, not dangling (17th fresh-user round)
        f["a/l2"] = h5py.SoftLink("/a/l1")
        f["a/ext"] = h5py.ExternalLink("other.h5", "/x")
        f.create_dataset("text", data=np.array([b"ab", b"cd"]))
    doc = check_file(p, 0, skipped={"/text": "string"},
                     names=["/a/b/c/deep", "/a/b/m", "/a/hard", "/text"])
    notes = " | ".join(doc["files"][0].get("notes") or [])
    for want in ("/a/dangling: dangling soft link to /nowhere",
                 "/a/l1: cyclic (or more than 16 deep) soft link to /a/l2",
                 "/a/ext: external link to other.h5:/x, not followed"):
        if want not in notes:
            raise Mismatch(f"{p}: notes lack {want!r}: {notes}")

    p = os.path.join(tmp, "compound.h5")
    with h5py.File(p, "w") as f:
        dt = np.dtype([("x", "<f4"), ("y", ">f8"), ("n", "<i4"), ("v", "<f4", (3,))])
        a = np.zeros(50, dtype=dt)
        a["x"] = gen_values(rng, 50, specials=False)
        a["y"] = np.linspace(-1, 1, 50)
        a["y"][3] = -np.inf
        a["n"] = np.arange(50)
        a["v"] = rng.standard_normal((50, 3))
        f.create_dataset("table", data=a)
        f.create_dataset("c8", data=(rng.standard_normal(40) + 1j).astype(np.complex64))
        f.create_dataset("c16", data=(rng.standard_normal(40) * 1j).astype(">c16"))
    check_file(p, 1, names=["/c16.real", "/c16.imag", "/c8.real", "/c8.imag",
                            "/table.x", "/table.y", "/table.n", "/table.v"])

    p = os.path.join(tmp, "fill.h5")
    with h5py.File(p, "w") as f:
        d = f.create_dataset("nanfill", shape=(8, 10), chunks=(1, 10), dtype="<f4",
                             fillvalue=np.nan)
        d[0:4] = 1.5  # 4 of 8 chunks written
        e = f.create_dataset("never", shape=(6, 4), chunks=(2, 4), dtype="<f8", fillvalue=7.0)
        e[0:2] = 3.0
        feat = np.arange(15, dtype="<f8").reshape(5, 3)
        feat[2, 1] = -np.inf
        f.create_dataset("features", data=feat)
    # fill time "never": unwritten chunks read as 0 (the buffer is zeroed)
    with h5py.File(p, "r+") as f:
        pass
    _never_dataset(p)
    rc, doc = run([p])
    ts = {t["name"]: t for t in doc["files"][0]["tensors"]}
    nf = ts["/nanfill"]
    if (rc, nf["nan"], nf["finite"]) != (1, 40, 40):
        raise Mismatch(f"{p}: nanfill exit {rc} nan {nf['nan']} finite {nf['finite']}, "
                       f"expected 1, 40, 40")
    if "unallocated_chunks" in nf and nf["unallocated_chunks"] != 4:
        raise Mismatch(f"{p}: nanfill unallocated_chunks {nf['unallocated_chunks']}, expected 4")
    if ts["/features"]["inf_locations"] != [[2, 1]] or ts["/features"]["neg_inf"] != 1:
        raise Mismatch(f"{p}: features inf_locations {ts['/features']['inf_locations']}")
    nv = ts["/never2"]
    if (nv["zeros"], nv["finite"], nv["max"]) != (16, 24, 3.0):
        raise Mismatch(f"{p}: never2 zeros {nv['zeros']} finite {nv['finite']} max {nv['max']},"
                       " expected 16 zeros of unwritten data, 24, 3.0")

    # never written: every element is the fill value, audited from one
    # element whatever the declared size (2^40 here; h5py would need 4 TiB)
    p = os.path.join(tmp, "unwritten.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("huge_nan", shape=(1 << 20, 1 << 20), chunks=(1024, 1024),
                         dtype="<f4", fillvalue=np.nan)
        f.create_dataset("small", shape=(3, 4), dtype="<i2", fillvalue=-7)
        f.create_dataset("small_chunked", shape=(3, 4), chunks=(2, 2), dtype="<f8",
                         fillvalue=2.5)
    rc, doc = run([p])
    ts = {t["name"]: t for t in doc["files"][0]["tensors"]}
    h = ts["/huge_nan"]
    if (rc, h["elements"], h["nan"], h["finite"], h["nan_locations"], h["unallocated_chunks"]) != \
            (1, 1 << 40, 1 << 40, 0, [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]], 1 << 20):
        raise Mismatch(f"{p}: huge_nan: exit {rc} {h}")
    with h5py.File(p, "r") as f:
        for n in ("/small", "/small_chunked"):
            check_tensor(f, ts[n], p)

    p = os.path.join(tmp, "spaces.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("empty", shape=(0, 3), dtype="<f4")
        f.create_dataset("null", data=h5py.Empty("<f8"))
        f.create_dataset("scalar", data=np.float32(2.5))
    doc = check_file(p, 0, names=["/empty", "/null", "/scalar"])
    ts = {t["name"]: t for t in doc["files"][0]["tensors"]}
    want = {"/empty": ([0, 3], 0), "/null": ([], 0), "/scalar": ([], 1)}
    for n, (shape, el) in want.items():
        if (ts[n]["shape"], ts[n]["elements"]) != (shape, el):
            raise Mismatch(f"{p}: {n} shape {ts[n]['shape']} elements {ts[n]['elements']}")

    p = os.path.join(tmp, "cf.h5")
    with h5py.File(p, "w") as f:
        h = rng.integers(0, 4000, (30, 50)).astype("<i2")
        h[rng.random((30, 50)) < 0.38] = -1          # no-data, as in GOES cloud height
        d = f.create_dataset("height", data=h, chunks=(10, 50), compression="gzip")
        d.attrs["_FillValue"] = np.int16(-1)
        d.attrs["scale_factor"] = np.float32(0.305)  # never applied
        g = gen_values(rng, 400).astype("<f4")
        g[50:60] = -999.0
        e = f.create_dataset("temp", data=g)
        e.attrs["missing_value"] = np.array([-999.0], dtype="<f4")
        e.attrs["_FillValue"] = np.float32(np.nan)   # NaN stays NaN
    doc = check_file(p, 1)
    ts = {t["name"]: t for t in doc["files"][0]["tensors"]}
    if ts["/temp"]["missing"] != 10 or ts["/temp"]["nan"] != 1:
        raise Mismatch(f"{p}: temp missing {ts['/temp']['missing']} nan {ts['/temp']['nan']}")
    check_file(p, 1, args=("--missing", "none"), use_missing=False)

    p = os.path.join(tmp, "many.h5")
    with h5py.File(p, "w", libver="latest") as f:
        for i in range(10000):
            f.create_dataset(f"d{i:05d}", data=np.full(4, i, dtype="<f4"))
    t0 = time.monotonic()
    rc, doc = run([p])
    dt = time.monotonic() - t0
    n = len(doc["files"][0]["tensors"])
    if rc != 0 or n != 10000 or doc["files"][0]["tensors"][9999]["max"] != 9999.0:
        raise Mismatch(f"{p}: exit {rc}, {n} tensors")
    print(f"  10000 datasets: {dt:.2f} s")
    if dt > 30:
        raise Mismatch(f"{p}: 10,000 small datasets took {dt:.1f} s")


def _never_dataset(p):
    """Chunked f8 [6,4] with fill value 7 but fill time "never", 2 rows
    written: libhdf5 leaves unwritten data alone, nanaudit reads 0."""
    with h5py.File(p, "r+") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((2, 4))
        dcpl.set_fill_value(np.array(7.0))
        dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        space = h5py.h5s.create_simple((6, 4))
        h5py.h5d.create(f.id, b"never2", h5py.h5t.IEEE_F64LE, space, dcpl=dcpl)
        f["never2"][0:2] = 3.0


# ---- part 2: real files ---------------------------------------------------------

H = os.path.join(REAL, "hdf5")
N = os.path.join(REAL, "netcdf")
ZSTD = "HDF5 filter 32015 (zstd) is not available"
# file -> (exit code, {error entry: message part}, {skipped entry: reason part})
OUTCOMES = {
    "h5py-compound-dtype-complex.h5": (0, {}, {}),
    "h5py-vlen_string_s390x.h5": (0, {}, {"/DSvariable": "string"}),
    "hdfgroup-be_data.h5": (0, {}, {}),
    "hdfgroup-fill_old.h5": (0, {}, {}),
    "hdfgroup-h5diff_basic1.h5": (1, {}, None),
    "hdfgroup-h5ex_d_zstd.h5": (3, {"/DS1": ZSTD}, {}),
    "hdfgroup-packedbits.h5": (0, {}, {}),
    "hdfgroup-t128bit_float.h5": (3, {"/DS1": "unsupported float type"}, {}),
    "hdfgroup-tall.h5": (0, {}, {}),
    "hdfgroup-tdset_idx.h5": (0, {}, {}),
    "hdfgroup-tfilters.h5": (3, {"/myfilter": "HDF5 filter 405 (named 'myfilter' in the file) is not available",
                                 "/external": "external raw data file 'ext1.bin' (segment 0): No such file or directory"}, {}),
    "hdfgroup-tfpformat.h5": (0, {}, {}),
    "hdfgroup-thyperslab.h5": (0, {}, {}),
    "hdfgroup-tldouble.h5": (0, {}, {}),
    "hdfgroup-tnullspace.h5": (0, {}, {}),
    "hdfgroup-tsaf.h5": (0, {}, None),
    "hdfgroup-twithub513.h5": (0, {}, {}),
    "jhdf-100B_max_dimension_size.hdf5": (0, {}, {}),
    "jhdf-chunked_v4_datasets.hdf5": (0, {}, None),
    "jhdf-fixed_array_paged_datasets.hdf5": (0, {}, {}),
    "jhdf-float_special_values_earliest.hdf5": (1, {}, {}),
    "jhdf-hdf_v14_test2.hdf5": (0, {}, {}),
    "jhdf-superblock-extension.hdf5": (0, {}, {}),
    "jhdf-test_chunked_datasets_earliest.hdf5": (0, {}, {}),
    "jhdf-test_fill_value_latest.hdf5": (0, {}, {}),
    "jhdf-test_odd_datasets_latest.hdf5": (0, {}, {}),
    "jhdf-test_scalar_empty_datasets_latest.hdf5": (0, {}, None),
    "jhdf-test_userblock_latest.hdf5": (0, {}, {}),
    "modelaudit-keras-malicious_lambda.h5": (0, {}, {}),
    "scipy-testhdf5_7.4_GLNX86-matlab73.mat": (0, {}, {}),
}
NC = {
    "nc4py-20171025_2056.Cloud_Top_Height.nc": (0, {}, None),
    "nc4py-issue672.nc": (0, {}, None),
    "nc4py-test_gold.nc": (1, {}, None),
    "ncc-nctest_netcdf4_classic.nc": (0, {}, None),
    "ncc-ref_test_corrupt_magic.nc": (0, {}, None),
    "ncc-ref_tst_xplatform2_1.nc": (0, {}, None),
}


NC_DIM = b"This is a netCDF dimension but not a netCDF variable."


def nc_dim_only(obj):
    """The dimension scale netCDF-4 writes for a dimension without a
    coordinate variable (netCDF-C's DIM_WITHOUT_VARIABLE NAME): no
    variable to netCDF readers, skipped by nanaudit."""
    name = obj.attrs.get("NAME")
    return obj.attrs.get("CLASS") == b"DIMENSION_SCALE" and isinstance(name, bytes) and \
        name.startswith(NC_DIM)


def skipped_as_reported(path):
    """For files whose many skipped entries (strings, netCDF dimensions)
    are not listed in the table: every skipped entry must be one h5py reads
    as non-numeric, or a netCDF dimension skipped as one."""
    rc, doc = run([path])
    out = {}
    with h5py.File(path, "r") as f:
        for t in doc["files"][0]["tensors"]:
            if t["status"] == "skipped":
                obj = f.get(t["name"].split(".")[0])
                if obj is not None and isinstance(obj, h5py.Dataset) and nc_dim_only(obj):
                    if t.get("reason") != "a netCDF dimension, not a variable":
                        raise Mismatch(f"{path}: {t['name']}: reason {t.get('reason')!r}")
                elif obj is not None and isinstance(obj, h5py.Dataset) and \
                        obj.dtype.kind in "fiuc":
                    raise Mismatch(f"{path}: {t['name']}: numeric ({obj.dtype}) but skipped")
                out[t["name"]] = t.get("reason") or ""
    return out


def part2():
    for table, base in ((OUTCOMES, H), (NC, N)):
        for name, (rc, errors, skipped) in table.items():
            path = os.path.join(base, name)
            if skipped is None:
                skipped = skipped_as_reported(path)
            check_file(path, rc, errors, skipped)
    # files libhdf5 or nanaudit must refuse: exit 3, one line, no crash
    refused = {
        os.path.join(H, "jhdf-test_byteshuffle_compressed_datasets_latest.hdf5"):
            "file is already open for write",
        os.path.join(N, "nc4py-ubyte-netcdf3.nc"): "netCDF-3 (classic, 64-bit offset or CDF-5), not supported",
        os.path.join(N, "ncc-ref_nctest_classic-netcdf3.nc"): "netCDF-3 (classic, 64-bit offset or CDF-5), not supported",
    }
    for p, msg in refused.items():
        rc, doc = run([p])
        err = doc["files"][0].get("error") or ""
        if rc != 3 or msg not in err:
            raise Mismatch(f"{p}: exit {rc}, error {err!r}; expected 3 with {msg!r}")
    # malformed: exit 3 (or 0 when libhdf5 reads every dataset), never a crash
    # of nanaudit itself, never a hang
    for d in (os.path.join(H, "malformed"), os.path.join(N, "malformed")):
        for fn in sorted(os.listdir(d)):
            p = os.path.join(d, fn)
            rc, doc = run([p], "--hdf5-timeout", "20")
            if rc not in (0, 3):
                raise Mismatch(f"{p}: exit {rc}, expected 3 (or 0)")
    # --missing none: the GOES no-data values (-1) are data again
    check_file(os.path.join(N, "nc4py-20171025_2056.Cloud_Top_Height.nc"), 0, {},
               skipped_as_reported(os.path.join(N, "nc4py-20171025_2056.Cloud_Top_Height.nc")),
               args=("--missing", "none"), use_missing=False)
    # declared 8589934592 x 268435457, never allocated: all fill value 0
    rc, doc = run([os.path.join(H, "hdfgroup-tlayouto.h5")])
    t = doc["files"][0]["tensors"][0]
    want = (0, "/Dataset", [8589934592, 268435457], 2305843017803628544, 2305843017803628544,
            0.0, 0.0, 0.0)
    got = (rc, t["name"], t["shape"], t["elements"], t["zeros"], t["min"], t["max"], t["std"])
    if got != want:
        raise Mismatch(f"tlayouto.h5: {got}, expected {want}")
    # the CVE-2021-37501 file's datasets are readable (only an attribute is bad)
    cve = os.path.join(H, "malformed", "hdfgroup-tCVE-2021-37501_attr_decode.h5")
    check_file(cve, 0, {}, {})


def main():
    rc, doc = run([os.path.join(H, "hdfgroup-tall.h5")])
    if "built without HDF5" in (doc["files"][0].get("error") or ""):
        print("SKIP test_hdf5: this nanaudit was built without HDF5")
        return
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        # an installed zstd/lzf plugin must not hide the missing-filter cases
        os.makedirs(os.path.join(tmp, "no-plugins"))
        os.environ["HDF5_PLUGIN_PATH"] = os.path.join(tmp, "no-plugins")
        for part in (lambda: part1(tmp), part2):
            try:
                part()
            except Mismatch as e:
                print(f"FAIL: {e}")
                failures += 1
    if failures:
        sys.exit(1)
    print("PASS test_hdf5")


if __name__ == "__main__":
    main()
