#!/bin/bash
# --save-params onto a symbolic link writes the link's target, as --report
# does, and the link stays a link. Found by the sixth fresh-user round:
# since --save-params is written atomically (a temporary file renamed over
# the name), params.json -> v3/params.json was replaced by a regular file
# and the target kept its old content, while --report in the same run
# wrote through its link. The file written is the one a plain run writes,
# and --apply-params of it through the link gives the same copy. A
# replaced file keeps its permission bits.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
mkdir out v3
"$NA_PYTHON" -c "
import numpy as np
a = np.random.default_rng(5).normal(size=(50, 3)).astype(np.float32)
a[7, 1] = np.nan
np.save('in.npy', a)" || fail "making the input"
echo old >v3/params.json
echo old >v3/report.json
ln -s v3/params.json params.json
ln -s v3/report.json report.json

expect_exit 0 "$N" clean --normalize zscore -o out/a.npy --save-params params.json \
    --report report.json in.npy
[ -L params.json ] || fail "params.json is no longer a symbolic link"
[ -L report.json ] || fail "report.json is no longer a symbolic link"
expect_json v3/params.json 'j["kind"]' '"nanaudit-clean-params"'
expect_json v3/report.json 'j["input"]' '"in.npy"'
assert_eq "$(ls -A . v3 | grep -c nanaudit-tmp)" "0" "temporary files left"

# the same parameters as a run that writes a plain file
expect_exit 0 "$N" clean --normalize zscore -o out/b.npy --save-params plain.json in.npy
cmp -s plain.json v3/params.json || fail "the file written through the link differs"
expect_exit 0 "$N" clean --normalize zscore -o out/c.npy --apply-params params.json in.npy
cmp -s out/a.npy out/c.npy || fail "--apply-params through the link gives another copy"

# a file replaced keeps its permission bits (the rename made an 0600
# params file 0644), through a link too
echo old >private.json
chmod 600 private.json v3/params.json
expect_exit 0 "$N" clean --normalize zscore -o out/e.npy --save-params private.json in.npy
assert_eq "$(stat -c %a private.json)" "600" "mode of a replaced params file"
expect_exit 0 "$N" clean --normalize zscore -o out/f.npy --save-params params.json in.npy
assert_eq "$(stat -c %a v3/params.json)" "600" "mode of a params file replaced through a link"

# a dangling link: its target is created, as --report and '>' do (tenth
# fresh-user round: the link was replaced by a regular file)
ln -s v3/missing.json dangling.json
expect_exit 0 "$N" clean --normalize zscore -o out/d.npy --save-params dangling.json in.npy
[ -L dangling.json ] || fail "dangling.json is no longer a symbolic link"
expect_json v3/missing.json 'j["kind"]' '"nanaudit-clean-params"'
# a dangling link to the output: refused before any work, as a link to an
# existing output is (it would have replaced the cleaned copy)
ln -s out/g.npy tog.json
expect_exit 2 "$N" clean --normalize zscore -o out/g.npy --save-params tog.json in.npy
expect_stderr_contains "--save-params would overwrite the -o output"
[ ! -e out/g.npy ] || fail "out/g.npy written"
pass
