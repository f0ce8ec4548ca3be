#!/usr/bin/env bash
# hdf5_parallel.sh - parallel decompression (issue 3): deflate and
# shuffle+deflate chunks inflated by nanaudit on all threads give a JSON
# report byte-identical to libhdf5's own H5Dread path
# (NANAUDIT_HDF5_SERIAL=1), for 1-D and row-chunked 2-D data, both byte
# orders, a partial last chunk, a window boundary inside a chunk (a
# dataset larger than one 64 MiB window), unallocated chunks (which fall
# back to H5Dread) and any --threads.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
F="$T/par.h5"
"$NA_PYTHON" - "$F" <<'PY' || fail "writing $F with h5py"
import sys
import h5py
import numpy as np
rng = np.random.default_rng(7)
with h5py.File(sys.argv[1], "w") as f:
    big = rng.integers(-500, 500, 18_000_001).astype("<f4") / 8  # > 64 MiB: 2 windows
    big[12_345_678] = np.nan
    big[17_000_000] = 1e6
    f.create_dataset("big_shuffle", data=big, chunks=(1_000_000,), compression="gzip",
                     compression_opts=1, shuffle=True)
    m = rng.standard_normal((1001, 37))
    m[1000, 36] = -np.inf
    f.create_dataset("rows_be", data=m.astype(">f8"), chunks=(64, 37), compression="gzip")
    f.create_dataset("i2", data=rng.integers(-3000, 3000, (500, 3)).astype("<i2"),
                     chunks=(7, 3), compression="gzip", shuffle=True)
    d = f.create_dataset("sparse", shape=(1000, 100), chunks=(100, 100), dtype="<f4",
                         compression="gzip", fillvalue=np.nan)
    d[0:300] = 1.0  # 3 of 10 chunks written: the window falls back to H5Dread
    f.create_dataset("cols", data=rng.standard_normal((40, 40)), chunks=(40, 8),
                     compression="gzip")  # 2.5 KiB chunks: H5Dread
PY
expect_exit 1 "$NANAUDIT" scan --format json "$F"
cp "$T/stdout" "$T/par.json"
for th in 1 2; do
    expect_exit 1 "$NANAUDIT" scan --threads "$th" --format json "$F"
    cmp -s "$T/stdout" "$T/par.json" || fail "--threads $th changes the JSON"
done
NANAUDIT_HDF5_SERIAL=1 expect_exit 1 "$NANAUDIT" scan --format json "$F"
cmp -s "$T/stdout" "$T/par.json" || { diff "$T/stdout" "$T/par.json" | head -20; fail "parallel and H5Dread JSON differ"; }
expect_json "$T/par.json" '[t["nan"] for t in j["files"][0]["tensors"]]' '[1, 0, 0, 0, 70000]'
expect_json "$T/par.json" '[t["unallocated_chunks"] for t in j["files"][0]["tensors"]]' '[0, 0, 0, 0, 7]'
expect_json "$T/par.json" 'j["files"][0]["tensors"][0]["nan_locations"]' '[[12345678]]'
expect_json "$T/par.json" 'j["files"][0]["tensors"][3]["inf_locations"]' '[[1000, 36]]'
pass
