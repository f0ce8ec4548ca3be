#!/bin/bash
# clean never changes data it cannot carry exactly, and copies what it
# does not clean (issue 4 "never loses data"; found by a fresh-user test):
#  - I64/U64 values at or beyond 2^53 go through double arithmetic and
#    could come back rounded: such a tensor is refused (exit 3, one line),
#    and --exclude copies it byte for byte;
#  - an HDF5 dataset whose scale-offset filter would store cleaned floats
#    with a fixed number of decimal digits (lossy) is refused (exit 2),
#    not written and then failed in verification (exit 4);
#  - an object member of an .npz is copied as stored (its pickle is never
#    loaded) when another member is cleaned;
#  - a signal the caller ignores (SIGINT in a background job) stays ignored.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
e = (np.arange(1000) + 2**60).astype("i8"); e[3] = 2**62
np.save("big.npy", e)
np.save("bigu.npy", np.arange(1000, dtype="u8") + np.uint64(2**63))
s = np.arange(1000).astype("i8"); s[500] = 10**6
np.save("small.npy", s)
np.savez("h.npz", a=np.array([1.0, np.nan, 3.0]), obj=np.array([{"k": 1}], dtype=object))
PY
N="$NANAUDIT"
expect_exit 3 "$N" clean big.npy --zscore 3 -o big.out.npy
expect_stderr_contains "nanaudit: big.npy: data: I64 values reach 2^53 or beyond, which clean's double arithmetic cannot carry exactly; --exclude 'data' copies it unchanged"
[ ! -e big.out.npy ] || fail "I64 output written"
expect_stdout_contains "  data: error: I64 values reach 2^53"
expect_exit 3 "$N" clean bigu.npy --nonfinite zero -o bigu.out.npy
expect_stderr_contains "data: U64 values reach 2^53 or beyond"
# below 2^53: exact, the outlier row dropped
expect_exit 0 "$N" clean small.npy --zscore 3 -o small.out.npy
"$NA_PYTHON" - <<'PY' || fail "I64 below 2^53"
import numpy as np
s = np.arange(1000).astype("i8"); s[500] = 10**6
o = np.load("small.out.npy")
assert o.dtype == np.int64 and o.tolist() == np.delete(s, 500).tolist(), o[:5]
PY

# .npz: the object member is copied as stored
expect_exit 0 "$N" clean h.npz --nonfinite zero -o h.out.npz
"$NA_PYTHON" - <<'PY' || fail "npz object member"
import zipfile, numpy as np
a, b = zipfile.ZipFile("h.npz"), zipfile.ZipFile("h.out.npz")
assert a.read("obj.npy") == b.read("obj.npy")
assert np.load("h.out.npz")["a"].tolist() == [1.0, 0.0, 3.0]
PY

# HDF5 scale-offset on floats
if "$N" info "$NA_TEST_DATA/real/hdf5/hdfgroup-tall.h5" >/dev/null 2>&1; then
    "$NA_PYTHON" - <<'PY' || fail "making so.h5"
import h5py, numpy as np
with h5py.File("so.h5", "w") as f:
    f.create_dataset("x", data=np.random.default_rng(1).normal(size=(1000, 2)), scaleoffset=2,
                     chunks=(100, 2))
    f.create_dataset("y", data=np.arange(10.0))
PY
    expect_exit 2 "$N" clean so.h5 --normalize minmax -o so.out.h5
    expect_stderr_contains "/x: its scale-offset filter would store the cleaned floating point values with a fixed number of decimal digits (lossy), so they could not be written exactly: --exclude it"
    [ ! -e so.out.h5 ] || fail "scale-offset output written"
    assert_eq "$(ls -A | grep -c nanaudit-tmp)" 0 "temporary files"
    expect_exit 0 "$N" clean so.h5 --normalize minmax --exclude /x -o so.out.h5
fi

# SIGINT ignored by the caller stays ignored: the clean completes
"$NA_PYTHON" -c "import numpy as np; np.save('n.npy', np.arange(4096.0).reshape(256, 16))"
LAST_RC=0
( trap '' INT; NANAUDIT_TEST_SIGNAL=INT exec "$N" clean n.npy --normalize minmax -o n.out.npy ) \
    >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
assert_eq "$LAST_RC" 0 "exit with SIGINT ignored"
[ -e n.out.npy ] || fail "no output with SIGINT ignored"
pass
