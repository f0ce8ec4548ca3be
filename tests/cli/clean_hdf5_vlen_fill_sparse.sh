#!/bin/bash
# A chunked variable-length string dataset with a fill value of its own
# that h5py wrote only in part (unallocated chunks), untouched or named by
# --together. libhdf5 cannot read the unallocated chunks of such a
# dataset from a read-only file (it converts the fill value to its stored
# form, which writes the global heap: "no write intent on file"; h5py's
# read fails the same way), so its re-creation (rebuild, "re-create vlen
# datasets with a fill value") made every clean of the file exit 3
# ("cannot read the rows kept"). The rows of unallocated chunks are now
# left to the output's fill value, the same one: the values (read with
# the files open for writing, as libhdf5 needs), creation properties,
# attributes and allocated chunks are the input's.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py
import numpy as np
s = h5py.string_dtype()
with h5py.File("in.h5", "w") as f:
    x = np.arange(120, dtype="f4").reshape(60, 2)
    x[[3, 30, 58], 1] = np.nan            # rows in written and unwritten chunks
    f["num"] = x
    d = f.create_dataset("s", shape=(60,), maxshape=(None,), dtype=s, chunks=(7,),
                         compression="gzip", shuffle=True, fillvalue=b"FILL")
    d[0:10] = [f"r{i}" for i in range(10)]
    d[40:45] = [f"q{i}" for i in range(5)]
    d.attrs["units"] = "m"
    u = f.create_dataset("u", shape=(60, 3), dtype=s, chunks=(4, 3), fillvalue=b"?")
    u[1] = ["a", "b", "c"]
    u[57] = ["x", "y", "z"]
    f["g/alias"] = f["s"]
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean in.h5 --nonfinite zero --no-fsync -o keep.h5
expect_stdout_contains "written: keep.h5 (verified)"
expect_exit 0 "$N" clean in.h5 --together '/num,/s,/u' --no-fsync -o tog.h5
expect_stdout_contains "written: tog.h5 (verified)"
ls -a | grep -q nanaudit-tmp && fail "temporary file left"
"$NA_PYTHON" - <<'PY' || fail "outputs against the input"
import shutil
import h5py
import numpy as np
for n in ("in", "keep", "tog"):   # unallocated vlen chunks read only with write intent
    shutil.copy(n + ".h5", n + ".rw.h5")
a = h5py.File("in.rw.h5", "r+")
keep = np.isfinite(a["num"][()]).all(1)
for out, rows in (("keep", slice(None)), ("tog", keep)):
    b = h5py.File(out + ".rw.h5", "r+")
    for k in ("s", "u"):
        da, db = a[k], b[k]
        pa, pb = da.id.get_create_plist(), db.id.get_create_plist()
        assert list(db[()].ravel()) == list(da[()][rows].ravel()), (out, k)
        assert db.fillvalue == da.fillvalue and db.chunks == da.chunks, (out, k)
        assert (pb.get_fill_time(), pb.get_alloc_time()) == (pa.get_fill_time(), pa.get_alloc_time())
        assert [pb.get_filter(i)[:3] for i in range(pb.get_nfilters())] == \
               [pa.get_filter(i)[:3] for i in range(pa.get_nfilters())], (out, k)
        assert db.maxshape == (da.maxshape if out == "keep" else db.maxshape)
    assert b["s"].attrs["units"] == "m" and b["g/alias"].id == b["s"].id
    if out == "keep":   # unwritten chunks stay unallocated
        assert b["s"].id.get_num_chunks() == a["s"].id.get_num_chunks() == 4
        assert b["u"].id.get_num_chunks() == a["u"].id.get_num_chunks() == 2
PY
pass
