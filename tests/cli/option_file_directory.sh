#!/bin/bash
# An option file that is a directory, or missing (seventh fresh-user
# round): `scan --policy DIR` and `--baseline DIR` said "cannot read 'DIR':
# Input/output error" (the read's own errno, EISDIR, was replaced by EIO),
# `clean --apply-params DIR` said "'[' or '{' expected near end of file
# (line 1)" as if the file held bad JSON, and a missing --apply-params
# file ended its line with jansson's "(line -1)". Each is still exit 2
# (a bad option file, decided before any input is opened) with one line
# that says what is wrong.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir d
"$NA_PYTHON" -c "
import numpy as np
np.save('x.npy', np.arange(10.0))" || fail "inputs"
N="$NANAUDIT"

expect_exit 2 "$N" scan --policy d x.npy
expect_stderr_contains "nanaudit: --policy: cannot read 'd': Is a directory"
expect_stderr_lacks "Input/output error"
assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
expect_exit 2 "$N" scan --baseline d x.npy
expect_stderr_contains "nanaudit: --baseline: cannot read 'd': Is a directory"
expect_stdout_lacks "x.npy"

expect_exit 2 "$N" clean --normalize zscore --apply-params d x.npy -o o.npy
assert_eq "$(cat "$T/stderr")" "nanaudit: d: bad --apply-params file: is a directory"
expect_exit 2 "$N" clean --normalize zscore --apply-params none.json x.npy -o o.npy
assert_eq "$(cat "$T/stderr")" \
    "nanaudit: none.json: bad --apply-params file: unable to open none.json: No such file or directory"
[ ! -e o.npy ] || fail "o.npy written"
pass
