#!/bin/bash
# netcdf_dimensions.sh - netCDF-4 dimensions in scan and clean (round 37b).
# A dimension without a coordinate variable is an HDF5 dimension scale
# whose NAME says "This is a netCDF dimension but not a netCDF variable";
# netCDF readers list no such variable, and nanaudit audited it as an
# all-zero F32 tensor: now it is skipped with that reason (and copied by
# clean). clean --allow-misaligned shortened a variable but not its
# dimension: netCDF4 could not read the "verified" output (Start+count
# exceeds dimension bound). Tensors that share a dimension scale along
# axis 0 (DIMENSION_LIST, the scale itself) are related whatever
# --allow-misaligned says: refused (exit 2) naming them, and --together
# over them writes a file netCDF4 reads, the dimension shortened with
# them. The same holds for h5py's dimension scales.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
"$NA_PYTHON" -c 'import netCDF4' 2> /dev/null || { echo "SKIP $NA_TEST_NAME: no netCDF4"; exit 0; }
cd "$T" || exit 1
"$NA_PYTHON" -c '
import netCDF4, numpy as np, h5py
ds = netCDF4.Dataset("d.nc", "w")
ds.createDimension("t", 100); ds.createDimension("x", 3); ds.createDimension("lat", 100)
a = ds.createVariable("a", "f4", ("t", "x")); x = np.arange(300, dtype="f4").reshape(100, 3)
x[10, 1] = np.nan; a[:] = x
ds.createVariable("b", "f8", ("t",))[:] = np.arange(100) * 0.5
ds.createVariable("lat", "f4", ("lat",))[:] = np.arange(100)     # a coordinate variable
ds.createVariable("g", "f4", ("lat",))[:] = np.arange(100) + 1   # on another dimension
ds.close()
with h5py.File("h.h5", "w") as f:                                # h5py dimension scales
    f["time"] = np.arange(50.0); f["time"].make_scale("time")
    v = np.ones((50, 2)); v[3, 0] = np.nan
    f["v"] = v; f["v"].dims[0].attach_scale(f["time"])
    f["w"] = np.zeros(50)' || fail "inputs"

expect_exit 1 "$NANAUDIT" scan d.nc
expect_stdout_contains "skipped: /t: a netCDF dimension, not a variable"
expect_stdout_contains "skipped: /x: a netCDF dimension, not a variable"
expect_stdout_contains "6 tensors (2 skipped)"
expect_stdout_lacks "note /t"
expect_exit 1 "$NANAUDIT" scan --format json d.nc
expect_json "$T/stdout" '[t["status"] for t in j["files"][0]["tensors"] if t["name"] == "/t"][0]' '"skipped"'

# the default refuses, naming only what is on /a's dimension (round 38a:
# /lat and /g, on a dimension of the same length, were named too)
expect_exit 2 "$NANAUDIT" clean d.nc -o o.nc
expect_stderr_contains "dropping 1 sample from '/a' would misalign it with '/b' and '/t' (all have 100 rows); they share its HDF5 dimension scale (in a netCDF-4 file, a dimension), which --allow-misaligned does not cover: --together to drop from all"
# --allow-misaligned does not cover the tensors on /a's dimension
expect_exit 2 "$NANAUDIT" clean d.nc --allow-misaligned -o o.nc
expect_stderr_contains "dropping 1 sample from '/a' would misalign it with '/b' and '/t' (all have 100 rows); they share its HDF5 dimension scale (in a netCDF-4 file, a dimension), which --allow-misaligned does not cover: --together to drop from all"
expect_exit 2 "$NANAUDIT" clean d.nc --together /a,/t --allow-misaligned -o o.nc
expect_stderr_contains "would misalign it with '/b' (both have 100 rows); it shares its HDF5 dimension scale"
[ -e o.nc ] && fail "a refused clean wrote o.nc"
# --together over the dimension: netCDF4 reads the output, t shortened
expect_exit 0 "$NANAUDIT" clean d.nc --together /a,/b,/t --allow-misaligned -o o.nc
expect_stdout_contains "written: o.nc (verified)"
"$NA_PYTHON" - <<'PY' || fail "netCDF4 reads the output"
import netCDF4, numpy as np
i, o = netCDF4.Dataset("d.nc"), netCDF4.Dataset("o.nc")
assert {k: len(v) for k, v in o.dimensions.items()} == {"t": 99, "x": 3, "lat": 100}, o.dimensions
keep = np.ones(100, bool); keep[10] = False
for n in "ab":
    assert np.array_equal(o[n][:], i[n][:][keep]), n
for n in ("lat", "g"):
    assert np.array_equal(o[n][:], i[n][:]), n
PY

# a variable on an unlimited dimension may hold fewer records than it
# (netCDF reads the rest as fill): dropping a record from the others would
# shift its records against time (round 38a, HIGH: exit 0, "verified")
"$NA_PYTHON" -c '
import netCDF4, numpy as np
ds = netCDF4.Dataset("u.nc", "w")
ds.createDimension("time", None); ds.createDimension("x", 2)
ds.createVariable("time", "f8", ("time",))[:] = np.arange(30) * 6.0
A = ds.createVariable("A", "f4", ("time", "x")); a = np.ones((30, 2), "f4"); a[3, 0] = np.nan; A[:] = a
B = ds.createVariable("B", "f4", ("time", "x")); B[:25] = np.arange(50, dtype="f4").reshape(25, 2)
ds.close()
assert netCDF4.Dataset("u.nc")["B"][:].shape == (30, 2)' || fail "u.nc"
expect_exit 2 "$NANAUDIT" clean u.nc --together /A,/time -o ou.nc
expect_stderr_contains "dropping 1 sample from '/A' would misalign it with '/B' (both on its HDF5 dimension scale); '/B' has 25 rows on that dimension, so no sample can go without shifting it (--nonfinite zero or mean, --outliers clip keep every row)"
expect_exit 2 "$NANAUDIT" clean u.nc --together /A,/time --allow-misaligned -o ou.nc
expect_stderr_contains "'/B' has 25 rows on that dimension"
[ -e ou.nc ] && fail "ou.nc written"
expect_exit 0 "$NANAUDIT" clean u.nc --nonfinite zero -o ou.nc

# h5py dimension scales: the same rule
expect_exit 2 "$NANAUDIT" clean h.h5 --allow-misaligned -o oh.h5
expect_stderr_contains "would misalign it with '/time' (both have 50 rows); it shares its HDF5 dimension scale"
expect_exit 0 "$NANAUDIT" clean h.h5 --together /v,/time --allow-misaligned -o oh.h5
expect_exit 0 "$NA_PYTHON" -c '
import h5py
f = h5py.File("oh.h5")
assert f["v"].shape == (49, 2) and f["time"].shape == (49,) and f["w"].shape == (50,)
assert f["time"][3] == 4.0'

# round 39a: a scale used on a later axis (a(time, f), f a coordinate)
# cannot lose rows: a(time, f) would read as (10, 3), a column hidden
"$NA_PYTHON" -c '
import netCDF4, numpy as np
ds = netCDF4.Dataset("ax.nc", "w")
ds.createDimension("time", 10); ds.createDimension("f", 4)
ds.createVariable("f", "f8", ("f",))[:] = np.arange(4.0)
w = ds.createVariable("w", "f8", ("f",)); x = np.arange(4.0); x[1] = np.nan; w[:] = x
ds.createVariable("a", "f8", ("time", "f"))[:] = np.arange(40.0).reshape(10, 4)
ds.close()' || fail "ax.nc"
expect_exit 2 "$NANAUDIT" clean ax.nc --together /w,/f --max-drop-fraction 0.5 -o oax.nc
expect_stderr_contains "dropping 1 sample from '/f' would shorten an HDF5 dimension scale that a dataset uses on an axis other than 0"
[ -e oax.nc ] && fail "oax.nc written"
# several scales on axis 0: /a (s1, s2) and /b (s2) share s2
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("ms.h5", "w") as f:
    for n in ("s1", "s2"):
        f[n] = np.arange(10.0); f[n].make_scale(n)
    a = np.ones(10); a[2] = np.nan; f["a"] = a; f["b"] = np.ones(10)
    f["a"].dims[0].attach_scale(f["s1"]); f["a"].dims[0].attach_scale(f["s2"])
    f["b"].dims[0].attach_scale(f["s2"])' || fail "ms.h5"
expect_exit 2 "$NANAUDIT" clean ms.h5 --together /a,/s1 --allow-misaligned --max-drop-fraction 0.5 -o oms.h5
expect_stderr_contains "would misalign it with '/b' and '/s2'"
# a compound dataset's fields share its scale
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("cs.h5", "w") as f:
    f["s"] = np.arange(10.0); f["s"].make_scale("s")
    c = np.zeros(10, dtype=[("x", "f8"), ("y", "f8")]); c["x"][4] = np.nan; f["c"] = c
    f["p"] = np.ones(10)
    f["c"].dims[0].attach_scale(f["s"]); f["p"].dims[0].attach_scale(f["s"])' || fail "cs.h5"
expect_exit 2 "$NANAUDIT" clean cs.h5 --together "/c.*" --allow-misaligned --max-drop-fraction 0.5 -o ocs.h5
expect_stderr_contains "would misalign it with '/p' and '/s'"
# an unlimited dimension without a variable: netCDF-C's scale has extent
# 0, no records to shift; the variables on it lose their row together
# (round 39a: refused, a regression of this session)
"$NA_PYTHON" -c '
import netCDF4, numpy as np
ds = netCDF4.Dataset("ul.nc", "w"); ds.createDimension("obs", None)
x = ds.createVariable("x", "f8", ("obs",)); v = np.arange(10.0); v[3] = np.nan; x[:] = v
ds.createVariable("y", "f8", ("obs",))[:] = np.arange(10.0) * 2
ds.close()' || fail "ul.nc"
for t in /x,/y /x,/y,/obs; do
    expect_exit 0 "$NANAUDIT" clean ul.nc --together $t --max-drop-fraction 0.5 -o oul.nc --force
    expect_exit 0 "$NA_PYTHON" -c '
import netCDF4, numpy as np
d = netCDF4.Dataset("oul.nc")
assert len(d.dimensions["obs"]) == 9 and d["y"][:].tolist() == [k * 2.0 for k in range(10) if k != 3]'
done
pass
