#!/bin/bash
# netcdf_default_fill.sh - a netCDF-4 variable without _FillValue reads
# its unwritten cells as the netCDF default fill of its type (NC_FILL_*),
# which netCDF4-python and xarray mask as missing. They were counted as
# data: 500 cells of 9.97e36, max 9.97e36, mean 5e36, exit 0 (round 37b,
# HIGH). Now they are "missing" as a _FillValue's would be, with the same
# counts as netCDF4-python's masked view, for float, double and integer
# types; bytes only with fill on (netCDF4-python's rule), and an h5py file
# with the same fill value but no netCDF markers is data as before.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
"$NA_PYTHON" -c 'import netCDF4' 2> /dev/null || { echo "SKIP $NA_TEST_NAME: no netCDF4"; exit 0; }
cd "$T" || exit 1
"$NA_PYTHON" -c '
import netCDF4, numpy as np, h5py, json
ds = netCDF4.Dataset("d.nc", "w")
ds.createDimension("t", 100); ds.createDimension("x", 10)
for n, t in (("f", "f4"), ("d", "f8"), ("s", "i2"), ("i", "i4"), ("q", "i8"), ("u", "u4"), ("b", "i1")):
    v = ds.createVariable(n, t, ("t", "x"), chunksizes=(10, 10))
    v[:50] = np.ones((50, 10), t)
v = ds.createVariable("m", "f4", ("t", "x"), chunksizes=(10, 10))   # missing_value too
v.missing_value = np.float32(-1)
v[:50] = np.ones((50, 10), "f4"); v[0, 0] = -1
ds.close()
ds = netCDF4.Dataset("d.nc")
json.dump({n: [int(np.ma.count_masked(ds[n][:])), float(ds[n][:].max())] for n in ds.variables},
          open("want.json", "w"))
with h5py.File("h.h5", "w") as f:   # no netCDF markers: the fill is data
    f.create_dataset("f", shape=(100, 10), dtype="f4", chunks=(10, 10),
                     fillvalue=np.float32(9.969209968386869e36))[:50] = 1' || fail "inputs"
expect_exit 0 "$NANAUDIT" scan --format json d.nc
cp stdout d.json
"$NA_PYTHON" - <<'PY' || fail "netCDF-4 default fill"
import json
want = json.load(open("want.json"))
got = {t["name"].lstrip("/"): t for t in json.load(open("d.json"))["files"][0]["tensors"]}
for n, (masked, mx) in want.items():
    t = got[n]
    # netCDF4-python masks the default fill of every type but bytes (fill on here: bytes too)
    assert t["missing"] == masked, (n, t["missing"], masked)
    assert t["max"] == mx, (n, t["max"], mx)
    assert t["nan"] == 0 and t["pos_inf"] == 0, n
PY
expect_exit 0 "$NANAUDIT" info d.nc
expect_stdout_contains "fill=9.969209968386869e+36 _FillValue=9.969209968386869e+36(netCDF default)"
expect_stdout_contains "fill=-9.2233720368547758e+18 _FillValue=-9223372036854775806(netCDF default)"
expect_exit 0 "$NANAUDIT" scan --format json h.h5
expect_json "$T/stdout" 'j["files"][0]["tensors"][0]["missing"]' 0
expect_json "$T/stdout" 'j["files"][0]["tensors"][0]["max"]' 9.969209968386869e+36
pass
