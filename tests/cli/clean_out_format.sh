#!/bin/bash
# clean writes the input's format whatever -o is called; an OUT named
# like another format's file (.safetensors, .npy, .npz, .h5/.hdf5/.nc) gets
# one warning line on stderr that says which format it holds (the run and
# its exit code are unchanged). Found by the fourth fresh-user round:
# `clean a.h5 -o a.safetensors` wrote an HDF5 file under that name with
# no sign of it, and a raw input with -o x.npy wrote headerless data that
# np.load refuses.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" -c "
import numpy as np, h5py
x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
np.save('x.npy', x); x.tofile('x.bin')
with h5py.File('a.h5', 'w') as f: f['x'] = x
" || fail "inputs"

expect_exit 0 "$N" clean a.h5 -o a.safetensors
expect_stderr_contains "nanaudit: warning: a.safetensors: named like a safetensors file, but clean writes the input's format: this is an HDF5 file"
assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
"$NA_PYTHON" -c "import h5py; h5py.File('a.safetensors')" || fail "a.safetensors is not HDF5"
expect_exit 0 "$N" clean x.npy -o x.npz
expect_stderr_contains "nanaudit: warning: x.npz: named like a NumPy .npz file, but clean writes the input's format: this is a NumPy .npy file"
expect_exit 0 "$N" clean --dtype F64 --shape 3x2 x.bin -o xb.npy
expect_stderr_contains "nanaudit: warning: xb.npy: named like a NumPy .npy file, but clean writes the input's format: this is a raw file"
expect_exit 0 "$N" clean --dry-run x.npy -o x.h5
expect_stderr_contains "nanaudit: warning: x.h5: named like an HDF5 file, but clean writes the input's format: this is a NumPy .npy file"

# names that fit, or say nothing: no warning
for o in b.h5 b.nc b.hdf5 b.out; do
    expect_exit 0 "$N" clean a.h5 -o "$o"
    expect_stderr_empty
done
expect_exit 0 "$N" clean x.npy -o y.npy
expect_stderr_empty
expect_exit 0 "$N" clean --dtype F64 --shape 3x2 x.bin -o y.bin
expect_stderr_empty
pass
