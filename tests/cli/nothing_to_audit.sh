#!/bin/bash
# Regression (issue 7, fresh-user report): `scan emptydir/` said "nothing
# to audit: no supported data file in the input" without naming it. One
# input is named like any file error, each of several too. Exit 3 always,
# one line per input on stderr, the summary on stdout.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
mkdir emptydir docs && echo hi >docs/README.md

expect_exit 3 "$N" scan emptydir/
assert_eq "$(cat "$T/stderr")" "nanaudit: emptydir/: nothing to audit: no supported data file"
expect_stdout_contains "1 file, 0 tensors, 0 elements: 0 NaN, 0 Inf, 0 outliers, 1 error; FAILED (exit 3)"
expect_exit 3 "$N" scan docs
assert_eq "$(cat "$T/stderr")" "nanaudit: docs: nothing to audit: no supported data file"
# several inputs: each named (it said "in the 2 inputs"), and every report
# says why the run failed: an error entry per input (fifteenth fresh-user
# round: JUnit had tests="0" errors="0", SARIF no result, Markdown "No
# findings." under "ERROR (exit 3)")
expect_exit 3 "$N" scan --format json --report r.xml --report r.sarif --report r.md emptydir docs
assert_eq "$(cat "$T/stderr")" "nanaudit: emptydir: nothing to audit: no supported data file
nanaudit: docs: nothing to audit: no supported data file" "stderr of two inputs"
expect_json "$T/stdout" '[j["summary"]["exit_code"], j["summary"]["errors"], [(f["path"], f["error"]) for f in j["files"]]]' \
    '[3, 2, [["emptydir", "nothing to audit: no supported data file"], ["docs", "nothing to audit: no supported data file"]]]'
grep -qF '<testsuites name="nanaudit" tests="2" failures="0" errors="2"' r.xml || fail "JUnit: $(head -3 r.xml)"
grep -qF '<error type="unreadable" message="nothing to audit: no supported data file"/>' r.xml || fail "JUnit error"
expect_json r.sarif '[(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in j["runs"][0]["results"]]' \
    '[["unreadable", "error", "emptydir"], ["unreadable", "error", "docs"]]'
grep -qF '| emptydir | \(file\) | error | | **yes** | nothing to audit\: no supported data file |' r.md || fail "Markdown: $(cat r.md)"
grep -q 'No findings' r.md && fail "Markdown says no findings"
pass
