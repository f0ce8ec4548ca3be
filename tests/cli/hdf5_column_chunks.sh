#!/bin/bash
# HDF5 windows that start or end inside a row (hdf5_child.c row_parts):
# scan's windows are a number of elements, and clean's writer gets
# windows of the shared mapping (32 MiB), neither a multiple of a
# 12-value row. The partial rows are read and written apart from the
# whole rows (libhdf5 moved a window with a partial row element by
# element: a scan of h5py's automatic (15625, 1) chunks took 7x h5py's
# time). Checked: scan's statistics and locations against numpy, and a
# clean of 38 MB (two writer windows, the second starting mid-row)
# against numpy's z-scores.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py
import numpy as np
rng = np.random.default_rng(5)
x = rng.normal(size=(800_000, 12)).astype(np.float32)
x[699_050, 7] = np.nan      # in the first writer window's partial last row
x[699_051, 2] = np.inf
with h5py.File("c.h5", "w") as f:
    f.create_dataset("x", data=x, chunks=(15625, 1))
PY
N="$NANAUDIT"
expect_exit 1 "$N" scan c.h5 --format json --max-locations 5
printf '%s' "$(cat "$T/stdout")" > s.json
"$NA_PYTHON" - <<'PY' || fail "scan against numpy"
import json
import h5py
import numpy as np
t = json.load(open("s.json"))["files"][0]["tensors"][0]
x = h5py.File("c.h5")["x"][()].astype(np.float64)
f = x[np.isfinite(x)]
assert (t["nan"], t["pos_inf"]) == (1, 1), (t["nan"], t["pos_inf"])
assert t["min"] == f.min() and t["max"] == f.max()
assert abs(t["mean"] - f.mean()) <= 1e-12 * (abs(f.mean()) + f.std())
assert abs(t["std"] - f.std()) <= 1e-12 * (abs(f.mean()) + f.std())
PY
expect_exit 1 "$N" clean c.h5 --nonfinite keep --normalize zscore --no-fsync -o o.h5
expect_stdout_contains "written: o.h5 (verified)"
"$NA_PYTHON" - <<'PY' || fail "clean against numpy"
import h5py
import numpy as np
x = h5py.File("c.h5")["x"][()].astype(np.float64)
y = h5py.File("o.h5")["x"][()]
m = np.nanmean(np.where(np.isfinite(x), x, np.nan), 0)
s = np.nanstd(np.where(np.isfinite(x), x, np.nan), 0)
ref = ((x - m) / s).astype(np.float32)
ok = np.isfinite(x)
np.testing.assert_allclose(y[ok], ref[ok], rtol=1e-6, atol=1e-6)
assert np.isnan(y[699_050, 7]) and y[699_051, 2] == np.inf
assert h5py.File("o.h5")["x"].chunks == (15625, 1)
PY
pass
