#!/usr/bin/env bash
# hdf5_attributes.sh - --attributes (issue 3) beyond the h5py comparison of
# tests/conformance/test_hdf5_attrs.py: an attribute larger than one 64 MiB
# engine window is read whole and handed out window by window (a NaN past
# the boundary keeps its index); one larger than the reader's 66 MiB shared
# buffer is an error naming its size (exit 3), the datasets still audited;
# without the flag neither is looked at (exit 0).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
"$NA_PYTHON" - "$T/big.h5" "$T/huge.h5" <<'PY' || fail "writing files with h5py"
import sys
import h5py
import numpy as np
# 16,800,000 F32 = 67,200,000 bytes: past one 64 MiB window (16,777,216
# elements), inside the 66 MiB buffer. Dense attribute storage needs the
# newer file format (libver latest).
a = np.ones(16_800_000, dtype="f4")
a[16_777_215] = np.nan
a[16_777_300] = np.nan
with h5py.File(sys.argv[1], "w", libver="latest") as f:
    f.create_dataset("d", data=np.arange(4.0)).attrs["big"] = a
with h5py.File(sys.argv[2], "w", libver="latest") as f:
    f.create_dataset("d", data=np.arange(4.0)).attrs["huge"] = np.zeros(18_000_000, dtype="f4")
PY
expect_exit 1 "$NANAUDIT" scan --format json --attributes "$T/big.h5"
X='j["files"][0]["tensors"]'
expect_json "$T/stdout" "[(t['name'], t['status'], t['nan'], t['finite']) for t in $X]" \
    '[["/d", "ok", 0, 4], ["/d@big", "ok", 2, 16799998]]'
expect_json "$T/stdout" "$X[1]['nan_locations']" '[[16777215], [16777300]]'
expect_exit 3 "$NANAUDIT" scan --no-progress --color never --attributes "$T/huge.h5"
expect_stderr_contains "huge.h5: /d@huge: attribute of 18000000 elements is larger than the read buffer"
expect_stdout_contains "  /d "
expect_exit 0 "$NANAUDIT" scan --no-progress "$T/huge.h5"
expect_stdout_lacks "@"
pass
