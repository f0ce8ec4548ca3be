#!/bin/bash
# clean_matlab.sh - MATLAB v7.3 MAT-files are HDF5 with a 512-byte user
# block ("MATLAB 7.3 MAT-file") whose arrays are stored column-major: a
# 1000x20 matrix (1000 samples of 20 features) is the HDF5 dataset
# (20, 1000). Axis 0 as the sample axis deleted the 5th feature for one
# NaN, "verified", exit 0 (round 37b, HIGH). clean gives such a file no
# sample axis unless --samples is given (which warns what it means): the
# matrix keeps its size, NaN is kept (exit 1) or filled.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c '
import h5py, numpy as np
x = np.random.default_rng(0).standard_normal((1000, 20))
x[10, 4] = np.nan
with h5py.File("X.mat", "w", userblock_size=512) as f:
    d = f.create_dataset("X", data=x.T)
    d.attrs["MATLAB_class"] = np.bytes_("double")
hdr = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5 schema 1.00 ."
hdr = hdr + b" " * (116 - len(hdr)) + b"\0" * 8 + b"\x00\x02" + b"IM"
with open("X.mat", "r+b") as f:
    f.write(hdr)
np.save("x.npy", x)' || fail "X.mat"
size() { "$NA_PYTHON" -c "import h5py; print(list(h5py.File('$1', 'r')['X'].shape))"; }
# default: no samples, NaN kept, nothing dropped
expect_exit 1 "$NANAUDIT" clean X.mat -o o1.mat
expect_stdout_contains "/X: F64 -> F64, 20000 elements"
assert_eq "$(size o1.mat)" "[20, 1000]" "o1.mat"
# filled: the NaN at MATLAB X(11,5) becomes 0, every other value kept
expect_exit 0 "$NANAUDIT" clean X.mat -o o2.mat --nonfinite zero
"$NA_PYTHON" -c '
import h5py, numpy as np
x = np.load("x.npy"); y = h5py.File("o2.mat", "r")["X"][()].T
assert y.shape == (1000, 20) and y[10, 4] == 0, y.shape
x[10, 4] = 0
assert np.array_equal(x, y)
assert open("o2.mat", "rb").read(19) == b"MATLAB 7.3 MAT-file"' || fail "o2.mat"
# drop needs a sample axis: refused, naming why
expect_exit 2 "$NANAUDIT" clean X.mat -o o3.mat --nonfinite drop
expect_stderr_contains "--nonfinite drop needs --samples (a MATLAB v7.3 array's axis 0 here is its last dimension); use --nonfinite zero"
expect_exit 2 "$NANAUDIT" clean X.mat -o o3.mat --zscore 3
expect_stderr_contains "--zscore on a MATLAB v7.3 file needs --outliers clip|nan|mean"
[ ! -e o3.mat ] || fail "o3.mat written"
# --samples as asked, with a warning saying what axis 0 is
expect_exit 0 "$NANAUDIT" clean X.mat -o o4.mat --samples --max-drop-fraction 0.5
expect_stderr_contains "warning: X.mat: a MATLAB v7.3 file stores arrays transposed: axis 0 here is MATLAB's last dimension"
assert_eq "$(size o4.mat)" "[19, 1000]" "o4.mat"
# a char array (UTF-16 code units) and an empty array (its dimensions
# stored, MATLAB_empty = 1) hold no numbers: skipped with the reason, and
# copied byte for byte by clean (round 37b: audited as U16 and U64 data)
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("c.mat", "w", userblock_size=512) as f:
    d = f.create_dataset("s", data=np.frombuffer("hello".encode("utf-16-le"), "<u2").reshape(5, 1))
    d.attrs["MATLAB_class"] = np.bytes_("char")
    e = f.create_dataset("e", data=np.array([0, 0], "u8"))
    e.attrs["MATLAB_class"] = np.bytes_("double"); e.attrs["MATLAB_empty"] = np.uint8(1)
    v = f.create_dataset("v", data=np.arange(4.0).reshape(4, 1))
    v.attrs["MATLAB_class"] = np.bytes_("double")
with open("c.mat", "r+b") as f:
    f.write(b"MATLAB 7.3 MAT-file" + b" " * 97 + b"\0" * 8 + b"\x00\x02IM")' || fail "c.mat"
expect_exit 0 "$NANAUDIT" scan c.mat
expect_stdout_contains "skipped: /s: a MATLAB char array (text)"
expect_stdout_contains "skipped: /e: a MATLAB empty array (its dimensions are stored, not data)"
expect_stdout_contains "3 tensors (2 skipped)"
expect_exit 0 "$NANAUDIT" clean c.mat -o oc.mat --nonfinite zero
"$NA_PYTHON" -c '
import h5py, numpy as np
a, b = h5py.File("c.mat", "r"), h5py.File("oc.mat", "r")
for n in "sev":
    assert np.array_equal(a[n][()], b[n][()]) and dict(a[n].attrs) == dict(b[n].attrs), n' ||
    fail "oc.mat"
pass
