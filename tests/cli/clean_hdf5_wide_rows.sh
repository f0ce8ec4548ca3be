#!/bin/bash
# A dataset whose one row is larger than the HDF5 reader's shared window
# (like hdfgroup-tlayouto.h5's /Dataset: rows of 2^28 F32, 1 GiB each;
# here with one chunk written, since a dataset never written is copied as
# a constant, clean_hdf5_unwritten.sh) cannot be cleaned row by row: exit
# 3 with one line saying so, nothing written. Before: exit 3 with the
# internal "bad HDF5 window [0, +...)".
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("wide.h5", "w") as f:
    d = f.create_dataset("Dataset", shape=(3, 2**28 + 1), dtype="f4", chunks=(1, 2**20),
                         compression="gzip")
    d[0, :2**20] = np.ones(2**20, "f4")' || fail "wide.h5"
F=wide.h5
# tlayouto.h5 itself (never written): copied, however wide its rows
expect_exit 0 "$NANAUDIT" clean "$NA_TEST_DATA/real/hdf5/hdfgroup-tlayouto.h5" --global -o t.h5
expect_stdout_contains "/Dataset: copied: no storage written: every value is the fill value (0), which no step changes; copied unchanged"
expect_exit 3 "$NANAUDIT" clean "$F" --global -o o.h5
expect_stderr_contains "/Dataset: a read of 1073741828 bytes (one row or more) is larger than the HDF5 reader's window (67108864 bytes)"
expect_stderr_lacks "bad HDF5 window"
[ ! -e o.h5 ] || fail "o.h5 written"
# Per-feature statistics for its 2^28 features would take ~110 GiB in the
# fit (before: "out of memory for 268435457 features", exit 4, where
# malloc refused; a crash by the OOM killer where it did not). Named, it
# is refused (exit 3); otherwise copied unchanged, and the report says why.
expect_exit 3 "$NANAUDIT" clean "$F" --include /Dataset -o o.h5
expect_stderr_contains "/Dataset: 268435457 elements per sample, more features than clean keeps statistics for (16777216, ~420 bytes each); --global keeps one statistic for the tensor"
[ ! -e o.h5 ] || fail "o.h5 written"
expect_exit 0 "$NANAUDIT" clean "$F" -o o.h5
expect_stdout_contains "/Dataset: copied: 268435457 elements per sample, more features than clean keeps statistics for"
pass
