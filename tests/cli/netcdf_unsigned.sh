#!/bin/bash
# netcdf_unsigned.sh - netCDF's _Unsigned = "true" on a signed integer
# variable (NetCDF User Guide, attribute conventions; netCDF-3 files
# converted to netCDF-4, satellite products) says its bytes are unsigned:
# netCDF4-python and xarray read i1 ff fe 00 01 7f 80 as 255 254 0 1 127
# 128. nanaudit audited them as signed (min -128, mean -0.5; round 37b,
# MED). Now such a dataset is U8/U16/U32/U64 with the same bits: scan's
# counts and statistics equal netCDF4-python's masked view (markers
# viewed as unsigned too), clean computes in the unsigned view and writes
# the same bits back into the signed type (the attribute kept), and a
# normalized copy is F32 without _Unsigned, its _FillValue the unsigned
# marker (255.0), the missing cells still masked.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
"$NA_PYTHON" -c 'import netCDF4' 2> /dev/null || { echo "SKIP $NA_TEST_NAME: no netCDF4"; exit 0; }
cd "$T" || exit 1
"$NA_PYTHON" -c '
import netCDF4, numpy as np, json
rng = np.random.default_rng(5)
ds = netCDF4.Dataset("u.nc", "w")
ds.createDimension("t", 300); ds.createDimension("x", 3)
for n, t, fill, flag in (("b", "i1", -1, "true"), ("s", "i2", None, "True"), ("i", "i4", -2, "true"),
                         ("q", "i8", None, "true"), ("w", "i8", -7, "true"),
                         ("n", "i1", None, "false")):
    v = ds.createVariable(n, t, ("t", "x"), fill_value=None if fill is None else np.array(fill, t))
    v._Unsigned = flag
    v.set_auto_maskandscale(False)
    ut = np.dtype(t.replace("i", "u"))
    hi = np.iinfo(ut).max
    a = rng.integers(hi // 2 - 20, hi // 2 + 20, (300, 3), dtype=np.uint64).astype(ut)
    a[5, 1] = hi - 3; a[9, 0] = 3; a[0, 0] = hi - 2  # outliers; the top bit set
    if fill is not None:
        a[7, 2] = np.array(fill, t).view(ut)          # a missing cell
    v[:] = a.view(t)
ds.close()
ds = netCDF4.Dataset("u.nc")
want = {}
for n in ds.variables:
    if n in ("t", "x"):
        continue
    m = ds[n][:]
    c = m.compressed().astype(np.float64)
    want[n] = dict(dtype=str(m.dtype), missing=int(np.ma.count_masked(m)), min=float(c.min()),
                   max=float(c.max()), mean=float(c.mean()))
json.dump(want, open("want.json", "w"))' || fail "inputs"
expect_exit 0 "$NANAUDIT" scan --format json u.nc
cp stdout scan.json
"$NA_PYTHON" - <<'PY' || fail "scan vs netCDF4-python"
import json
want = json.load(open("want.json"))
got = {t["name"].lstrip("/"): t for t in json.load(open("scan.json"))["files"][0]["tensors"]}
names = {"uint8": "U8", "uint16": "U16", "uint32": "U32", "uint64": "U64", "int8": "I8"}
for n, w in want.items():
    t = got[n]
    assert t["dtype"] == names[w["dtype"]], (n, t["dtype"], w["dtype"])
    assert t["missing"] == w["missing"], (n, t["missing"], w["missing"])
    assert t["min"] == w["min"] and t["max"] == w["max"], (n, t["min"], t["max"], w)
    assert abs(t["mean"] - w["mean"]) <= 1e-12 * abs(w["mean"]), (n, t["mean"], w["mean"])
PY
# a marker the stored (signed) type cannot hold: netCDF4-python ignores
# it (an unsafe cast), nanaudit counts the unsigned values equal to it,
# and says so (round 38a: no note)
"$NA_PYTHON" -c '
import netCDF4, numpy as np
ds = netCDF4.Dataset("mv.nc", "w"); ds.createDimension("t", 4)
v = ds.createVariable("us", "i2", ("t",)); v._Unsigned = "true"; v.missing_value = np.float32(65000)
v.set_auto_maskandscale(False); v[:] = np.array([65000, 1, 2, 40000], "u2").view("i2")
ds.close()' || fail "mv.nc"
expect_exit 0 "$NANAUDIT" scan mv.nc
expect_stdout_contains "note: /us: missing_value 65000 is not exactly a value of the stored type: netCDF4-python ignores this attribute, nanaudit takes 65000 as the marker"
expect_exit 0 "$NANAUDIT" info u.nc
expect_stdout_contains "fill=-1 _Unsigned _FillValue=255"
expect_stdout_contains "fill=-2 _Unsigned _FillValue=4294967294"
# a 64-bit marker as its integer, not a rounded double (round 38a)
expect_stdout_contains "_Unsigned _FillValue=18446744073709551609"
# a marker stored as a string is ignored, as netCDF4-python ignores it: said
"$NA_PYTHON" -c '
import netCDF4, numpy as np
ds = netCDF4.Dataset("s.nc", "w"); ds.createDimension("t", 3)
v = ds.createVariable("v", "f4", ("t",)); v.setncattr_string("missing_value", "-9999")
v[:] = np.array([-9999, 1, 2], "f4"); ds.close()' || fail "s.nc"
expect_exit 0 "$NANAUDIT" scan s.nc
expect_stdout_contains "note: /v: missing_value is a string, not a number of the dataset's type: ignored (as netCDF4-python does)"
expect_stdout_contains "-9999"

# clean in the unsigned view: clipped values as numpy computes them, the
# same signed type and _Unsigned in the output
expect_exit 0 "$NANAUDIT" clean u.nc --zscore 3 --outliers clip --include "/[bsi]" -o c.nc
expect_stdout_contains "/b: U8 -> U8"
expect_stdout_contains "written: c.nc (verified)"
"$NA_PYTHON" - <<'PY' || fail "clean --outliers clip vs numpy"
import netCDF4, numpy as np
a, b = netCDF4.Dataset("u.nc"), netCDF4.Dataset("c.nc")
for n in "bsi":
    x, y = a[n][:], b[n][:]
    assert b[n].dtype == a[n].dtype and b[n].getncattr("_Unsigned") in ("true", "True"), n
    assert (np.ma.getmaskarray(x) == np.ma.getmaskarray(y)).all(), n
    xf = x.astype(np.float64)
    mu, sd = xf.mean(axis=0), xf.std(axis=0)
    ref = np.clip(xf, mu - 3 * sd, mu + 3 * sd)
    ref = np.rint(ref)                      # round half to even into the integer type
    assert ref.mask.sum() == y.mask.sum()
    assert (ref.compressed() == y.compressed().astype(np.float64)).all(), (n, ref[:12], y[:12])
    assert (y.compressed() != x.compressed()).sum() >= 2, n   # the outliers moved
PY

# normalized: F32, _Unsigned dropped, the marker converted as unsigned
expect_exit 0 "$NANAUDIT" clean u.nc --normalize minmax --include /b -o m.nc
"$NA_PYTHON" - <<'PY' || fail "clean --normalize minmax vs numpy"
import netCDF4, numpy as np
a, b = netCDF4.Dataset("u.nc"), netCDF4.Dataset("m.nc")
x, y = a["b"][:].astype(np.float64), b["b"][:]
assert b["b"].dtype == np.float32 and "_Unsigned" not in b["b"].ncattrs(), b["b"].ncattrs()
assert float(b["b"]._FillValue) == 255.0, b["b"]._FillValue
assert (np.ma.getmaskarray(x) == np.ma.getmaskarray(y)).all() and y.mask.sum() == 1
lo, hi = x.min(axis=0), x.max(axis=0)
ref = ((x - lo) / (hi - lo)).astype(np.float32)
assert (ref.compressed() == y.compressed()).all(), (ref[:5], y[:5])
assert float(y[0, 0]) == 1.0   # 253 is the largest, not -3 the smallest
PY

# _Unsigned as a variable-length UTF-8 string (netCDF's setncattr_string,
# h5py's default): honoured too (round 39a: ignored, clip in the signed view)
"$NA_PYTHON" -c '
import netCDF4, numpy as np, h5py
ds = netCDF4.Dataset("vs.nc", "w"); ds.createDimension("t", 3)
v = ds.createVariable("v", "i1", ("t",)); v.setncattr_string("_Unsigned", "true")
v.set_auto_maskandscale(False); v[:] = np.array([-1, 2, 3], "i1"); ds.close()
with h5py.File("vh.h5", "w") as f:
    d = f.create_dataset("v", data=np.array([-1, 2, 3], "i1")); d.attrs["_Unsigned"] = "true"' ||
    fail "vs.nc"
for f in vs.nc vh.h5; do
    expect_exit 0 "$NANAUDIT" scan --format json $f
    expect_json "$T/stdout" '[[t[k] for k in ("dtype", "max")] for t in j["files"][0]["tensors"] if t["name"] == "/v"][0]' '["U8", 255.0]'
done
# --out-dtype: its own signed type would be read as unsigned again: exit 2;
# a wider one is written without _Unsigned, the values kept
expect_exit 2 "$NANAUDIT" clean u.nc --include /b --out-dtype I8 -o od.nc
expect_stderr_contains "/b: an _Unsigned dataset cannot be written as I8, which netCDF readers would read as unsigned again; --out-dtype U8 or a float type"
expect_exit 0 "$NANAUDIT" clean u.nc --include /b --out-dtype U16 --nonfinite keep -o od.nc
expect_exit 0 "$NA_PYTHON" -c '
import netCDF4, numpy as np
a, b = netCDF4.Dataset("u.nc")["b"], netCDF4.Dataset("od.nc")["b"]
assert b.dtype == np.uint16 and "_Unsigned" not in b.ncattrs()
assert (np.ma.getmaskarray(a[:]) == np.ma.getmaskarray(b[:])).all()
assert (a[:].compressed().astype("u2") == b[:].compressed()).all()'
pass
