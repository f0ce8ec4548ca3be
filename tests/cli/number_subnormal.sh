#!/bin/bash
# Numbers in options: a subnormal (1e-310, 5e-324) is a finite double, as
# Python's float() and numpy read it, but strtod reports ERANGE for it,
# and every option parser refused it as "not a number" (--feature-range
# 0:1e-310 was exit 2). An overflow (1e999) stays refused.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" -c '
import numpy as np
np.save("x.npy", np.array([[1.0], [2.0], [3.0], [4.0]]))
np.save("n.npy", np.array([[1.0], [np.nan], [3.0]]))' || fail "inputs"
expect_exit 0 "$N" clean -q x.npy -o r.npy --normalize minmax --feature-range 0:1e-310
"$NA_PYTHON" -c '
import numpy as np
y = np.load("r.npy")[:, 0]
want = (np.array([1.0, 2, 3, 4]) - 1) / 3 * 1e-310
assert y[0] == 0 and y[3] == 1e-310, y
assert np.allclose(y, want, rtol=0, atol=1e-323), (y, want)' || fail "feature-range 0:1e-310"
expect_exit 0 "$N" clean -q n.npy -o v.npy --nonfinite value=5e-324
"$NA_PYTHON" -c '
import numpy as np
y = np.load("v.npy")[:, 0]
assert y.tolist() == [1.0, 5e-324, 3.0], y' || fail "value=5e-324"
# scan options and gate fractions take them too
expect_exit 0 "$N" scan x.npy --zscore 1e-300 --max-nan-fraction 1e-310
expect_exit 1 "$N" scan n.npy --max-nan-fraction 1e-310
# an overflow is not a number here
expect_exit 2 "$N" clean -q x.npy -o o.npy --normalize minmax --feature-range 0:1e999
expect_stderr_contains "nanaudit: --feature-range: '0:1e999' is not LO:HI with LO < HI"
expect_exit 2 "$N" scan x.npy --zscore 1e999
expect_stderr_contains "nanaudit: --zscore: '1e999' is not a number >= 0"
[ ! -e o.npy ] || fail "o.npy written"
pass
