#!/bin/bash
# Two refusals that named the problem but not its usual cause (fourth
# fresh-user round): an HDF5 pattern without its leading '/' ('x' where
# the dataset is '/x'), and --apply-params of a --global fit without
# --global (or the reverse), which said only "parameters for 1 features,
# the data has 4".
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" -c '
import numpy as np
x = np.arange(20.0).reshape(5, 4); np.save("x.npy", x)' || fail "x.npy"
# --global fit applied without --global, and the reverse
expect_exit 0 "$N" clean -q x.npy -o g.npy --normalize zscore --global --save-params g.json
expect_exit 2 "$N" clean -q x.npy -o o.npy --normalize zscore --apply-params g.json
expect_stderr_contains "g.json: --apply-params: the file was fitted with --samples --global, this run has --samples (the sample axis and --global,"
expect_exit 0 "$N" clean -q x.npy -o f.npy --normalize zscore --save-params f.json
expect_exit 2 "$N" clean -q x.npy -o o.npy --normalize zscore --global --apply-params f.json
expect_stderr_contains "f.json: --apply-params: the file was fitted with --samples, this run has --samples --global (the sample axis and --global,"
[ ! -e o.npy ] || fail "o.npy written"
# with it, the fit applies: the same bytes as the fit's own output
expect_exit 0 "$N" clean -q x.npy -o g2.npy --normalize zscore --global --apply-params g.json
cmp -s g.npy g2.npy || fail "--global round trip differs"
if "$N" scan "$NA_TEST_DATA/real/hdf5/hdfgroup-tall.h5" >/dev/null 2>&1 </dev/null || [ $? != 3 ]
then
    "$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("h.h5", "w") as f:
    f["x"] = np.array([1.0, np.nan, 3.0]); f["y"] = np.arange(3.0)' || fail "h.h5"
    expect_exit 2 "$N" clean -q h.h5 -o o.h5 --together x,y
    expect_stderr_contains "nanaudit: h.h5: --together: 'x' matches no tensor (HDF5 paths start with '/': did you mean '/x'?)"
    # a near miss of --include/--exclude is a typo: refused before the fit
    # (round 38b: an --exclude'd label was z-scored, exit 0)
    expect_exit 2 "$N" clean -q h.h5 -o o.h5 --include 'x*' --nonfinite zero
    expect_stderr_contains "nanaudit: h.h5: --include 'x*' matches no tensor (HDF5 paths start with '/': did you mean '/x*'?)"
    [ "$(wc -l < "$T/stderr")" = 1 ] || fail "not one line"
    [ -e o.h5 ] && fail "o.h5 written"
    expect_exit 2 "$N" clean -q h.h5 -o o.h5 --exclude 'y' --normalize zscore
    expect_stderr_contains "nanaudit: h.h5: --exclude 'y' matches no tensor (HDF5 paths start with '/': did you mean '/y'?)"
    [ -e o.h5 ] && fail "o.h5 written"
    # no such dataset under '/' either: no hint
    expect_exit 0 "$N" clean -q h.h5 -o o2.h5 --include 'z' --nonfinite zero
    expect_stderr_contains "--include 'z' matches no tensor"
    expect_stderr_lacks "did you mean"
    # a compound or complex dataset is a tensor per field or part: its own
    # path names none of them (round 36b)
    "$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("c.h5", "w") as f:
    f["X"] = np.arange(10.0)
    c = np.zeros(10, dtype=[("a", "f4"), ("b", "i4")]); c["a"][3] = np.nan; f["comp"] = c
    f["cx"] = np.arange(10) * (1 + 2j)' || fail "c.h5"
    expect_exit 2 "$N" clean -q c.h5 -o co.h5 --together /X,/comp
    expect_stderr_contains "nanaudit: c.h5: --together: '/comp' matches no tensor (its fields or parts are tensors of their own: did you mean '/comp.*'?)"
    expect_exit 2 "$N" clean -q c.h5 -o co.h5 --include /cx
    expect_stderr_contains "nanaudit: c.h5: --include '/cx' matches no tensor (its fields or parts are tensors of their own: did you mean '/cx.*'?)"
    expect_exit 0 "$N" clean -q c.h5 -o co2.h5 --include '/cx.*'
    expect_stderr_empty
fi
pass
