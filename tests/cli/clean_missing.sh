#!/bin/bash
# clean and CF missing values (_FillValue / missing_value, --missing auto,
# the default): a value equal to its dataset's marker is left alone -
# out of every statistic, never dropped, replaced or clipped, written
# back as the marker - and counted in the report ("missing" before and
# after); --exclude copies the dataset byte for byte, --missing none
# cleans the markers as values; a dataset that declares a marker but
# holds none is cleaned as usual. Every option against numpy:
# tests/conformance/test_clean_missing.py.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
skip_without_hdf5
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("w.h5", "w") as f:
    d = f.create_dataset("fill", data=np.array([1, -999, 2, 3, -999, 100], "f8"))
    d.attrs["_FillValue"] = np.float64(-999)
    e = f.create_dataset("declared", data=np.array([1, 2, 3, 5], "f8"))
    e.attrs["missing_value"] = np.float64(-1)
    f.create_dataset("plain", data=np.arange(6.0))
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean w.h5 -o o.h5 --normalize minmax --report r.json
expect_stdout_contains "    before finite 4  nan 0  inf 0  missing 2  min 1  max 100  mean 26.5  std 42.4411"
expect_stdout_contains "    after  finite 4  nan 0  inf 0  missing 2  min 0  max 1  mean 0.257576  std 0.428698"
"$NA_PYTHON" - <<'PY' || fail "markers left alone"
import h5py, json, numpy as np
x = np.array([1, -999, 2, 3, -999, 100], "f8")
m = x == -999
ref = x.copy()
ref[~m] = (x[~m] - x[~m].min()) / (x[~m].max() - x[~m].min())
with h5py.File("o.h5") as f:
    assert np.array_equal(f["fill"][:], ref), f["fill"][:]
    assert f["fill"].attrs["_FillValue"] == -999
    assert np.allclose(f["declared"][:], (np.array([1, 2, 3, 5.0]) - 1) / 4, rtol=0, atol=1e-15)
r = {t["name"]: t for t in json.load(open("r.json"))["tensors"]}
assert r["/fill"]["before"]["missing"] == 2 and r["/fill"]["after"]["missing"] == 2, r["/fill"]
assert r["/fill"]["before"]["finite"] == 4 and r["/fill"]["before"]["nan"] == 0
assert r["/fill"]["missing_collisions"] == 0 and r["/fill"]["warnings"] == []
assert r["/declared"]["before"]["missing"] == 0 and r["/plain"]["after"]["missing"] == 0
PY
rm -f o.h5
expect_exit 0 "$N" clean w.h5 -o o.h5 --normalize minmax --exclude /fill
"$NA_PYTHON" - <<'PY' || fail "--exclude output"
import h5py, numpy as np
with h5py.File("o.h5") as f:
    assert f["fill"][:].tolist() == [1, -999, 2, 3, -999, 100], f["fill"][:]
    assert f["fill"].attrs["_FillValue"] == -999
    assert np.allclose(f["plain"][:], np.arange(6.0) / 5, rtol=0, atol=1e-15), f["plain"][:]
PY
rm -f o.h5
expect_exit 0 "$N" clean w.h5 -o o.h5 --normalize minmax --missing none
expect_stdout_contains "    before finite 6  nan 0  inf 0  min -999  max 100"
"$NA_PYTHON" - <<'PY' || fail "--missing none output"
import h5py, numpy as np
x = np.array([1, -999, 2, 3, -999, 100], "f8")
with h5py.File("o.h5") as f:
    assert np.allclose(f["fill"][:], (x - x.min()) / (x.max() - x.min()), rtol=0, atol=1e-15)
PY
pass
