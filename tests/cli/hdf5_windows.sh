#!/usr/bin/env bash
# hdf5_windows.sh - a chunked dataset larger than one 64 MiB engine window,
# read by the libhdf5 child with H5Dread of a flat element range (a union
# of hyperslabs, formats/hdf5_child.c select_range): the window boundary
# at element 16777216 falls inside row 4093 of a 4099 x 4099 F32 array
# with 64 x 64 chunks. NaN / -Inf planted on both sides of it must be
# found at their row-major indices, and the statistics must be those of
# the values written.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
F="$T/win.h5"
"$NA_PYTHON" - "$F" <<'PY' || fail "writing $F with h5py"
import sys
import h5py
import numpy as np
n = 4099
x = (np.arange(n * n, dtype=np.int64) % 1000).astype("<f4").reshape(n, n)
x[4093, 5] = np.nan      # flat 16777212: before the boundary
x[4093, 20] = np.nan     # after it
x[4098, 4098] = np.nan
x[4093, 10] = -np.inf    # flat 16777217
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("x", data=x, chunks=(64, 64))
PY
expect_exit 1 "$NANAUDIT" scan --format json "$F"
cp "$T/stdout" "$T/w.json"
X='j["files"][0]["tensors"]'
expect_json "$T/w.json" "[t['name'] for t in $X]" '["/x"]'
expect_json "$T/w.json" "$X[0]['nan_locations']" '[[4093, 5], [4093, 20], [4098, 4098]]'
expect_json "$T/w.json" "$X[0]['inf_locations']" '[[4093, 10]]'
expect_json "$T/w.json" "[(t['nan'], t['neg_inf'], t['finite'], t['min'], t['max'], t['zeros']) for t in $X]" \
    '[[3, 1, 16801797, 0.0, 999.0, 16802]]'
pass
