#!/bin/bash
# gate_idle_fail_on.sh - regression (fifth fresh-user round): --fail-on
# range (or max_abs, cast_overflow, cast_underflow) without the option
# that computes it (--range, --max-abs, --cast-check) found nothing and
# passed every file, silently: a CI gate that reads as strict and checks
# nothing. scan now warns, one line per kind, and still runs as asked (a
# --policy file can switch the checks on per tensor, so none with one).
. "$(dirname "$0")/helpers.sh"
N="$NANAUDIT"
make_st "$T/w.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[3],"values":[1, 300, 1e-30]}]}'

expect_exit 0 "$N" scan --fail-on range,max_abs,cast_overflow,cast_underflow "$T/w.safetensors"
assert_eq "$(cat "$T/stderr")" "nanaudit: warning: --fail-on range finds nothing without --range
nanaudit: warning: --fail-on max_abs finds nothing without --max-abs
nanaudit: warning: --fail-on cast_overflow finds nothing without --cast-check
nanaudit: warning: --fail-on cast_underflow finds nothing without --cast-check" "warnings"
# with the checks on: the findings fail the run, no warning
expect_exit 1 "$N" scan --fail-on range,max_abs,cast_underflow --range 0:255 --max-abs 100 \
    --cast-check F16 "$T/w.safetensors"
expect_stderr_empty
expect_stdout_contains "FAIL w: 1 value outside [0, 255]"
# the default list and a policy file: no warning
expect_exit 0 "$N" scan "$T/w.safetensors"
expect_stderr_empty
printf 'version: 1\ndefaults:\n  fail_on: [nan, range]\nrules:\n  - match: "w"\n    range: [0, 255]\n' >"$T/p.yaml"
expect_exit 1 "$N" scan --policy "$T/p.yaml" "$T/w.safetensors"
expect_stderr_empty
pass
