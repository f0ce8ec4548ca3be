#!/usr/bin/env python3
"""`nanaudit clean` and CF missing data (issue 4), against numpy with masks.

A finite value equal to a dataset's _FillValue or missing_value (HDF5 /
netCDF-4 attributes, `--missing auto`, the default) is missing: it is left
out of the statistics of every step, is never replaced, dropped or
clipped, does not cause its sample to be dropped, and is written back as
the marker itself in the output dtype (a sample dropped for another reason
goes whole). The reference below computes each step with boolean masks
(`ok` = finite and not a marker) on the rows kept so far. Checked:
  - 1-D and 2-D (per feature) F64 and F32 with markers; --nonfinite
    drop|zero|mean with NaN beside the markers; --zscore 3 with --outliers
    drop and clip; --mad 3.5; --normalize minmax|zscore;
  - int16 -> F32 (--normalize): markers written as F32, the _FillValue
    attribute converted to F32 (CF: _FillValue has the variable's type);
  - a netCDF-style variable with both _FillValue and missing_value, and a
    real netCDF-4 file (GOES-16, int16 with _FillValue -1);
  - a cleaned value equal to the marker: written as computed, counted in
    missing_collisions with a warning, and missing in "after";
  - --together drops the NaN sample from both datasets, no marker sample;
    markers in about 11 % of the 2-D samples do not trip --max-drop-fraction 0.1;
  - the report's before/after "missing" counts; an F64 NaN that has the
    bits of clean's internal stand-in for a missing value is still a NaN;
  - identical output bytes for OMP_NUM_THREADS 1, 2 and 3.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_clean_missing.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402

EXE = nacheck.nanaudit_path()
TMP = tempfile.mkdtemp(prefix="nacleanmiss.")
FAILS = []


def check(name, cond, msg=""):
    if not cond:
        FAILS.append(f"{name}: {msg}")
        print(f"FAIL {name}: {msg}")


def clean(src, args, threads=2, expect=0):
    # outputs in TMP, never beside the input (it may be in the source tree)
    base = os.path.join(TMP, os.path.basename(src))
    out = base + f".t{threads}.clean.h5"
    rep = base + f".t{threads}.json"
    for p in (out, rep):
        if os.path.exists(p):
            os.unlink(p)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    p = subprocess.run([EXE, "clean", "-q", src, "-o", out, "--report", rep] + args,
                       capture_output=True, text=True, env=env)
    if p.returncode != expect:
        raise AssertionError(f"exit {p.returncode} (want {expect}) for {args}:\n{p.stdout}\n{p.stderr}")
    with open(rep) as f:
        report = json.load(f)
    return out, report


def ref_clean(x, markers, nonfinite="drop", zscore=None, mad=None, outliers="drop",
              normalize=None):
    """numpy reference: x is (rows, features) float64; returns the rows
    kept (bool per row) and the cleaned values of those rows (markers as
    they were)."""
    x = x.copy()
    miss = np.isin(x, markers) & np.isfinite(x)
    keep = np.ones(x.shape[0], bool)
    bad = ~np.isfinite(x)
    if nonfinite == "drop":
        keep &= ~bad.any(axis=1)
    elif nonfinite in ("zero", "mean"):
        ok = ~bad & ~miss
        for j in range(x.shape[1]):
            fill = 0.0 if nonfinite == "zero" else x[ok[:, j], j].mean()
            x[bad[:, j], j] = fill
    if zscore is not None or mad is not None:
        ok = np.isfinite(x) & ~miss & keep[:, None]
        flag = np.zeros_like(ok)
        lo = np.zeros(x.shape[1])
        hi = np.zeros(x.shape[1])
        for j in range(x.shape[1]):
            v = x[ok[:, j], j]
            if zscore is not None:
                c, s = v.mean(), v.std()
                flag[:, j] = ok[:, j] & (np.abs(x[:, j] - c) > zscore * s)
                lo[j], hi[j] = c - zscore * s, c + zscore * s
            else:
                med = np.median(v)
                m = np.median(np.abs(v - med))
                assert m > 0
                flag[:, j] = ok[:, j] & (np.abs(0.6745 * (x[:, j] - med) / m) > mad)
                lo[j], hi[j] = med - mad * m / 0.6745, med + mad * m / 0.6745
        if outliers == "drop":
            keep &= ~flag.any(axis=1)
        else:  # clip
            for j in range(x.shape[1]):
                f = flag[:, j]
                x[f, j] = np.where(x[f, j] < (lo[j] + hi[j]) / 2, lo[j], hi[j])
    if normalize:
        ok = np.isfinite(x) & ~miss & keep[:, None]
        for j in range(x.shape[1]):
            v = x[ok[:, j], j]
            o = ok[:, j]
            if v.size and v.max() == v.min():  # constant: LO (minmax) or 0 (zscore)
                x[o, j] = 0.0
            elif v.size == 0:  # nothing but markers: nothing to map
                pass
            elif normalize == "minmax":
                x[o, j] = (x[o, j] - v.min()) / (v.max() - v.min())
            else:
                x[o, j] = (x[o, j] - v.mean()) / v.std()
    return keep, x[keep]


def write(name, data, attrs, **kw):
    src = os.path.join(TMP, name)
    with h5py.File(src, "w") as f:
        d = f.create_dataset("x", data=data, **kw)
        for k, v in attrs.items():
            d.attrs[k] = v
    return src


def compare(what, src, args, data, markers, rtol, threads=False, **ref):
    """Clean src with args at 2 threads against the reference; with
    threads, also at 1 and 3 threads, byte for byte against it (each
    run costs ~0.4 s of wall time: only some cases)."""
    out, rep = clean(src, args, threads=2)
    x = data.astype(np.float64).reshape(data.shape[0], -1)
    keep, exp = ref_clean(x, markers, **ref)
    with h5py.File(out) as f:
        got = f["x"][:]
    g = got.astype(np.float64).reshape(got.shape[0], -1)
    check(f"{what}: rows", g.shape == exp.shape, f"{g.shape} vs {exp.shape}")
    if g.shape == exp.shape:
        miss = np.isin(x[keep], markers)
        check(f"{what}: markers written back unchanged", np.array_equal(g[miss], exp[miss]),
              str(g[miss][:5]))
        fin = ~miss
        close = np.allclose(g[fin], exp[fin], rtol=rtol, atol=rtol, equal_nan=True)
        check(f"{what}: values", close,
              str(np.abs(g[fin] - exp[fin])[np.isfinite(exp[fin])].max(initial=0)))
    t = rep["tensors"][0]
    nmiss = int(np.isin(x, markers).sum())
    check(f"{what}: before.missing", t["before"]["missing"] == nmiss,
          f"{t['before']['missing']} vs {nmiss}")
    check(f"{what}: after.missing", t["after"]["missing"] == int(np.isin(x[keep], markers).sum()),
          str(t["after"]))
    check(f"{what}: before.finite excludes markers",
          t["before"]["finite"] == int((np.isfinite(x) & ~np.isin(x, markers)).sum()),
          str(t["before"]))
    ref_bytes = open(out, "rb").read()
    with h5py.File(out) as f:
        ref_vals = f["x"][:].tobytes()
    for th in (1, 3) if threads else ():
        o, _ = clean(src, args, threads=th)
        with h5py.File(o) as f:
            check(f"{what}: identical for {th} thread(s)", f["x"][:].tobytes() == ref_vals)
    return out, rep, len(ref_bytes)


def test_1d():
    rng = np.random.default_rng(4)
    n = 100_000  # several 16 Ki-element blocks
    x = rng.normal(10.0, 2.0, n)
    x[rng.choice(n, 3000, replace=False)] = -999.0
    x[rng.choice(n, 20, replace=False)] = 60.0  # outliers
    xn = x.copy()
    xn[rng.choice(np.flatnonzero(x != -999.0), 30, replace=False)] = np.nan
    xn[5] = np.inf
    attrs = {"_FillValue": np.float64(-999)}
    mk = [-999.0]
    src = write("d1.h5", x, attrs, chunks=(8192,))
    compare("1-D F64 minmax", src, ["--normalize", "minmax"], x, mk, 1e-12, normalize="minmax")
    compare("1-D F64 zscore 3 drop + zscore", src, ["--zscore", "3", "--normalize", "zscore"],
            x, mk, 1e-12, threads=True, zscore=3, normalize="zscore")
    compare("1-D F64 zscore 3 clip", src, ["--zscore", "3", "--outliers", "clip"], x, mk, 1e-12,
            zscore=3, outliers="clip")
    compare("1-D F64 mad 3.5 drop + minmax", src, ["--mad", "3.5", "--normalize", "minmax"],
            x, mk, 1e-12, threads=True, mad=3.5, normalize="minmax")
    srcn = write("d1n.h5", xn, attrs)
    for nf in ("drop", "zero", "mean"):
        compare(f"1-D F64 NaN --nonfinite {nf}", srcn,
                ["--nonfinite", nf, "--zscore", "3", "--normalize", "minmax",
                 "--max-drop-fraction", "0.5"], xn, mk, 1e-12, threads=nf == "mean",
                nonfinite=nf, zscore=3,
                normalize="minmax")
    x32 = x.astype(np.float32)
    src32 = write("d1f.h5", x32, {"_FillValue": np.float32(-999)})
    compare("1-D F32 zscore 3 drop + minmax", src32, ["--zscore", "3", "--normalize", "minmax"],
            x32, mk, 2e-7, zscore=3, normalize="minmax")


def test_2d():
    rng = np.random.default_rng(5)
    n, w = 20_000, 4
    x = rng.normal([0.0, 5.0, -3.0, 100.0], [1.0, 2.0, 0.5, 10.0], (n, w))
    x[rng.random((n, w)) < 0.03] = -1.0e20
    x[rng.choice(n, 10, replace=False), 1] = 40.0
    x[7, 2] = np.nan  # a sample with a NaN and a marker: dropped whole
    x[7, 0] = -1.0e20
    for dt, rtol in ((np.float64, 1e-12), (np.float32, 2e-7)):
        xd = x.astype(dt)
        mk = [float(dt(-1.0e20))]  # the marker as the data holds it
        src = write(f"d2{np.dtype(dt).char}.h5", xd, {"_FillValue": dt(-1.0e20)}, chunks=(1000, w))
        name = f"2-D {np.dtype(dt).name}"
        compare(f"{name} zscore 3 drop + minmax", src,
                ["--zscore", "3", "--normalize", "minmax"], xd, mk, rtol,
                zscore=3, normalize="minmax")
        compare(f"{name} zscore 3 clip + zscore", src,
                ["--zscore", "3", "--outliers", "clip", "--nonfinite", "zero", "--normalize",
                 "zscore"], xd, mk, rtol, threads=True, nonfinite="zero", zscore=3,
                outliers="clip",
                normalize="zscore")
        compare(f"{name} mad 3.5 clip + nonfinite mean", src,
                ["--mad", "3.5", "--outliers", "clip", "--nonfinite", "mean"], xd, mk, rtol,
                nonfinite="mean", mad=3.5, outliers="clip")


def test_int16_to_f32():
    v = np.array([[3, -32767], [10, 7], [-32767, -32767], [4, 1], [9, 2]], np.int16)
    src = write("i16.h5", v, {"_FillValue": np.int16(-32767)}, fillvalue=np.int16(-32767),
                chunks=(2, 2))
    out, rep = compare("int16 -> F32 minmax", src, ["--normalize", "minmax"], v, [-32767.0],
                       1e-7, normalize="minmax")[:2]
    with h5py.File(out) as f:
        d = f["x"]
        a = d.attrs["_FillValue"]
        check("int16 -> F32: dtype", d.dtype == np.float32, str(d.dtype))
        check("int16 -> F32: _FillValue converted", a.dtype == np.float32 and a == -32767.0,
              repr(a))
        check("int16 -> F32: dataset fill value", d.fillvalue == np.float32(-32767),
              str(d.fillvalue))
        check("int16 -> F32: markers as F32", np.array_equal(d[:][v == -32767],
                                                            np.full(3, -32767, np.float32)))
    check("int16 -> F32: out_dtype", rep["tensors"][0]["out_dtype"] == "F32")
    # scan of the written file sees the same missing values
    p = subprocess.run([EXE, "scan", "--format", "json", out], capture_output=True, text=True)
    s = json.loads(p.stdout)
    miss = [t.get("missing") for t in s["files"][0]["tensors"] if t.get("name") == "/x"]
    check("int16 -> F32: scan counts the markers", miss == [3], p.stdout[:400])


def test_netcdf_both_markers():
    """netCDF-4 style: _FillValue for never-written values and a
    different missing_value; both are missing and each is written back as
    itself."""
    rng = np.random.default_rng(6)
    x = rng.uniform(0, 30, 5000).astype(np.float32)
    at = rng.choice(5000, 200, replace=False)
    x[at[:100]] = -9999.0
    x[at[100:]] = -999.0
    src = write("nc.h5", x, {"_FillValue": np.float32(-9999.0),
                             "missing_value": np.float32(-999.0)}, fillvalue=np.float32(-9999.0))
    out, rep = compare("netCDF _FillValue + missing_value", src, ["--normalize", "zscore"], x,
                       [-9999.0, -999.0], 2e-6, threads=True, normalize="zscore")[:2]
    with h5py.File(out) as f:
        got = f["x"][:]
        check("netCDF: each marker written as itself",
              np.array_equal(got == -9999.0, x == -9999.0) and
              np.array_equal(got == -999.0, x == -999.0))
        check("netCDF: attributes kept", f["x"].attrs["_FillValue"] == -9999.0 and
              f["x"].attrs["missing_value"] == -999.0)
    check("netCDF: 200 missing", rep["tensors"][0]["before"]["missing"] == 200,
          str(rep["tensors"][0]["before"]))


def test_collision():
    """--normalize zscore of [0, 2] (mean 1, std 1) gives -1 and 1: with
    marker -1 the cleaned 0 collides with it. Written as computed, counted
    and warned about; it reads back as missing (and the verification
    agrees: exit 0)."""
    x = np.array([0.0, -1.0, 2.0, -1.0])
    src = write("coll.h5", x, {"missing_value": np.float64(-1.0)})
    out, rep = clean(src, ["--normalize", "zscore"])
    t = rep["tensors"][0]
    with h5py.File(out) as f:
        check("collision: values as computed", f["x"][:].tolist() == [-1.0, -1.0, 1.0, -1.0],
              str(f["x"][:]))
    check("collision: counted", t["missing_collisions"] == 1, str(t))
    check("collision: after.missing", t["after"]["missing"] == 3 and t["before"]["missing"] == 2,
          str(t))
    check("collision: warning",
          t["warnings"] == ["1 cleaned value(s) equal a missing-value marker and read back as "
                            "missing"], str(t["warnings"]))
    # --dry-run reports it too, in the same words (cli/clean.c warn_emitted)
    p = subprocess.run([EXE, "clean", src, "--dry-run", "--normalize", "zscore"],
                       capture_output=True, text=True)
    check("collision: dry-run warning", p.returncode == 0 and
          "warning: 1 cleaned value(s) equal a missing-value marker and read back as "
          "missing" in p.stdout, p.stdout + p.stderr)


def test_params_exclude_missing():
    """--save-params statistics leave the markers out; --apply-params on
    another file leaves its markers alone."""
    x = np.array([1.0, -999.0, 3.0, 5.0, -999.0])
    src = write("fit.h5", x, {"_FillValue": np.float64(-999)})
    params = os.path.join(TMP, "p.json")
    clean(src, ["--normalize", "minmax", "--save-params", params])
    y = np.array([-999.0, 2.0, 4.0])
    src2 = write("apply.h5", y, {"_FillValue": np.float64(-999)})
    out, _ = clean(src2, ["--apply-params", params, "--normalize", "minmax"])
    with h5py.File(out) as f:
        check("params: applied min 1 max 5, marker kept",
              f["x"][:].tolist() == [-999.0, 0.25, 0.75], str(f["x"][:]))


def test_real_goes_netcdf():
    """A real netCDF-4 file (GOES-16 cloud-top height, written by the
    netCDF library; tests/data/real/SOURCES.md): HT is int16 [300, 500]
    with _Unsigned "true" and _FillValue -1, so uint16 values with 65535
    marking 57432 cells, as netCDF4-python reads it. Per-feature min-max
    of the unsigned values leaves every fill value alone and writes it as
    F32 65535 under an F32 _FillValue 65535, _Unsigned dropped; h5py
    reads the copy."""
    src = os.path.join(os.environ.get("NA_TEST_DATA", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data")),
        "real", "netcdf", "nc4py-20171025_2056.Cloud_Top_Height.nc")
    with h5py.File(src) as f:
        ht = f["HT"][:].view(np.uint16)
    out, rep = clean(src, ["--include", "/HT", "--normalize", "minmax"])
    x = ht.astype(np.float64)
    _, exp = ref_clean(x, [65535.0], normalize="minmax")
    with h5py.File(out) as f:
        d = f["HT"]
        got = d[:]
        check("GOES HT: F32 with an F32 _FillValue", d.dtype == np.float32 and
              d.attrs["_FillValue"].dtype == np.float32 and d.attrs["_FillValue"][0] == 65535
              and "_Unsigned" not in d.attrs, repr(d.attrs["_FillValue"]))
        # normalized: the CF packing attributes would unpack the new values
        check("GOES HT: scale_factor/add_offset dropped (normalized)",
              "scale_factor" not in d.attrs and "add_offset" not in d.attrs, str(list(d.attrs)))
    miss = ht == 65535
    check("GOES HT: fill values left alone", np.array_equal(got == 65535, miss) and
          int(miss.sum()) == 57432, str(int((got == 65535).sum())))
    check("GOES HT: values", np.allclose(got[~miss], exp[~miss], rtol=1e-7, atol=1e-7))
    t = next(t for t in rep["tensors"] if t["name"] == "/HT")
    check("GOES HT: report", t["before"]["missing"] == 57432 and t["after"]["missing"] == 57432
          and t["missing_collisions"] == 0, str(t))
    check("GOES HT: packing warning",
          any(w.startswith("scale_factor, add_offset") and
              w.endswith(" dropped: values are normalized") for w in t["warnings"]), str(t))


def test_together():
    """--together /x,/y: the sample with a NaN in /x goes from both; the
    samples holding markers stay in both."""
    x = np.array([1.0, -999.0, np.nan, 4.0, -999.0, 6.0])
    y = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0], np.float32)
    src = os.path.join(TMP, "tog.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=x).attrs["_FillValue"] = np.float64(-999)
        f.create_dataset("y", data=y)
    out, rep = clean(src, ["--together", "/x,/y", "--max-drop-fraction", "0.5"])
    with h5py.File(out) as f:
        check("together: /x", f["x"][:].tolist() == [1.0, -999.0, 4.0, -999.0, 6.0], str(f["x"][:]))
        check("together: /y", f["y"][:].tolist() == [10.0, 20.0, 40.0, 50.0, 60.0], str(f["y"][:]))
    t = rep["tensors"][0]
    check("together: one sample dropped", t["samples_dropped"]["total"] == 1 and
          t["samples_dropped"]["first"] == [2] and t["after"]["missing"] == 2, str(t))


def test_standin_bits_are_nan():
    """lib/clean.c holds a missing value as a NaN with a payload of its own
    (NA_CLEAN_MISS_BITS, lib/clean.h); an F64 NaN of the input with those
    very bits is still a NaN: replaced by --nonfinite zero, counted as NaN,
    with or without markers."""
    bits = np.array([0x7FF80000000A11A0, 0x7FF80000000A11A1], np.uint64).view(np.float64)
    x = np.array([1.0, bits[0], 3.0, -5.0, bits[1], 2.0])
    for attrs, nmiss in (({"_FillValue": np.float64(-5)}, 1), ({}, 0)):
        src = write(f"bits{nmiss}.h5", x, attrs)
        out, rep = clean(src, ["--nonfinite", "zero"])
        t = rep["tensors"][0]
        with h5py.File(out) as f:
            check(f"stand-in bits ({nmiss} marker): replaced as NaN",
                  f["x"][:].tolist() == [1.0, 0.0, 3.0, -5.0, 0.0, 2.0], str(f["x"][:]))
        check(f"stand-in bits ({nmiss} marker): counts", t["before"]["nan"] == 2 and
              t["before"]["missing"] == nmiss and t["nonfinite_replaced"] == 2, str(t))


def main():
    for t in (test_1d, test_2d, test_int16_to_f32, test_netcdf_both_markers, test_collision,
              test_params_exclude_missing, test_real_goes_netcdf, test_together,
              test_standin_bits_are_nan):
        try:
            t()
        except AssertionError as e:
            FAILS.append(f"{t.__name__}: {e}")
            print(f"FAIL {t.__name__}: {e}")
    shutil.rmtree(TMP, ignore_errors=True)
    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        return 1
    print("PASS test_clean_missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
