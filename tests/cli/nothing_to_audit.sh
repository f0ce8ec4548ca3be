#!/bin/bash
# Regression (issue 7, fresh-user report): `scan emptydir/` said "nothing
# to audit: no supported data file in the input" without naming it. One
# input is named like any file error; several are counted. Exit 3 always,
# one line on stderr, the summary on stdout.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
mkdir emptydir docs && echo hi >docs/README.md

expect_exit 3 "$N" scan emptydir/
assert_eq "$(cat "$T/stderr")" "nanaudit: emptydir/: nothing to audit: no supported data file"
expect_stdout_contains "0 files, 0 tensors"
expect_exit 3 "$N" scan docs
assert_eq "$(cat "$T/stderr")" "nanaudit: docs: nothing to audit: no supported data file"
expect_exit 3 "$N" scan --format json emptydir docs
assert_eq "$(cat "$T/stderr")" "nanaudit: nothing to audit: no supported data file in the 2 inputs"
expect_json "$T/stdout" 'j["summary"]["exit_code"]' '3'
pass
