#!/bin/bash
# clean_hdf5_fill_blocks.sh - clean reads no unwritten HDF5 chunk and
# computes one block of their fill value per pass (lib/clean.c,
# fill_blocks / fill_reuse), with the results of computing every block:
# the values against numpy, the JSON identical for --threads 1 and 2.
# Before, clean read and transformed every fill value: a 256 MiB I8
# dataset with two chunks written took 4.6 s, hdfgroup-tbigdims.h5 (4 GiB,
# large_clean_tbigdims.sh) 70 CPU-s. Cases: a finite fill value; a NaN
# fill value, whose rows the non-finite step drops (the shortcut is off
# once a fill block drops rows); a fill value that is a CF _FillValue
# (missing, left out of every statistic); a fill value that is an outlier.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
r = np.random.default_rng(3)
with h5py.File("fs.h5", "w") as f:
    d = f.create_dataset("a", shape=(300000,), dtype="f4", chunks=(20000,), fillvalue=7.0)
    d[0:20000] = r.normal(size=20000)
    d[150000:170000] = r.normal(size=20000) * 3
    d[170005] = np.nan
    e = f.create_dataset("n", shape=(300000,), dtype="f8", chunks=(20000,), fillvalue=np.nan)
    e[40000:60000] = r.normal(size=20000)
    g = f.create_dataset("m", shape=(300000,), dtype="f4", chunks=(20000,), fillvalue=-9999.0)
    g.attrs["_FillValue"] = np.float32(-9999.0)
    g[100000:120000] = r.normal(size=20000)
    h = f.create_dataset("o", shape=(300000,), dtype="i2", chunks=(20000,), fillvalue=900)
    h[0:20000] = r.integers(-5, 5, 20000)
PY
N="$NANAUDIT"
OPTS=(--allow-misaligned --max-drop-fraction 1)
for th in 1 2; do
    expect_exit 0 "$N" clean fs.h5 --zscore 3 --normalize minmax "${OPTS[@]}" --threads $th \
        -o "o$th.h5" --report "r$th.json"
done
"$NA_PYTHON" - <<'PY' || fail "values against numpy"
import json
import h5py, numpy as np
def ref(x, missing=None):
    keep = np.isfinite(x)
    m = np.zeros(x.shape, bool) if missing is None else x == missing
    v = x[keep & ~m].astype(np.float64)
    k2 = np.abs(x - v.mean()) <= 3 * v.std()  # NaN compares False: dropped
    rows = (keep & k2) | m
    y = x[rows].astype(np.float64)
    w = y[~(y == missing)] if missing is not None else y
    lo, hi = w.min(), w.max()
    z = (y - lo) / (hi - lo) if hi > lo else np.zeros(y.shape)  # constant: LO
    out = np.where(y == missing, missing, z) if missing is not None else z
    return rows, out
dropped = {}
with h5py.File("fs.h5") as f, h5py.File("o1.h5") as o:
    for name, miss in (("a", None), ("n", None), ("m", -9999.0), ("o", None)):
        x = f[name][:]
        rows, want = ref(x.astype(np.float64), miss)
        dropped["/" + name] = int(len(x) - rows.sum())
        got = o[name][:]
        dt = np.float32 if x.dtype != np.float64 else np.float64
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got, want.astype(dt)), (name, got[:5], want[:5])
r1, r2 = (json.load(open(p)) for p in ("r1.json", "r2.json"))
for k in ("input_sha256", "output"):
    r1.pop(k, None), r2.pop(k, None)
assert r1 == r2, "--threads 1 and 2 differ"
t = {e["name"]: e for e in r1["tensors"]}
assert {k: v["samples_dropped"]["total"] for k, v in t.items()} == dropped, dropped
assert t["/a"]["before"]["finite"] == 299999 and t["/m"]["before"]["missing"] == 280000
assert dropped["/n"] >= 280000 and dropped["/o"] >= 19000, dropped  # NaN fill; outliers beside 900s
PY
pass
