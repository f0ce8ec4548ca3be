#!/bin/bash
# '-' as an output file name (scan --report -, clean -o -, clean --report -,
# clean --save-params -) is a usage error (exit 2, one line, before any
# work) rather than a file named '-' in the current directory. Many tools
# read '-' as standard output; nanaudit never writes a report or a copy
# there (an input '-' is refused the same way, stdin_dash.sh), so a CI job
# writing `--report -` got nothing on stdout and a stray file named '-'.
# Found by the fourth fresh-user round. ./- still names such a file.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c "
import numpy as np
np.save('x.npy', np.array([1.0, 2.0, 3.0]))" || fail "inputs"
N="$NANAUDIT"

expect_exit 2 "$N" scan --report - x.npy
expect_stderr_contains "nanaudit: --report: '-' is not standard output: give a file name (./- for a file named '-'; --format json prints the JSON report on standard output) (try 'nanaudit scan --help')"
assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
expect_stdout_lacks "x.npy"
expect_exit 2 "$N" clean --report - x.npy -o out.npy
expect_stderr_contains "nanaudit: --report: '-' is not standard output"
expect_exit 2 "$N" clean --save-params - --normalize zscore x.npy -o out.npy
expect_stderr_contains "nanaudit: --save-params: '-' is not standard output: give a file name (./- for a file named '-') (try 'nanaudit clean --help')"
expect_exit 2 "$N" clean x.npy -o -
expect_stderr_contains "nanaudit: -o: '-' is not standard output: give a file name (./- for a file named '-') (try 'nanaudit clean --help')"
expect_exit 2 "$N" clean --dry-run x.npy -o -
[ ! -e - ] && [ ! -e out.npy ] || fail "a file was written"

# ./- is a file name like any other
expect_exit 0 "$N" scan --report ./- x.npy
expect_json ./- 'j["summary"]["exit_code"]' '0'
expect_exit 0 "$N" clean x.npy -o ./- --force
"$NA_PYTHON" -c "
import numpy as np
assert np.array_equal(np.load('-'), np.array([1.0, 2.0, 3.0]))" || fail "./- values"
pass
