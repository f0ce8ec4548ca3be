#!/bin/bash
# HDF5 dimension scales (netCDF-4 coordinate variables: /time, /lat) are
# coordinates, not data: clean copies them unless --include or --together
# names them (fourth fresh-user round: the README's netCDF example turned
# a file's x/y coordinates into z-scores). Rows dropped from the data
# still cannot leave the coordinate misaligned: that is refused with the
# --together hint, and --together /x,/time drops the row from both.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("ds.h5", "w") as f:
    t = f.create_dataset("time", data=np.arange(20.0) + 100)
    t.make_scale("time")
    x = np.arange(20.0) * 2; x[3] = np.nan
    d = f.create_dataset("x", data=x)
    d.dims[0].attach_scale(t)
PY
SCALE="an HDF5 dimension scale (coordinates): copied unchanged (--include it to clean it)"
# normalized data, coordinates untouched
expect_exit 0 "$N" clean ds.h5 -o n.h5 --nonfinite zero --normalize zscore --format json
expect_json "$T/stdout" '[(t["name"], t["status"], t.get("reason")) for t in j["tensors"]]' \
    "[[\"/time\", \"copied\", \"$SCALE\"], [\"/x\", \"cleaned\", null]]"
"$NA_PYTHON" - <<'PY' || fail "n.h5 values"
import h5py, numpy as np
with h5py.File("n.h5") as f:
    assert f["time"][:].tolist() == (np.arange(20.0) + 100).tolist(), f["time"][:]
    assert f["time"].attrs["CLASS"] == b"DIMENSION_SCALE"
    x = np.arange(20.0) * 2; x[3] = 0.0
    assert np.allclose(f["x"][:], (x - x.mean()) / x.std(), rtol=0, atol=1e-12), f["x"][:]
    assert f["x"].dims[0][0].name == "/time"
PY
# dropping a row from /x alone would misalign it with its coordinate
expect_exit 2 "$N" clean ds.h5 -o d.h5 --max-drop-fraction 0.5
expect_stderr_contains "dropping 1 sample from '/x' would misalign it with '/time' (both have 20 rows)"
[ ! -e d.h5 ] || fail "d.h5 written"
# --together names the coordinate: the row goes from both
expect_exit 0 "$N" clean -q ds.h5 -o t.h5 --max-drop-fraction 0.5 --together /x,/time
"$NA_PYTHON" - <<'PY' || fail "t.h5 values"
import h5py, numpy as np
keep = [i for i in range(20) if i != 3]
with h5py.File("t.h5") as f:
    assert f["time"][:].tolist() == [i + 100.0 for i in keep], f["time"][:]
    assert f["x"][:].tolist() == [i * 2.0 for i in keep], f["x"][:]
    assert f["time"].attrs["CLASS"] == b"DIMENSION_SCALE" and f["x"].dims[0][0].name == "/time"
PY
# ... and keeps its values whatever the steps (it was normalized too): the
# coordinate loses row 3 with /x, which is normalized; /time's own NaN
# (row 7) drops nothing and stays (exit 1), and --save-params
# has no statistics for it (an --apply-params run does not need any)
"$NA_PYTHON" - <<'PY' || fail "making dsn.h5"
import h5py, numpy as np
with h5py.File("dsn.h5", "w") as f:
    tm = np.arange(20.0) + 100; tm[7] = np.nan
    t = f.create_dataset("time", data=tm)
    t.make_scale("time")
    x = np.arange(20.0) * 2; x[3] = np.nan
    d = f.create_dataset("x", data=x)
    d.dims[0].attach_scale(t)
PY
expect_exit 1 "$N" clean dsn.h5 -o tn.h5 --max-drop-fraction 0.5 --together /x,/time \
    --normalize minmax --zscore 3 --save-params p.json --report rn.json
expect_json rn.json '[(t["name"], t["status"], t["samples_dropped"]["total"]) for t in j["tensors"]]' \
    '[["/time", "cleaned", 1], ["/x", "cleaned", 1]]'
expect_json rn.json 'j["tensors"][0]["reason"]' \
    '"an HDF5 dimension scale (coordinates) named by --together: loses the samples its partners drop, values unchanged"'
expect_json rn.json '[j["tensors"][0]["after"][k] for k in ("nan", "finite")]' '[1, 18]'
# the text says why it has no steps and why the run exits 1
expect_stdout_contains "    an HDF5 dimension scale (coordinates) named by --together: loses the samples its partners drop, values unchanged"
expect_stdout_contains "    warning: 1 NaN/Inf value(s) left as they are (it follows its --together partners; no step runs on it)"
expect_json rn.json 'j["tensors"][0]["warnings"]' '["1 NaN/Inf value(s) left as they are (it follows its --together partners; no step runs on it)"]'
expect_json p.json 'sorted(j["tensors"])' '["/x"]'
"$NA_PYTHON" - <<'PY' || fail "tn.h5 values"
import h5py, numpy as np
keep = [i for i in range(20) if i != 3]
with h5py.File("tn.h5") as f:
    tm = f["time"][:]
    assert np.isnan(tm[6]) and [v for k, v in enumerate(tm.tolist()) if k != 6] == \
        [i + 100.0 for i in keep if i != 7], tm
    x = np.array([i * 2.0 for i in keep])
    assert np.array_equal(f["x"][:], (x - x.min()) / (x.max() - x.min())), f["x"][:]
    assert f["x"].dims[0][0].name == "/time"
PY
# fit on one file, apply to another: the coordinate needs no parameters
expect_exit 1 "$N" clean dsn.h5 -o ta.h5 --max-drop-fraction 0.5 --together /x,/time \
    --normalize minmax --zscore 3 --apply-params p.json
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("ta.h5") as a, h5py.File("tn.h5") as b:
    assert np.array_equal(a["x"][:], b["x"][:])
    assert np.array_equal(a["time"][:], b["time"][:], equal_nan=True)' || fail "ta.h5 values"
# --include names it: cleaned as asked
expect_exit 0 "$N" clean -q ds.h5 -o i.h5 --include /time --normalize minmax
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("i.h5") as f:
    assert np.allclose(f["time"][:], np.arange(20.0) / 19, rtol=0, atol=1e-15), f["time"][:]' ||
    fail "i.h5 values"
# a netCDF-4 file written by netCDF-C: its dimensions (without coordinate
# variables: no variables to netCDF readers) are copied
expect_exit 0 "$N" clean --dry-run "$NA_TEST_DATA/real/netcdf/nc4py-issue672.nc" --normalize zscore
expect_stdout_contains "/numCells: copied: a netCDF dimension, not a variable"
expect_stdout_contains "/numSigma: copied: a netCDF dimension, not a variable"
expect_stdout_contains "/azi_angle_trip: I16 -> F32"
pass
