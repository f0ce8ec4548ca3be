#!/bin/bash
# An HDF5 dataset with two hard links is one tensor, listed under the
# first link the walk meets ('/hard' before '/rs' in name order). A
# --include, --exclude or --together pattern naming the other link
# matches nothing: the warning (error for --together) says why and where
# to look, instead of leaving the user to wonder why the NaN stayed.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c "
import h5py, numpy as np
with h5py.File('h.h5', 'w') as f:
    f['rs'] = np.array([1.0, np.nan, 3.0]); f['hard'] = f['rs']; f['y'] = np.arange(3.0)
" || fail "input"
N="$NANAUDIT"
HINT="(a dataset with several hard links is listed under one of them: see \`nanaudit info\`)"
expect_exit 0 "$N" clean -q h.h5 --include /rs --nonfinite zero -o o.h5
expect_stderr_contains "nanaudit: warning: h.h5: --include '/rs' matches no tensor $HINT"
expect_exit 2 "$N" clean -q h.h5 --together /rs,/y -o o2.h5
expect_stderr_contains "--together: '/rs' matches no tensor $HINT"
expect_exit 0 "$N" info h.h5
expect_stdout_contains "/hard"
# under the listed name it is cleaned, and both links see it
expect_exit 0 "$N" clean -q h.h5 --include /hard --nonfinite zero -o o3.h5
"$NA_PYTHON" -c "
import h5py
f = h5py.File('o3.h5')
assert f['hard'][:].tolist() == [1.0, 0.0, 3.0] and f['rs'][:].tolist() == [1.0, 0.0, 3.0]
" || fail "values"
pass
