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
[ "$(stat -c %a p.json)" = "$(umask 0022; touch m; stat -c %a m)" ] || fail "p.json mode $(stat -c %a p.json)"

# A parameter file cut short by a full disk is never left behind: it is
# written beside its name and renamed (was: a truncated p.json, which
# --apply-params then refused). A file-size limit (RLIMIT_FSIZE; clean
# ignores SIGXFSZ) stops it at 64 KiB of ~1 MiB; the earlier p.json stays
# byte for byte. Not under ThreadSanitizer, whose runtime dies at start-up
# under `ulimit -f` (tests/cli/clean_safety.sh).
"$NA_PYTHON" -c "
import numpy as np
np.save('wide.npy', np.arange(30000.0).reshape(3, 10000))" || fail "wide.npy"
if ! nm "$N" 2>/dev/null | grep -q '__tsan_init'; then
    cp p.json p.before
    rm -f out2.npy
    LAST_RC=0
    (ulimit -f 64; exec "$N" clean --normalize zscore wide.npy -o out2.npy --save-params p.json) \
        >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    assert_eq "$LAST_RC" "4" "exit code under RLIMIT_FSIZE"
    assert_eq "$(cat "$T/stderr")" "nanaudit: p.json: cannot write the parameters: File too large"
    cmp -s p.json p.before || fail "p.json changed by the failed run"
    [ ! -e out2.npy ] || fail "out2.npy written"
    ls -A | grep -q nanaudit-tmp && fail "temporary file left: $(ls -A)"
    # and a new name is not created at all
    LAST_RC=0
    (ulimit -f 64; exec "$N" clean --normalize zscore wide.npy -o out2.npy --save-params new.json) \
        >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    assert_eq "$LAST_RC" "4" "exit code under RLIMIT_FSIZE (new file)"
    [ ! -e new.json ] || fail "a partial new.json was left"
    ls -A | grep -q nanaudit-tmp && fail "temporary file left: $(ls -A)"
fi
# without the limit it is written whole (and loads)
expect_exit 0 "$N" clean --normalize zscore wide.npy -o out2.npy --save-params new.json
expect_json new.json 'j["tensors"]["data"]["features"]' '10000'
pass
