#!/bin/bash
# An HDF5 file in a newer format than the build's libhdf5 reads (seventh
# fresh-user round): h5py 3.16 (HDF5 2.0) with libver="latest" writes a
# gzip-chunked dataset's layout message in a version Debian 12's libhdf5
# 1.10.8 does not know. scan said only "cannot open the dataset: bad
# version number for layout message", which reads like a broken file; the
# line now says that the format may be newer than this libhdf5 (and which
# version that is). Still exit 3 for that dataset, the others audited.
# Skipped where the build's libhdf5 reads the file (a newer libhdf5).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np, h5py
with h5py.File("new.h5", "w", libver="latest") as f:
    f.create_dataset("c", data=np.arange(60.0).reshape(20, 3), chunks=(5, 3), compression="gzip")
    f.create_dataset("k", data=np.arange(6.0))
PY
N="$NANAUDIT"
LAST_RC=0
"$N" scan -q new.h5 >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
if [ "$LAST_RC" = 0 ]; then
    echo "SKIP $NA_TEST_NAME: this libhdf5 reads HDF5 $("$NA_PYTHON" -c 'import h5py; print(h5py.version.hdf5_version)') files"
    exit 0
fi
assert_eq "$LAST_RC" 3 "exit code"
expect_stderr_contains "nanaudit: new.h5: /c: cannot open the dataset: bad version number for layout message (a newer HDF5 file format than this nanaudit's libhdf5 "
expect_stderr_contains " reads, or a damaged file)"
assert_eq "$(wc -l <"$T/stderr")" 1 "stderr lines"
expect_stdout_contains "1 file, 2 tensors, 6 elements"
# clean cannot copy it either: the line names the input (it named the
# output, as for a write error), with the same hint; exit 3
expect_exit 3 "$N" clean new.h5 --exclude /c -o out.h5
expect_stderr_contains "nanaudit: new.h5: /c: cannot copy: bad version number for layout message (a newer HDF5 file format"
[ ! -e out.h5 ] || fail "output written"
pass
