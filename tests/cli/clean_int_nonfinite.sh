#!/bin/bash
# Regression test for issue 4 (new-user test): an integer --out-dtype has
# no NaN and no Inf. A NaN or Inf that would remain after the steps
# (--nonfinite keep, a feature with no finite value, --outliers nan) used
# to be written as 0 or a saturated bound, exit 0, reported as "overflow"
# or as "passed through unchanged". It is refused: one line naming the
# file, the tensor, the dtype and the count, with a hint; exit 2, nothing
# under the output's name, no temporary file; --dry-run says the same.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
np.save("n.npy", np.array([1.5, np.nan, 2.5, -np.inf, 4], np.float32))
np.save("a.npy", np.full(4, np.nan, np.float32))
np.save("o.npy", np.array([1, 1, 1, 1, 100], np.float32))
np.save("big.npy", np.array([1e6, 1, -1e6], np.float32))
PY
N="$NANAUDIT"
HINT="use --nonfinite zero|mean|value=X|drop, --outliers clip|mean|drop, a float --out-dtype, or --exclude 'data'"

# --nonfinite keep: NaN and -Inf would remain
expect_exit 2 "$N" clean --nonfinite keep --out-dtype I16 n.npy -o out.npy
expect_stderr_contains "nanaudit: n.npy: data: 2 NaN/Inf value(s) would be written as I16, which has no NaN or Inf; $HINT; nothing written"
assert_eq "$(grep -c . "$T/stderr")" "1" "stderr lines"
[ -e out.npy ] && fail "out.npy written"
ls -A | grep -q nanaudit-tmp && fail "temporary file left behind"
expect_exit 2 "$N" clean --nonfinite keep --out-dtype I16 n.npy --dry-run
expect_stderr_contains "nanaudit: n.npy: data: 2 NaN/Inf value(s) would be written as I16, which has no NaN or Inf; $HINT"
expect_stdout_lacks "overflow 2"

# the JSON report says the same, real run or dry run: the tensor is an
# error with the message as reason, and NaN/Inf are not counted as overflow
for dry in "-o out.npy" "--dry-run"; do
    # shellcheck disable=SC2086
    expect_exit 2 "$N" clean --nonfinite keep --out-dtype I16 n.npy $dry --report r.json
    expect_json r.json 'j["exit_code"]' '2'
    expect_json r.json 'j["written"]' 'false'
    expect_json r.json 'j["tensors"][0]["status"]' '"error"'
    expect_json r.json 'j["tensors"][0]["overflow"]' '0'
    expect_json r.json 'j["tensors"][0]["reason"].startswith("2 NaN/Inf value(s) would be written as I16")' 'true'
    # and says why nothing was written (round 29b: refused was null)
    expect_json r.json 'j["refused"].startswith("data: 2 NaN/Inf value(s) would be written as I16")' 'true'
    expect_stdout_contains "refused: data: 2 NaN/Inf value(s) would be written as I16"
done

# an all-NaN tensor passes through every step: it cannot be I8
expect_exit 2 "$N" clean --out-dtype I8 a.npy -o out.npy
expect_stderr_contains "data: 4 NaN/Inf value(s) would be written as I8, which has no NaN or Inf; 1 feature(s) have no finite value and keep theirs through every step: use a float --out-dtype, or --exclude 'data'"
expect_stdout_lacks "passed through unchanged"
expect_stdout_contains "1 feature(s) without any finite value (I8 cannot hold NaN)"
[ -e out.npy ] && fail "out.npy written (all NaN)"
expect_exit 2 "$N" clean --out-dtype I8 a.npy --dry-run
expect_stdout_lacks "passed through unchanged"

# --outliers nan makes a NaN
expect_exit 2 "$N" clean --zscore 1 --outliers nan --out-dtype I16 o.npy -o out.npy
expect_stderr_contains "data: 1 NaN/Inf value(s) would be written as I16"

# what the hint offers works: values as numpy's rint (half to even)
expect_exit 0 "$N" clean --nonfinite zero --out-dtype I16 n.npy -o z.npy
"$NA_PYTHON" -c "
import numpy as np
y = np.load('z.npy')
assert y.dtype == np.int16 and y.tolist() == [2, 0, 2, 0, 4], y" || fail "--nonfinite zero values"
expect_exit 0 "$N" clean --nonfinite drop --max-drop-fraction 1 --out-dtype I16 n.npy -o d.npy
"$NA_PYTHON" -c "
import numpy as np
y = np.load('d.npy')
assert y.dtype == np.int16 and y.tolist() == [2, 2, 4], y" || fail "--nonfinite drop values"
expect_exit 0 "$N" clean --zscore 1 --outliers clip --out-dtype I16 o.npy -o c.npy
# finite values beyond the integer range still saturate and count as overflow
expect_exit 0 "$N" clean --out-dtype I16 big.npy -o big.out.npy --report r.json
expect_stdout_contains "warning: 2 value(s) overflowed the output dtype"
expect_json r.json 'j["tensors"][0]["overflow"]' '2'
# a float dtype holds NaN: kept, exit 1 (NaN remains), the warning as before
expect_exit 1 "$N" clean --out-dtype F16 a.npy -o f.npy
expect_stdout_contains "1 feature(s) without any finite value passed through unchanged"
pass
