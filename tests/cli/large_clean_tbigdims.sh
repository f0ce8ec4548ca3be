#!/bin/bash
# large_clean_tbigdims.sh - clean of hdfgroup-tbigdims.h5 (/dset4gb: I8
# [4294967306] in 1024-element chunks, 2 of 4194305 written, fill 0).
# clean reads only the written chunks and computes one block of the fill
# value per pass (lib/clean.c, fill_blocks; clean_hdf5_fill_blocks.sh has
# the exactness cases): ~10 CPU-s here, was ~70 (bench/RESULTS.md). The
# output keeps the 2 chunks, its values read back as the input's, and the
# report's statistics are scan's (exact counts, the same mean and std).
# Label "large": ~10 s, not run by the sanitizer stages.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
BIG="$NA_TEST_DATA/real/hdf5/hdfgroup-tbigdims.h5"
N="$NANAUDIT"
expect_exit 0 timeout 300 "$N" scan --format json "$BIG"
cp stdout scan.json
expect_exit 0 timeout 300 "$N" clean "$BIG" -o out.h5 --report r.json --threads 2
expect_stdout_contains "written: out.h5 (verified)"
"$NA_PYTHON" - "$BIG" <<'PY' || fail "output against the input and scan"
import json, sys
import h5py, numpy as np
s = json.load(open("scan.json"))["files"][0]["tensors"][0]
r = json.load(open("r.json"))["tensors"][0]
b = r["before"]
assert (r["status"], r["samples_dropped"]["total"]) == ("cleaned", 0), r
assert b["finite"] == s["finite"] == 4294967306 and b["min"] == s["min"] and b["max"] == s["max"]
for k in ("mean", "std"):
    assert abs(b[k] - s[k]) <= 1e-12 * (abs(s["mean"]) + s["std"]), (k, b[k], s[k])
assert r["after"] == r["before"] or r["after"]["finite"] == b["finite"], r["after"]
with h5py.File(sys.argv[1]) as fi, h5py.File("out.h5") as fo:
    a, o = fi["dset4gb"], fo["dset4gb"]
    assert o.dtype == a.dtype and o.shape == a.shape and o.chunks == a.chunks
    assert o.id.get_num_chunks() == a.id.get_num_chunks() == 2, o.id.get_num_chunks()
    for i in range(a.id.get_num_chunks()):
        off = a.id.get_chunk_info(i).chunk_offset[0]
        assert np.array_equal(o[off:off + 1024], a[off:off + 1024]), off
    assert o[2**31:2**31 + 4096].tolist() == [0] * 4096
PY
pass
