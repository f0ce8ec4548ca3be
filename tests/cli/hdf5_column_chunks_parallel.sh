#!/usr/bin/env bash
# hdf5_column_chunks_parallel.sh - deflate chunks that are not whole rows
# (h5py's (15625, 1) column chunks of a tall table, 2-D tiles that do not
# divide the shape, 3-D chunks) are inflated by nanaudit on all threads
# and scattered into the window's rows (formats/hdf5_inflate.c). Checked:
# the scan JSON is byte-identical to libhdf5's own H5Dread path
# (NANAUDIT_HDF5_SERIAL=1) at --threads 1 and 2; NaN counts, min, max,
# mean and NaN locations against numpy; and the values `clean --normalize
# zscore` writes are identical on both paths and equal numpy's z-scores.
# /cols is 72 MB of F32 (4.5 MB on disk): two 64 MiB scan windows, the
# boundary inside a chunk row; /sparse has unallocated chunks (those
# windows fall back to H5Dread).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py
import numpy as np
rng = np.random.default_rng(11)
N = 1_500_000
i = np.arange(N, dtype=np.int64)[:, None]
j = np.arange(12, dtype=np.int64)[None, :]
x = (((i * 13 + j * 7) % 1000) / 8 - 60).astype("<f4")  # position-coded, compressible
x[:, 5] = np.nan                  # an all-NaN column
x[1_398_101, 3] = np.nan          # at the end of the first 64 MiB window
x[1_398_102, 0] = np.inf
x[N - 1, 11] = -np.inf            # in the partial last chunk row
t = rng.standard_normal((1001, 37))
t[1000, 36] = np.nan
t[0, 0] = -np.inf
c = rng.standard_normal((50, 33, 21)).astype("<f4")
c[49, 32, 20] = np.nan
c[17, 11, 9] = 1e6
with h5py.File("a.h5", "w") as f:
    f.create_dataset("cols", data=x, chunks=(15625, 1), compression="gzip", compression_opts=1)
    f.create_dataset("cube", data=c, chunks=(9, 12, 10), compression="gzip", shuffle=True)
    f.create_dataset("i2", data=rng.integers(-3000, 3000, (3000, 7)).astype("<i2"),
                     chunks=(700, 3), compression="gzip", shuffle=True)
    d = f.create_dataset("sparse", shape=(2000, 10), chunks=(500, 3), dtype="<f4",
                         compression="gzip", fillvalue=np.nan)
    d[0:500, 0:3] = 1.0  # 1 of 16 chunks written
    f.create_dataset("tiles", data=t.astype(">f8"), chunks=(100, 16), compression="gzip")
PY
N="$NANAUDIT"
expect_exit 1 "$N" scan --format json --max-locations 4 a.h5
cp "$T/stdout" p.json
expect_exit 1 "$N" scan --threads 1 --format json --max-locations 4 a.h5
cmp -s "$T/stdout" p.json || fail "--threads 1 changes the JSON"
NANAUDIT_HDF5_SERIAL=1 expect_exit 1 "$N" scan --threads 2 --format json --max-locations 4 a.h5
cmp -s "$T/stdout" p.json || { diff "$T/stdout" p.json | head -20; fail "parallel and H5Dread JSON differ"; }
"$NA_PYTHON" - <<'PY' || fail "scan against numpy"
import json
import h5py
import numpy as np
ts = {t["name"]: t for t in json.load(open("p.json"))["files"][0]["tensors"]}
with h5py.File("a.h5") as f:
    for k in f:
        x = f[k][()].astype(np.float64)
        t = ts["/" + k]
        fin = x[np.isfinite(x)]
        assert t["nan"] == int(np.isnan(x).sum()), (k, t["nan"])
        assert t["min"] == fin.min() and t["max"] == fin.max(), (k, t["min"], t["max"])
        assert abs(t["mean"] - fin.mean()) <= 1e-12 * (abs(fin.mean()) + fin.std()), k
        loc = [list(map(int, p)) for p in np.argwhere(np.isnan(x))[:4]]
        assert t["nan_locations"] == loc, (k, t["nan_locations"], loc)
assert ts["/sparse"]["unallocated_chunks"] == 15
assert ts["/cols"]["inf_locations"] == [[1398102, 0], [1499999, 11]], ts["/cols"]["inf_locations"]
PY
for m in par ser; do
    if [ "$m" = ser ]; then export NANAUDIT_HDF5_SERIAL=1; fi
    expect_exit 1 "$N" clean a.h5 --nonfinite keep --normalize zscore --no-fsync -o "o_$m.h5"
    expect_stdout_contains "(verified)"
done
unset NANAUDIT_HDF5_SERIAL
# A corrupt tile: an error naming its row-major place in the chunk grid
# ((1000, 2) chunks of (4000, 4): chunk (1, 1) is chunk 3); the dataset
# beside it is still audited.
"$NA_PYTHON" - <<'PY' || fail "making the corrupt input"
import h5py
import numpy as np
with h5py.File("bad.h5", "w") as f:
    f.create_dataset("bad", data=np.ones((4000, 4), "<f4"), chunks=(1000, 2),
                     compression="gzip")
    f.create_dataset("good", data=np.ones((4000, 4), "<f4"), chunks=(1000, 2),
                     compression="gzip")
with h5py.File("bad.h5", "r") as f:
    ci = f["bad"].id.get_chunk_info_by_coord((1000, 2))
b = bytearray(open("bad.h5", "rb").read())
for k in range(4, ci.size - 4):
    b[ci.byte_offset + k] ^= 0x5A
open("bad.h5", "wb").write(bytes(b))
PY
expect_exit 3 "$N" scan --format json bad.h5
expect_stderr_contains "bad.h5: /bad: chunk 3: deflate: "
expect_json "$T/stdout" '[t["status"] for t in j["files"][0]["tensors"]]' '["error", "ok"]'
"$NA_PYTHON" - <<'PY' || fail "clean: parallel against H5Dread and numpy"
import warnings
import h5py
import numpy as np
warnings.simplefilter("ignore", RuntimeWarning)  # nanmean/nanstd of the all-NaN column
with h5py.File("o_par.h5") as p, h5py.File("o_ser.h5") as s, h5py.File("a.h5") as a:
    assert sorted(p) == sorted(s) == sorted(a)
    for k in p:
        assert p[k].dtype == s[k].dtype and p[k].shape == s[k].shape, k
        assert p[k][()].tobytes() == s[k][()].tobytes(), k + ": parallel and H5Dread differ"
    x = a["cols"][()].astype(np.float64)
    y = p["cols"][()]
    v = np.where(np.isfinite(x), x, np.nan)
    with np.errstate(all="ignore"):
        ref = ((x - np.nanmean(v, 0)) / np.nanstd(v, 0)).astype(np.float32)
    ok = np.isfinite(x)
    np.testing.assert_allclose(y[ok], ref[ok], rtol=1e-6, atol=1e-6)
    assert np.isnan(y[:, 5]).all() and np.isnan(y[1_398_101, 3]) and y[1_398_102, 0] == np.inf
PY
pass
