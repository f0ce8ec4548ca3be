#!/bin/bash
# clean --save-params that cannot be written stops the run before the
# output is written (issue 4, "Safety: nothing lost": a failed run leaves
# nothing under the output's name). Found by the fourth fresh-user round:
# `clean --save-params /dev/full -o out.npy` said "cannot write the
# parameters", exit 4, and still wrote out.npy ("written (verified)"),
# so a fit-on-train job had its cleaned training data but no parameters
# to apply to the test set. The message now gives the reason.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
[ -w /dev/full ] || { echo "SKIP $NA_TEST_NAME: no /dev/full"; exit 0; }
"$NA_PYTHON" -c "
import numpy as np
np.save('train.npy', np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]]))" || fail "inputs"
N="$NANAUDIT"

expect_exit 4 "$N" clean --normalize zscore train.npy -o out.npy --save-params /dev/full
expect_stderr_contains "nanaudit: /dev/full: cannot write the parameters: No space left on device"
assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
expect_stdout_lacks "written:"
[ ! -e out.npy ] || fail "out.npy written although the parameters were not"
ls -A | grep -q nanaudit-tmp && fail "temporary file left"

# the JSON report says so: nothing written, exit_code 4
expect_exit 4 "$N" clean --format json --normalize zscore train.npy -o out.npy \
    --save-params /dev/full
expect_json "$T/stdout" 'j["exit_code"]' '4'
expect_json "$T/stdout" 'j["written"]' 'false'
[ ! -e out.npy ] || fail "out.npy written (json run)"

# --dry-run: the same exit code and line
expect_exit 4 "$N" clean --dry-run --normalize zscore train.npy --save-params /dev/full
expect_stderr_contains "cannot write the parameters: No space left on device"

# a writable file: the output and the parameters are both written
expect_exit 0 "$N" clean --normalize zscore train.npy -o out.npy --save-params p.json
[ -s out.npy ] && [ -s p.json ] || fail "out.npy or p.json missing"
pass
