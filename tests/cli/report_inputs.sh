#!/bin/bash
# Report files never replace the run's other inputs, and a report that
# cannot be written is said (issue 4 safety; issue 5 reports):
#  - clean --report / -o naming the --apply-params file, scan --report
#    naming the --policy file: exit 2 before any work, the file unchanged
#    (before, the fitted parameters or the policy became a report);
#  - clean --report to a full device: exit 4 with one line on stderr, and
#    the JSON on stdout says exit_code 4 (before: no message, exit_code 0).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c "
import numpy as np
np.save('train.npy', np.arange(10.0)); np.save('test.npy', np.arange(5.0))" || fail "inputs"
N="$NANAUDIT"
expect_exit 0 "$N" clean --normalize zscore train.npy -o t.npy --save-params p.json
cp p.json p.orig
expect_exit 2 "$N" clean --normalize zscore --apply-params p.json test.npy -o o.npy --report p.json
expect_stderr_contains "nanaudit: p.json: --report would overwrite an input file (p.json); the input is never modified"
expect_exit 2 "$N" clean --normalize zscore --apply-params p.json test.npy -o p.json --force
expect_stderr_contains "nanaudit: p.json: is the --apply-params file; -o never replaces an input"
ln -s p.json plink.json
expect_exit 2 "$N" clean --normalize zscore --apply-params plink.json test.npy -o p.json --force
cmp -s p.json p.orig || fail "p.json changed"
[ ! -e o.npy ] || fail "o.npy written"
# and it still applies
expect_exit 0 "$N" clean --normalize zscore --apply-params p.json test.npy -o o.npy --report r.json
expect_json r.json 'j["exit_code"]' '0'

make_st m.safetensors '{"tensors": [{"name": "w", "dtype": "F32", "shape": [2], "values": [1, 2]}]}'
printf 'version: 1\ndefaults:\n  fail_on: [nan]\n' > pol.yaml
cp pol.yaml pol.orig
expect_exit 2 "$N" scan --policy pol.yaml --report pol.yaml m.safetensors
expect_stderr_contains "pol.yaml: --report would overwrite an input file (pol.yaml)"
cmp -s pol.yaml pol.orig || fail "pol.yaml changed"
expect_exit 0 "$N" scan --policy pol.yaml --report s.json m.safetensors

if [ -w /dev/full ]; then
    expect_exit 4 "$N" clean --format json test.npy -o o2.npy --report /dev/full
    expect_stderr_contains "nanaudit: /dev/full: cannot write the report: No space left on device"
    assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
    expect_json "$T/stdout" 'j["exit_code"]' '4'
    [ -c /dev/full ] || fail "/dev/full removed"
fi
pass
