#!/bin/bash
# A variable-length string dataset with a fill value of its own (netcdf-c's
# ref_test_corrupt_magic.nc: UTC_time, fill value ""). libhdf5 1.10.8's
# H5Ocopy left the copy's fill value pointing into the input's global
# heap: the written file's creation properties did not read back ("bad
# global heap collection signature"), so clean's verification refused its
# own output and every clean of the file failed (exit 3, naming OUT). Such
# a dataset is now re-created and its rows copied; checked with h5py and
# by re-scanning the output.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
F="$NA_TEST_DATA/real/netcdf/ncc-ref_test_corrupt_magic.nc"
expect_exit 0 "$NANAUDIT" clean "$F" -o o.nc
expect_stdout_contains "written: o.nc (verified)"
expect_exit 0 "$NANAUDIT" scan o.nc
expect_stderr_empty
"$NA_PYTHON" - "$F" <<'PY' || fail "o.nc against the input"
import sys
import h5py
with h5py.File(sys.argv[1]) as a, h5py.File("o.nc") as b:
    for k in ("UTC_time", "recNum"):
        assert list(b[k][()]) == list(a[k][()]), k
        assert b[k].dtype == a[k].dtype, k
    u = b["UTC_time"]
    assert h5py.check_string_dtype(u.dtype).encoding == "utf-8"
    assert u.id.get_create_plist().get_fill_time() == a["UTC_time"].id.get_create_plist().get_fill_time()
    assert u.dims[0][0].name == "/recNum"       # DIMENSION_LIST still points at the copy
    assert sorted(b.attrs) == sorted(a.attrs) + ["nanaudit"], list(b.attrs)
PY
# --dry-run checks the same structure and writes nothing
expect_exit 0 "$NANAUDIT" clean "$F" -o dry.nc --dry-run
[ ! -e dry.nc ] || fail "--dry-run wrote dry.nc"
pass
