#!/bin/bash
# clean's exit status counts the NaN/Inf left in the output by clean's own
# choices, not those of a tensor the user left out (man page, Exit
# status): --exclude y with NaN in y is exit 0; a selected tensor clean
# can only copy (complex) with NaN is exit 1, with a warning.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
x = np.arange(20, dtype=np.float64).reshape(10, 2)
x[3, 1] = np.nan
y = np.ones(10); y[4] = np.nan
c = np.ones(10, dtype=np.complex64); c[2] = complex(np.nan, 0)
np.savez("a.npz", x=x, y=y)
np.savez("b.npz", x=x, c=c)
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean a.npz --exclude y --nonfinite zero -o a.out.npz
expect_stdout_contains "y: copied: not selected"
"$NA_PYTHON" -c '
import numpy as np
o = np.load("a.out.npz")
assert np.isnan(o["y"][4]) and np.isfinite(o["x"]).all() and o["x"][3, 1] == 0
' || fail "a.out.npz"
expect_exit 1 "$N" clean b.npz --nonfinite zero -o b.out.npz
expect_stdout_contains "c.real: copied"
expect_stdout_contains "warning: 1 NaN/Inf value(s) left as they are (copied unchanged)"
pass
