#!/bin/bash
# Datasets of rank 2 and 3 read and written in windows of whole rows with a
# memory space of the rows' shape (formats/hdf5_child.c range_space; a 1-D
# one made libhdf5 map every element to its chunk: clean of a (20e6, 4) F32
# dataset took 12 s, now 2 s, bench/RESULTS.md). Values and order must
# come out exactly: chunks spanning whole rows or not, gzip, a row count
# that no window divides, rows wider than a chunk.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
r = np.random.default_rng(3)
with h5py.File("n.h5", "w") as f:
    f.create_dataset("a", data=r.normal(size=(50001, 3, 7)).astype(np.float32), chunks=(100, 3, 7))
    f.create_dataset("b", data=r.normal(size=(20001, 6)), chunks=(64, 2), compression="gzip")
    f.create_dataset("c", data=r.integers(-9, 9, (3001, 5, 2)).astype(np.int16), chunks=(7, 1, 2))
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean -q n.h5 -o k.h5 --nonfinite keep
expect_exit 0 "$N" clean -q n.h5 -o m.h5 --nonfinite keep --normalize minmax --exclude /c
expect_exit 0 "$N" scan --format json n.h5
cp "$T/stdout" s.json
"$NA_PYTHON" - <<'PY' || fail "values"
import h5py, json, numpy as np
j = json.load(open("s.json"))
with h5py.File("n.h5") as a, h5py.File("k.h5") as k, h5py.File("m.h5") as m:
    for name in ("a", "b", "c"):
        assert np.array_equal(a[name][...], k[name][...]), name
        x = a[name][...].astype(np.float64)
        t = next(t for t in j["files"][0]["tensors"] if t["name"] == "/" + name)
        assert t["min"] == x.min() and t["max"] == x.max(), name
        assert abs(t["mean"] - x.mean()) <= 1e-12 * (abs(x.mean()) + x.std()), name
    for name in ("a", "b"):
        x = a[name][...].astype(np.float64)
        X = x.reshape(x.shape[0], -1)
        want = ((X - X.min(0)) / (X.max(0) - X.min(0))).astype(a[name].dtype).reshape(x.shape)
        assert np.array_equal(m[name][...], want), name
PY
pass
