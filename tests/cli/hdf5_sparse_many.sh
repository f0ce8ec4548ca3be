#!/usr/bin/env bash
# hdf5_sparse_many.sh - sparse HDF5 datasets with more than 1024 chunks
# written (issue 4). libhdf5 1.10.8 lists chunks only one index walk per
# chunk (quadratic), so the reader's child used to read such a dataset
# element by element over its whole extent, and left its chunk index
# unchecked. It now lists the chunks by walking the version 1 B-tree
# itself (formats/hdf5_chunks.c), confirmed chunk by chunk by libhdf5
# (hdf5_child.c chunk_list), and reads only the written chunks' elements.
#  - /a: F32 [2^38] in 64-element chunks, 1100 written (a 330 KB file):
#    exact counts and mean/std against h5py + numpy, in seconds (reading
#    every element would take hours: `timeout` is the guard).
#  - /b: F64 [2^20, 4096] in (16, 64) chunks, 1100 written: exact counts.
#  - /e: the same with libver "v110" (a fixed array index, paged, and
#    deflated chunks).
#  - /f: chunks narrower than the rows, 2-D (256, 1) and 3-D (7, 3, 50),
#    read chunk by chunk: the report of reading every element.
#  - clean of /c (F32 [65536, 64], (16, 64) chunks, 1100 written) with
#    --nonfinite zero: every value equals numpy's on h5py's read, and the
#    copy has the same 1100 chunks (unwritten ones stay unwritten).
#  - /a's std matches DESIGN.md's 1e-12 with merges that carry m2's
#    rounding error (na_stats_t.m2_lo; at 2^40 elements 2^26 block merges
#    had moved it by 5e-10 relative: tests/unit/test_stats.c).
#  - one chunk key of a 2^28-element dataset moved outside the extent (a
#    damaged index, which libhdf5 1.10 reads as fill value: the chunk's
#    NaN vanished): refused with exit 3, naming the key.
. "$(dirname "$0")/helpers.sh"

skip_without_hdf5

"$NA_PYTHON" - "$T" <<'PY' || fail "writing the files with h5py"
import sys
import h5py, numpy as np
t = sys.argv[1]
v = np.arange(64, dtype="<f4")
v[3], v[5] = np.nan, np.inf
with h5py.File(t + "/a.h5", "w") as f:
    d = f.create_dataset("a", shape=(1 << 38,), dtype="<f4", chunks=(64,))
    step = (1 << 32) // 1100
    for i in range(1100):
        d[i * step * 64:(i * step + 1) * 64] = v
with h5py.File(t + "/b.h5", "w") as f:
    d = f.create_dataset("b", shape=(1 << 20, 4096), dtype="<f8", chunks=(16, 64))
    blk = np.ones((16, 64))
    blk[2, 7] = np.nan
    for i in range(1100):
        r, c = (i * 911) % 65536, (i * 37) % 64
        d[r * 16:(r + 1) * 16, c * 64:(c + 1) * 64] = blk * i
with h5py.File(t + "/c.h5", "w") as f:
    d = f.create_dataset("c", shape=(65536, 64), dtype="<f4", chunks=(16, 64))
    rng = np.random.default_rng(7)
    for i in range(1100):
        r = (i * 577) % 4096
        x = rng.normal(size=(16, 64)).astype("<f4")
        x[i % 16, (3 * i) % 64] = [np.nan, np.inf, -np.inf][i % 3]
        d[r * 16:(r + 1) * 16] = x
with h5py.File(t + "/e.h5", "w", libver="v110") as f:  # fixed array index, paged
    d = f.create_dataset("e", shape=(1 << 14, 1 << 14), dtype="<f4", chunks=(64, 64),
                         compression="gzip", shuffle=True)
    for i in range(1100):
        r, c = divmod((i * 59) % 65536, 256)  # 1100 distinct slots
        d[r * 64:(r + 1) * 64, c * 64:(c + 1) * 64] = np.full((64, 64), i, "<f4")
    d[5, 5] = np.nan
with h5py.File(t + "/f.h5", "w") as f:  # chunks narrower than the rows
    rng = np.random.default_rng(3)
    d = f.create_dataset("x", shape=(4100, 3000), dtype="<f4", chunks=(256, 1),
                         fillvalue=-2.5)
    for s in rng.choice(17 * 3000, 1500, replace=False):
        i, j = divmod(int(s), 3000)
        w = rng.normal(size=(256, 1)).astype("<f4")
        w[i % 256, 0] = np.nan
        d[i * 256:(i + 1) * 256, j:j + 1] = w[:min(256, 4100 - i * 256)]
    d = f.create_dataset("y", shape=(3000, 40, 50), dtype="<f8", chunks=(7, 3, 50),
                         compression="gzip")
    for k in range(1100):
        a, b = divmod((k * 31) % (429 * 14), 14)
        d[a * 7:(a + 1) * 7, b * 3:(b + 1) * 3, :] = k
    d[0, 0, 0] = np.inf
with h5py.File(t + "/d.h5", "w") as f:
    d = f.create_dataset("d", shape=(1 << 28,), dtype="<f4", chunks=(64,))
    step = (1 << 22) // 1100
    for i in range(1100):
        d[i * step * 64:(i * step + 1) * 64] = v
PY

# /a: 2^38 elements, 1100 chunks
J='j["files"][0]["tensors"][0]'
expect_exit 1 timeout 120 "$NANAUDIT" scan --format json "$T/a.h5"
cp "$T/stdout" "$T/a.json"
expect_json "$T/a.json" "[$J[k] for k in ('elements', 'nan', 'pos_inf', 'neg_inf', 'zeros', 'unallocated_chunks', 'min', 'max')]" \
    "[274877906944, 1100, 1100, 0, $(((1 << 38) - 1100 * 64 + 1100)), $(((1 << 32) - 1100)), 0.0, 63.0]"
"$NA_PYTHON" - "$T/a.h5" "$T/a.json" <<'PY' || fail "/a: mean/std differ from h5py + numpy"
import json, sys
import h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    d = f["a"]
    n, fill = d.shape[0], float(d.fillvalue)
    step = (1 << 32) // 1100
    x = np.concatenate([d[i * step * 64:(i * step + 1) * 64] for i in range(1100)])
x = x[np.isfinite(x)].astype(np.float64)
nf = n - 1100 * 64                 # finite fill elements
cnt = x.size + nf
mean = (x.sum() + nf * fill) / cnt
std = np.sqrt((((x - mean) ** 2).sum() + nf * (fill - mean) ** 2) / cnt)
t = json.load(open(sys.argv[2]))["files"][0]["tensors"][0]
tol = 1e-12 * (abs(mean) + std)  # DESIGN.md
print(f"mean {t['mean']!r} ({mean!r}), std {t['std']!r} ({std!r})")
sys.exit(0 if abs(t["mean"] - mean) <= tol and abs(t["std"] - std) <= tol else 1)
PY

# /b: 2-D, 2^32 elements
expect_exit 1 timeout 120 "$NANAUDIT" scan --format json "$T/b.h5"
expect_json "$T/stdout" "[$J[k] for k in ('elements', 'nan', 'unallocated_chunks', 'max')]" \
    "[4294967296, 1100, $((65536 * 64 - 1100)), 1099.0]"

# /e: libver "v110" (a version 4 layout: a paged fixed array index of
# 65536 slots, deflated chunks)
expect_exit 1 timeout 120 "$NANAUDIT" scan --format json "$T/e.h5"
expect_json "$T/stdout" "[$J[k] for k in ('elements', 'nan', 'unallocated_chunks', 'min', 'max')]" \
    "[268435456, 1, $((65536 - 1100)), 0.0, 1099.0]"

# /f: chunks narrower than the rows (column chunks; 3-D), read chunk by
# chunk (hdf5_child.c rows_read): the report of reading every element,
# and h5py's counts
expect_exit 1 timeout 120 "$NANAUDIT" scan --format json "$T/f.h5"
cp "$T/stdout" "$T/f.json"
NANAUDIT_HDF5_READ_ALL=1 expect_exit 1 "$NANAUDIT" scan --format json "$T/f.h5"
cmp -s "$T/stdout" "$T/f.json" || fail "/f: NANAUDIT_HDF5_READ_ALL changes the report"
"$NA_PYTHON" - "$T/f.h5" "$T/f.json" <<'PY' || fail "/f: counts differ from h5py"
import json, sys
import h5py, numpy as np
t = {x["name"]: x for x in json.load(open(sys.argv[2]))["files"][0]["tensors"]}
with h5py.File(sys.argv[1], "r") as f:
    for name in ("x", "y"):
        a = f[name][...]
        got = [t["/" + name][k] for k in ("nan", "pos_inf", "min", "max")]
        fin = a[np.isfinite(a)]
        want = [int(np.isnan(a).sum()), int(np.isposinf(a).sum()), float(fin.min()), float(fin.max())]
        print(name, got, want, f[name].id.get_num_chunks())
        if got != want or f[name].id.get_num_chunks() in (0, t["/" + name]["unallocated_chunks"]):
            sys.exit(1)
PY

# /c: the same report when libhdf5 reads every element
expect_exit 1 "$NANAUDIT" scan --format json "$T/c.h5"
cp "$T/stdout" "$T/c.json"
NANAUDIT_HDF5_READ_ALL=1 expect_exit 1 "$NANAUDIT" scan --format json "$T/c.h5"
cmp -s "$T/stdout" "$T/c.json" || fail "/c: NANAUDIT_HDF5_READ_ALL changes the report"
expect_json "$T/c.json" "[$J[k] for k in ('nan', 'pos_inf', 'neg_inf', 'unallocated_chunks')]" \
    "[367, 367, 366, 2996]"

# clean /c: the written chunks' values as numpy makes them, the rest fill
expect_exit 0 timeout 300 "$NANAUDIT" clean --nonfinite zero "$T/c.h5" -o "$T/c.clean.h5"
"$NA_PYTHON" - "$T/c.h5" "$T/c.clean.h5" <<'PY' || fail "/c: the clean copy differs from numpy"
import sys
import h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "r") as g:
    x, y = f["c"][...], g["c"][...]
    nin, nout = f["c"].id.get_num_chunks(), g["c"].id.get_num_chunks()
want = np.where(np.isfinite(x), x, np.float32(0))
print(f"chunks {nin} -> {nout}; equal {np.array_equal(want, y)}")
sys.exit(0 if np.array_equal(want, y) and nin == nout == 1100 else 1)
PY

# a damaged key: chunk 1 of /d (offset step * 64) moved to 2^41
"$NA_PYTHON" - "$T/d.h5" <<'PY' || fail "damaging d.h5"
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
off = ((1 << 22) // 1100) * 64
k = struct.pack("<IIQQ", 256, 0, off, 0)  # size, filter mask, offsets
assert b.count(k) == 1, b.count(k)
i = b.index(k)
b[i + 8:i + 16] = struct.pack("<Q", 1 << 41)
open(p, "wb").write(b)
PY
expect_exit 3 timeout 120 "$NANAUDIT" scan "$T/d.h5"
expect_stderr_contains "d.h5: /d: the chunk index puts a chunk at [2199023255552], outside the extent or off the chunk grid (a damaged index)"
pass
