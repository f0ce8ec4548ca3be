#!/bin/bash
# A CF missing-value marker the output dtype cannot hold (issue 4, missing
# data). Float: 1e20 becomes +Inf in F16, no longer a marker (markers are
# finite), so the values would read back as Inf: refused before anything is
# written, exit 2, the same in --dry-run (was: exit 4 "verification: ...
# statistics differ" after writing, while --dry-run said 0). Integer: the
# marker saturates like the data, and libhdf5 converts the _FillValue
# attribute the same way: 32767 in both, verified.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c "
import h5py, numpy as np
with h5py.File('m.h5', 'w') as f:
    d = f.create_dataset('t', data=np.array([1, 2, 1e20, 5], np.float32))
    d.attrs['_FillValue'] = np.float32(1e20)
" || fail "input"
N="$NANAUDIT"
MSG="/t: its missing-value marker 1e+20 overflows F16 (it would be written as inf, which is not a marker); use a wider --out-dtype, or --missing none"
expect_exit 2 "$N" clean m.h5 --out-dtype F16 -o o.h5
expect_stderr_contains "nanaudit: m.h5: $MSG"
[ ! -e o.h5 ] || fail "o.h5 written"
expect_exit 2 "$N" clean m.h5 --out-dtype F16 --dry-run
expect_stderr_contains "$MSG"
# --missing none: 1e20 is a value, it overflows F16 like any other (exit 1: Inf left)
expect_exit 1 "$N" clean -q m.h5 --out-dtype F16 -o n.h5 --missing none
expect_exit 0 "$N" clean -q m.h5 --out-dtype I16 -o i.h5
"$NA_PYTHON" -c "
import h5py
f = h5py.File('i.h5')
assert f['t'][:].tolist() == [1, 2, 32767, 5], f['t'][:]
assert int(f['t'].attrs['_FillValue']) == 32767
" || fail "I16 values"
pass
