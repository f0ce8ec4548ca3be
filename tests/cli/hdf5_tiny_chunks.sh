#!/bin/bash
# hdf5_tiny_chunks.sh - a sparse dataset of one-element chunks is read in
# bounded memory. libhdf5 keeps a record of some KiB for every chunk one
# H5Dread meets, so a 64 MiB window of such chunks took about 6 KiB per
# element: 12 GB for 2M elements, 19 GB for 2^25 (fourteenth fresh-user
# round). The reader now reads tiny chunks 8192 chunks at a time
# (hdf5_child.c, c_read_range): 400000 one-element chunks under a 1.5 GB
# address-space limit, which the old reader exceeded ("memory allocation
# failed for chunk", exit 3). Same numbers as numpy. And clean's writer.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"
# a sanitizer reserves terabytes of address space: no limit can be set
if is_sanitized; then
    echo "SKIP hdf5_tiny_chunks (sanitizer build)"
    exit 0
fi
"$NA_PYTHON" - <<'PY' || fail "making the input"
import h5py, numpy as np
with h5py.File("tiny.h5", "w") as f:
    d = f.create_dataset("x", shape=(400000,), chunks=(1,), dtype="f4")
    d[7] = np.nan; d[123456] = -2.5; d[399999] = 3
    e = f.create_dataset("y", shape=(300, 500), chunks=(1, 1), dtype="f4")
    e[0, 0] = 2; e[299, 499] = np.inf
PY
rc=0
(ulimit -v 1500000 && exec "$N" scan --format json tiny.h5) >out.json 2>err || rc=$?
assert_eq "$rc" "1" "exit under a 1.5 GB address-space limit ($(cat err))"
"$NA_PYTHON" - <<'PY' || fail "numbers differ from numpy"
import json, h5py, numpy as np
j = json.load(open("out.json"))
t = {x["name"]: x for x in j["files"][0]["tensors"]}
with h5py.File("tiny.h5") as f:
    for k in ("x", "y"):
        a = f[k][...].astype(np.float64); fin = a[np.isfinite(a)]
        r = t["/" + k]
        assert r["nan"] == int(np.isnan(a).sum()) and r["pos_inf"] == int((a == np.inf).sum()), k
        assert r["min"] == fin.min() and r["max"] == fin.max(), (k, r["min"], r["max"])
        assert abs(r["mean"] - fin.mean()) <= 1e-12 * (abs(fin.mean()) + fin.std()), k
        assert r["zeros"] == int((a == 0).sum()), k
PY

# clean writes tiny chunks 8192 at a time too (hdf5_wchild.c,
# W_RANGE_CHUNKS): one (1, 8) chunk per row, as an append loop writes
# them, took 6.5 KiB per chunk in the writer (1.3 GB for 200000 rows;
# fifteenth fresh-user round). Under a 700 MB address-space limit, which
# the old writer exceeded ("memory allocation failed for chunk", exit 4);
# the rows numpy keeps, in chunks of one row, and the strings that follow
# them (--together).
"$NA_PYTHON" - <<'PY' || fail "making rows.h5"
import h5py, numpy as np
x = np.random.default_rng(0).normal(size=(200000, 8)).astype("f4")
x[::1000, 3] = np.nan
with h5py.File("rows.h5", "w") as f:
    f.create_dataset("x", data=x, chunks=(1, 8), maxshape=(None, 8))
    f.create_dataset("s", data=np.array([b"r%d" % i for i in range(200000)], dtype=object),
                     dtype=h5py.string_dtype(), chunks=(1,), maxshape=(None,))
PY
rc=0
(ulimit -v 700000 && exec "$N" clean -q rows.h5 -o rows.clean.h5 --together /x,/s) >out 2>err || rc=$?
assert_eq "$rc" "0" "clean under a 700 MB address-space limit ($(cat err))"
"$NA_PYTHON" - <<'PY' || fail "cleaned rows differ from numpy"
import h5py, numpy as np
with h5py.File("rows.h5") as f, h5py.File("rows.clean.h5") as g:
    x = f["x"][...]
    keep = ~np.isnan(x).any(axis=1)
    assert g["x"].chunks == (1, 8) and g["x"].maxshape == (None, 8), g["x"].chunks
    assert np.array_equal(g["x"][...], x[keep]), "values"
    # the strings that follow the group row by row (rows_copy), same cap
    assert g["s"].chunks == (1,), g["s"].chunks
    assert list(g["s"][...]) == list(f["s"][...][keep]), "strings"
PY

# variable-length sequences in (1,) chunks: batches of 65536 rows took
# 470 MB (6.5 KiB per chunk); now at most 8192 chunks per read
# (hdf5_child.c, vl_rows_cap), under a 400 MB address-space limit the old
# reader exceeded
"$NA_PYTHON" - <<'PY' || fail "making vl.h5"
import h5py, numpy as np
with h5py.File("vl.h5", "w") as f:
    d = f.create_dataset("v", shape=(200000,), dtype=h5py.vlen_dtype(np.float32), chunks=(1,),
                         maxshape=(None,))
    v = np.empty(200000, dtype=object)
    for i in range(200000):
        v[i] = np.arange(i % 5, dtype=np.float32) - 1.5
    v[77777] = np.array([np.nan, 2], np.float32)
    d[...] = v
PY
rc=0
(ulimit -v 400000 && exec "$N" scan --format json vl.h5) >vl.json 2>err || rc=$?
assert_eq "$rc" "1" "vlen scan under a 400 MB address-space limit ($(cat err))"
"$NA_PYTHON" - <<'PY' || fail "vlen numbers differ from numpy"
import json, h5py, numpy as np
r = json.load(open("vl.json"))["files"][0]["tensors"][0]
with h5py.File("vl.h5") as f:
    a = np.concatenate(list(f["v"][...])).astype(np.float64)
fin = a[np.isfinite(a)]
assert r["elements"] == a.size and r["nan"] == 1, (r["elements"], r["nan"])
assert r["min"] == fin.min() and r["max"] == fin.max(), (r["min"], r["max"])
assert abs(r["mean"] - fin.mean()) <= 1e-12 * (abs(fin.mean()) + fin.std()), r["mean"]
PY
pass
