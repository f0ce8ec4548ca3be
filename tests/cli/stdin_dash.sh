#!/bin/bash
# Regression (h13 new-user run): `nanaudit scan - < file`, as many tools
# read stdin for "-", failed with a bare "nanaudit: -: No such file or
# directory". stdin is not read (the readers map and seek a regular file),
# so the message now says so, still exit 3 (a missing input). A file
# really named '-' is read through ./- or after --.
. "$(dirname "$0")/helpers.sh"
EX="$NA_SRC/examples/nan.safetensors"

cd "$T" || fail "cd"
expect_exit 3 "$NANAUDIT" scan - <"$EX"
expect_stderr_contains "nanaudit: -: No such file or directory (standard input is not read: give a file path; a file named '-' is ./-)"
expect_exit 3 "$NANAUDIT" info - <"$EX"
expect_stderr_contains "standard input is not read"

cp "$EX" ./- || fail "cp"
expect_exit 1 "$NANAUDIT" scan -q ./-
expect_stdout_contains "213 elements: 1 NaN, 1 Inf"
expect_exit 1 "$NANAUDIT" scan -q -- -
expect_stdout_contains "213 elements: 1 NaN, 1 Inf"
expect_stderr_lacks "standard input"
pass
