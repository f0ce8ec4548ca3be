#!/bin/bash
# Regression (h13 new-user run): `nanaudit info` printed the internal
# placeholder "INVALID" in the dtype column of a non-numeric member (an
# .npz with a bytes array, as scipy's test files have), where `scan`
# prints "?". Both now print "?" and info still says why it is skipped.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" -c '
import numpy as np, sys
np.savez(sys.argv[1], x=np.arange(4, dtype="<f8"), v=np.array(b"abc"))
' "$T/m.npz" || fail "python"

expect_exit 0 "$NANAUDIT" info "$T/m.npz"
expect_stdout_lacks "INVALID"
expect_stdout_contains "  x       F64    [4]    32"
expect_stdout_contains "  v       ?      []     3  (skipped: not numeric)"

expect_exit 0 "$NANAUDIT" scan "$T/m.npz"
expect_stdout_contains "skipped: v: dtype |S3 is not numeric data"
pass
