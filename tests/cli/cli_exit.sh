#!/bin/bash
# Exit codes and their precedence (DESIGN.md "Exit codes"): 0 clean,
# 1 policy finding, 3 unreadable/invalid input (others still audited),
# 4 write error; highest wins. Also: nothing audited -> 3, zero tensors -> 0.
. "$(dirname "$0")/helpers.sh"

make_st "$T/clean.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[3],"values":[1,2,3]}]}'
make_st "$T/nan.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[2],"values":[1,"nan"]}]}'
make_st "$T/inf.safetensors" '{"tensors":[{"name":"w","dtype":"F16","shape":[4],"values":[1,65504,"inf","-inf"]}]}'
make_st "$T/trunc.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[3],"values":[1,2,3]}],"truncate":2}'
make_st "$T/empty.safetensors" '{"tensors":[]}'

expect_exit 0 "$NANAUDIT" scan "$T/clean.safetensors"
expect_stdout_contains "OK (exit 0)"
expect_exit 1 "$NANAUDIT" scan "$T/clean.safetensors" "$T/nan.safetensors"
expect_stdout_contains "FAILED (exit 1)"
expect_exit 1 "$NANAUDIT" scan "$T/inf.safetensors"
# 3 beats 1, and the other files are still audited and reported
expect_exit 3 "$NANAUDIT" scan --format json "$T/nan.safetensors" "$T/trunc.safetensors" "$T/clean.safetensors"
expect_stderr_contains "nanaudit: $T/trunc.safetensors: "
cp "$T/stdout" "$T/prec.json"
expect_json "$T/prec.json" '[f["status"] for f in j["files"]]' '["ok", "error", "ok"]'
expect_json "$T/prec.json" 'j["files"][0]["tensors"][0]["nan"]' '1'
expect_json "$T/prec.json" 'j["summary"]["exit_code"]' '3'
expect_json "$T/prec.json" 'j["summary"]["failed"]' 'true'
expect_json "$T/prec.json" 'j["summary"]["errors"]' '1'

# the policy decides what fails
expect_exit 0 "$NANAUDIT" scan --fail-on none "$T/nan.safetensors"
expect_exit 0 "$NANAUDIT" scan --fail-on nan "$T/inf.safetensors"
expect_exit 1 "$NANAUDIT" scan --fail-on pos-inf "$T/inf.safetensors"

# a valid file with zero tensors is clean; an empty directory audits nothing
expect_exit 0 "$NANAUDIT" scan "$T/empty.safetensors"
expect_stdout_contains "1 file, 0 tensors"
mkdir "$T/emptydir"
expect_exit 3 "$NANAUDIT" scan "$T/emptydir"
expect_stderr_contains "nanaudit: $T/emptydir: nothing to audit: no supported data file"
expect_exit 3 "$NANAUDIT" scan "$T/missing.safetensors"
expect_stderr_contains "nanaudit: $T/missing.safetensors: "
expect_exit 3 "$NANAUDIT" scan "$T/missing.safetensors" "$T/nan.safetensors"

# 4 (write error) beats 3 and 1
expect_exit 4 "$NANAUDIT" scan --report "$T/no/such/dir/r.json" "$T/nan.safetensors" "$T/trunc.safetensors"
expect_stderr_contains "nanaudit: $T/no/such/dir/r.json: cannot write report"
expect_stdout_contains "FAILED (exit 4)"
if [ -w /dev/full ]; then
    expect_exit 4 "$NANAUDIT" scan --report /dev/full "$T/clean.safetensors"
    expect_stderr_contains "cannot write report"
    # stdout itself failing is exit 4 too
    rc=0; "$NANAUDIT" scan "$T/clean.safetensors" >/dev/full 2>"$T/err" || rc=$?
    assert_eq "$rc" 4 "exit code when stdout is full"
    grep -qF "write error" "$T/err" || fail "no message for a full stdout"
fi
pass
