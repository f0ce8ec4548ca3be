#!/bin/bash
# clean of gzip-compressed HDF5 datasets: the writer's child deflates the
# whole chunks of a window on --threads POSIX threads and stores them with
# H5Dwrite_chunk (formats/hdf5_wdeflate.c); libhdf5 writes the chunks a
# window boundary or the extent cuts, and every other pipeline. Checked
# for each file: the values against numpy; the stored chunks (filter mask
# and bytes, h5py read_direct_chunk) and the creation properties
# identical to libhdf5's own write of the same output
# (NANAUDIT_HDF5_SERIAL_WRITE=1); --threads 1 and 2 identical (but col).
# Files:
#   col    (3e6, 3) F32 gzip 1, (40000, 1) column chunks: 36 MB, two
#          writer windows, the second starting mid-row and mid-chunk-row;
#          dropped NaN rows leave a partial edge chunk row
#   sh2    (50000, 7) F32 shuffle + gzip 4, (6000, 3): chunks dividing
#          neither dimension (edge chunks along both)
#   d3     (2000, 6, 5) F64 shuffle + gzip 9, (128, 3, 2): 3-D chunks
#   rows   (20000, 4) F32 gzip 6, (1000, 4) whole-row chunks with a band
#          of zeros: all fill-value chunks are left out, as libhdf5's
#          path leaves them (sparse_plan)
#   fl, be fletcher32 + gzip, and a big-endian F32 in shuffle + gzip
#          (the data arrives little-endian: libhdf5 converts): libhdf5
#          writes them (the old path)
#   lz     lzf (h5py's own filter, not in libhdf5): refused as before
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py
import numpy as np
rng = np.random.default_rng(11)
def q(shape, dt=np.float32):   # values that deflate quickly
    return (rng.integers(-500, 500, size=shape) / 16).astype(dt)
col = q((3_000_000, 3))
col[[7, 2_796_202], [1, 2]] = np.nan   # one in the first window's cut row
sh2 = q((50_000, 7))
sh2[49_999, 6] = np.inf
d3 = q((2000, 6, 5), np.float64) + rng.normal(size=(2000, 6, 5))
rows = q((20_000, 4))
rows[5000:12000] = 0
rows[3, 3] = np.nan
fl = q((30_000, 4))
for name, x, kw in [
        ("col", col, dict(chunks=(40000, 1), compression="gzip", compression_opts=1)),
        ("sh2", sh2, dict(chunks=(6000, 3), compression="gzip", shuffle=True)),
        ("d3", d3, dict(chunks=(128, 3, 2), compression="gzip", compression_opts=9,
                        shuffle=True)),
        ("rows", rows, dict(chunks=(1000, 4), compression="gzip", compression_opts=6)),
        ("fl", fl, dict(chunks=(1000, 2), compression="gzip", fletcher32=True)),
        ("be", fl.astype(">f4"), dict(chunks=(1000, 4), compression="gzip", shuffle=True)),
        ("lz", fl, dict(chunks=(1000, 2), compression="lzf", shuffle=True))]:
    with h5py.File(name + ".h5", "w") as f:
        f.create_dataset("x", data=x, **kw)
PY
N="$NANAUDIT"
expect_exit 3 "$N" clean lz.h5 --normalize zscore --no-fsync -o lz.new.h5
expect_stderr_contains "nanaudit: lz.h5: /x: HDF5 filter 32000 (lzf) is not available in this libhdf5"
[ ! -e lz.new.h5 ] || fail "lz.new.h5 written"
for f in col sh2 d3 rows fl be; do
    args=(--normalize zscore)
    [ "$f" = rows ] && args=(--nonfinite zero)
    expect_exit 0 "$N" clean "$f.h5" "${args[@]}" --no-fsync --threads 2 -o "$f.new.h5"
    expect_stdout_contains "written: $f.new.h5 (verified)"
    if [ "$f" = col ]; then # the 36 MB file: --threads 1 on the others (time)
        ln -s col.new.h5 col.t1.h5
    else
        expect_exit 0 "$N" clean "$f.h5" "${args[@]}" --no-fsync --threads 1 -o "$f.t1.h5"
    fi
    expect_exit 0 env NANAUDIT_HDF5_SERIAL_WRITE=1 "$N" clean "$f.h5" "${args[@]}" \
        --no-fsync --threads 2 -o "$f.ref.h5"
done
"$NA_PYTHON" - <<'PY' || fail "outputs against numpy and libhdf5's write"
import h5py
import numpy as np

def chunks(d):
    out = {}
    for i in range(d.id.get_num_chunks()):
        off = d.id.get_chunk_info(i).chunk_offset
        out[off] = d.id.read_direct_chunk(off)
    return out

def props(d):
    p = d.id.get_create_plist()
    return (d.shape, d.dtype.str, d.chunks, d.compression, d.compression_opts, d.shuffle,
            d.fletcher32, d.fillvalue, p.get_fill_time(), p.get_alloc_time(),
            [p.get_filter(i) for i in range(p.get_nfilters())])

for name in ["col", "sh2", "d3", "rows", "fl", "be"]:
    x = h5py.File(name + ".h5")["x"][()].astype(np.float64)
    new, t1, ref = (h5py.File(f"{name}.{k}.h5")["x"] for k in ("new", "t1", "ref"))
    y = new[()]
    assert props(new) == props(ref) == props(t1), (name, props(new), props(ref))
    for other in (t1, ref):
        assert np.array_equal(y, other[()], equal_nan=True), name
        assert chunks(new) == chunks(other), name + ": stored chunks differ"
    if name == "rows":   # --nonfinite zero: the values, zero chunks left out
        x[3, 3] = 0
        assert np.array_equal(y, x.astype(np.float32)), name
        assert new.id.get_num_chunks() == 13, new.id.get_num_chunks()
        continue
    keep = np.isfinite(x).reshape(len(x), -1).all(1)   # rows with NaN/Inf dropped
    x = x[keep]
    ref_z = ((x - x.mean(0)) / x.std(0)).astype(np.float32)
    assert y.shape == ref_z.shape, (name, y.shape, ref_z.shape)
    np.testing.assert_allclose(y, ref_z, rtol=1e-6, atol=1e-6, err_msg=name)
PY
pass
