#!/bin/bash
# Regression (issue 4, fresh-user report): `clean --report r.md` wrote JSON
# under a Markdown name, and `clean --report a.xml --report b.json` wrote
# only b.json. clean's change report is one JSON file: a second --report
# or scan's .xml/.md/.sarif names are usage errors (exit 2, one line,
# before any output); other names (.json, none, .txt) get JSON.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c 'import numpy as np; np.arange(6, dtype="<f8").tofile("a.f64")' || fail "input"
N="$NANAUDIT"
C=(clean --dtype F64 a.f64 -o o.f64 --nonfinite zero)

expect_exit 2 "$N" "${C[@]}" --report a.xml --report b.json
assert_eq "$(cat "$T/stderr")" "nanaudit: --report a.xml: clean's change report is JSON only (.xml, .md and .sarif are scan's report formats) (try 'nanaudit clean --help')"
expect_exit 2 "$N" "${C[@]}" --report a.json --report b.json
assert_eq "$(cat "$T/stderr")" "nanaudit: --report given twice ('a.json', 'b.json'): clean writes one JSON change report (try 'nanaudit clean --help')"
for f in r.md r.MARKDOWN r.sarif r.xml; do
    expect_exit 2 "$N" "${C[@]}" --report "$f"
    expect_stderr_contains "nanaudit: --report $f: clean's change report is JSON only"
done
[ -e o.f64 ] || [ -e a.xml ] || [ -e b.json ] || [ -e r.md ] && fail "a file was written after a usage error"

for f in r.json report r.txt; do
    expect_exit 0 "$N" "${C[@]}" --report "$f" --force
    expect_json "$f" 'j["command"]' '"clean"'
done
# --help and scan are unchanged: scan takes several, by extension
expect_exit 0 "$N" clean --help
expect_stdout_contains "given once, always JSON"
expect_exit 0 "$N" scan --dtype F64 a.f64 --report s.json --report s.md
expect_json s.json 'j["summary"]["files"]' '1'
grep -q '^## nanaudit: passed (exit 0)' s.md || fail "s.md is not Markdown"
pass
