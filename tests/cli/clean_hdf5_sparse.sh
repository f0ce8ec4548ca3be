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
# When the steps change the fill value the same way in every feature
# (--nonfinite zero of a NaN fill, --normalize of one feature), the copy's
# fill value is the cleaned one (na_clean_fill_out) and the chunks stay
# unwritten; contiguous data never written stays without storage. Before,
# such a copy was written whole: tbigdims with --normalize zscore was a
# 16 GiB output (exit 4 at the disk's limit).
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
with h5py.File("nan.h5", "w") as f:
    w = f.create_dataset("w", shape=(100000,), dtype="f4", chunks=(1000,), fillvalue=np.nan)
    w[0:1000] = r.normal(size=1000)
    w[70000:70010] = r.normal(size=10)
    f.create_dataset("c", shape=(1 << 24,), dtype="f8", fillvalue=np.nan)  # no storage
    print(w.id.get_num_chunks(), f["c"].id.get_storage_size())
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

# --normalize moves the fill value, differently per feature (zscore): every
# chunk holds other values now, the fill value stays. With minmax the fill
# value 7 is every feature's maximum, 1 in each: the copy's fill value.
expect_exit 0 "$N" clean s.h5 -o m.h5 --nonfinite keep --normalize zscore --include /x
expect_exit 0 "$N" clean s.h5 -o mm.h5 --nonfinite keep --normalize minmax --include /x
"$NA_PYTHON" - <<'PY' || fail "normalized sparse output"
import h5py, numpy as np
with h5py.File("s.h5") as a, h5py.File("m.h5") as b, h5py.File("mm.h5") as c:
    assert b["x"].id.get_num_chunks() == 100, b["x"].id.get_num_chunks()
    x = a["x"][...].astype(np.float64)
    want = ((x - x.mean(0)) / x.std(0)).astype(np.float32)
    assert np.allclose(b["x"][...], want, rtol=1e-6, atol=1e-6) and b["x"].fillvalue == 7.0
    assert b["y"].id.get_num_chunks() == 2  # copied as it is
    want = ((x - x.min(0)) / (x.max(0) - x.min(0))).astype(np.float32)
    assert np.array_equal(c["x"][...], want)
    assert c["x"].id.get_num_chunks() == 2 and c["x"].fillvalue == 1.0
PY

# The fill value moves alike in every element (one feature): the copy's
# fill value is the cleaned one, the unwritten chunks stay unwritten.
expect_exit 0 "$N" clean s.h5 -o z.h5 --nonfinite keep --normalize zscore --include /y
expect_exit 0 "$N" clean s.h5 -o gm.h5 --nonfinite keep --normalize minmax --global --include /x
"$NA_PYTHON" - <<'PY' || fail "cleaned fill value"
import h5py, numpy as np
with h5py.File("s.h5") as a, h5py.File("z.h5") as b, h5py.File("gm.h5") as c:
    y = a["y"][...].astype(np.float64)
    want = ((y - y.mean()) / y.std()).astype(np.float32)
    assert b["y"].dtype == np.float32 and np.array_equal(b["y"][...], want)
    assert b["y"].id.get_num_chunks() == 2, b["y"].id.get_num_chunks()
    assert b["y"].fillvalue == np.float32(-y.mean() / y.std()), b["y"].fillvalue
    x = a["x"][...].astype(np.float64)
    want = ((x - x.min()) / (x.max() - x.min())).astype(np.float32)
    assert np.array_equal(c["x"][...], want)
    assert c["x"].id.get_num_chunks() == 2, c["x"].id.get_num_chunks()
    assert c["x"].fillvalue == want[999, 0], (c["x"].fillvalue, want[999, 0])
    assert a["x"].fillvalue == 7.0 and a["y"].fillvalue == 0
PY

# A NaN fill made 0: chunked data keeps its 2 chunks, contiguous data
# never written stays without storage (was 128 MiB written); with drop
# (the default) the NaN rows go and the fill value stays NaN.
expect_exit 0 "$N" clean nan.h5 -o nz.h5 --nonfinite zero
expect_exit 0 "$N" clean nan.h5 -o nd.h5 --include /w --max-drop-fraction 1
"$NA_PYTHON" - <<'PY' || fail "NaN fill value"
import os
import h5py, numpy as np
with h5py.File("nan.h5") as a, h5py.File("nz.h5") as b, h5py.File("nd.h5") as d:
    w = a["w"][...]
    assert np.array_equal(b["w"][...], np.where(np.isnan(w), np.float32(0), w))
    assert b["w"].id.get_num_chunks() == 2 and b["w"].fillvalue == 0
    assert b["c"].id.get_storage_size() == 0 and b["c"].fillvalue == 0
    assert b["c"].shape == (1 << 24,) and not b["c"][...].any()
    assert np.array_equal(d["w"][...], w[~np.isnan(w)]) and np.isnan(d["w"].fillvalue)
    assert np.array_equal(d["c"][...][:5], a["c"][...][:5], equal_nan=True)
assert os.path.getsize("nz.h5") < 100000, os.path.getsize("nz.h5")
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
