#!/bin/bash
# clean of sparse HDF5 datasets (issue 4: chunk shape, fill value and the
# other creation properties are kept): chunks the input never allocated
# stay unallocated in the output when their cleaned values are still the
# fill value (formats/hdf5_wchild.c, sparse_plan). Before, every chunk was
# written: hdfgroup-tbigdims.h5 (6 KB, 2 of 4194305 chunks allocated) came
# out as 4.2 GB. Pieces are left out only where an unwritten element reads
# back as the fill value: chunked, chunks contiguous in C order, fill time
# ALLOC or IFSET, incremental or late allocation; elsewhere every chunk is
# written as before. The values read back equal the input's (or numpy's
# normalization) in every case.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
r = np.random.default_rng(5)
with h5py.File("s.h5", "w") as f:
    x = f.create_dataset("x", shape=(1000, 4), dtype="f4", chunks=(10, 4), fillvalue=7.0)
    x[0:10] = r.normal(size=(10, 4))
    x[500:510] = r.normal(size=(10, 4))
    y = f.create_dataset("y", shape=(100000,), dtype="i2", chunks=(1000,))  # default fill 0
    y[0:1000] = r.integers(-50, 50, 1000)
    y[50500:51000] = r.integers(-50, 50, 500)  # half of chunk 50
    z = f.create_dataset("z", shape=(200, 6), dtype="f8", chunks=(10, 3), fillvalue=7.0)
    z[0:10] = r.normal(size=(10, 6))  # chunks not contiguous in C order
    n = f.create_dataset("n", shape=(100,), dtype="f4", chunks=(10,), fillvalue=3.0,
                         fill_time="never")
    n[0:10] = r.normal(size=10)
    g = f.create_dataset("g", shape=(1000,), dtype="f4", chunks=(10,), fillvalue=2.0,
                         compression="gzip")
    g[990:1000] = r.normal(size=10)
    print(x.id.get_num_chunks(), y.id.get_num_chunks(), z.id.get_num_chunks(),
          n.id.get_num_chunks(), g.id.get_num_chunks())
PY
N="$NANAUDIT"

# Nothing changes the values: the written chunks are the input's.
expect_exit 0 "$N" clean s.h5 -o k.h5 --nonfinite keep
"$NA_PYTHON" - <<'PY' || fail "sparse output"
import h5py, numpy as np
with h5py.File("s.h5") as a, h5py.File("k.h5") as b:
    got = {k: b[k].id.get_num_chunks() for k in ("x", "y", "z", "n", "g")}
    # x: chunks 0 and 50; y: chunks 0 and 50 (half written: its other half
    # reads as the fill value 0); z: 20 x 2 non-contiguous chunks, all
    # written; n: fill time NEVER, all written; g: gzip, 1 of 100.
    assert got == {"x": 2, "y": 2, "z": 40, "n": 10, "g": 1}, got
    for k in ("x", "y", "z", "n", "g"):
        assert a[k].dtype == b[k].dtype and a[k].chunks == b[k].chunks, k
        assert a[k].fillvalue == b[k].fillvalue, k
        assert np.array_equal(a[k][...], b[k][...]), k
    assert b["g"].compression == "gzip"
PY

# --normalize moves the fill value: every chunk holds other values now.
expect_exit 0 "$N" clean s.h5 -o m.h5 --nonfinite keep --normalize minmax --include /x
"$NA_PYTHON" - <<'PY' || fail "normalized sparse output"
import h5py, numpy as np
with h5py.File("s.h5") as a, h5py.File("m.h5") as b:
    assert b["x"].id.get_num_chunks() == 100, b["x"].id.get_num_chunks()
    x = a["x"][...].astype(np.float64)
    want = ((x - x.min(0)) / (x.max(0) - x.min(0))).astype(np.float32)
    assert np.array_equal(b["x"][...], want)
    assert b["y"].id.get_num_chunks() == 2  # copied as it is
PY

# Rows dropped: the kept rows shift, chunk boundaries move; values exact.
expect_exit 0 "$N" clean s.h5 -o d.h5 --zscore 3 --include /y --max-drop-fraction 0.5
"$NA_PYTHON" - <<'PY' || fail "dropped rows"
import h5py, numpy as np
with h5py.File("s.h5") as a, h5py.File("d.h5") as b:
    y = a["y"][...].astype(np.float64)
    keep = np.abs(y - y.mean()) <= 3 * y.std()
    assert np.array_equal(b["y"][...], a["y"][...][keep])
    assert b["y"].id.get_num_chunks() < 5, b["y"].id.get_num_chunks()
PY
pass
