#!/bin/bash
# github_escape.sh - regression (tester19): --format github and a failed
# standard output.
#  - GitHub's workflow commands give meaning to '%', CR and LF (and ':'
#    and ',' in a property such as title=); actions/toolkit's escapeData
#    and escapeProperty (packages/core/src/command.ts) turn them into %25,
#    %0D, %0A, %3A and %2C, and a backslash means nothing to GitHub. Our
#    own escape for other control bytes is the text "\xhh", as in the text
#    report, so a backslash of the name must be written "\\" as there:
#    before, a tensor named 'a\x01' (a backslash, 'x', '0', '1') and one
#    named "a" + byte 0x01 gave the same annotation.
#  - `scan > /dev/full` printed two error lines for one failed write
#    ("cannot write the report to standard output: write error", then
#    "write error on standard output"); now one, exit 4, for every --format.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
make_st bs.safetensors '{"tensors":[{"name":"a\\x01","dtype":"F32","shape":[2],"values":[1,"nan"]},{"name":"b\u0001","dtype":"F32","shape":[2],"values":[1,"nan"]},{"name":"p%,c:d\nx","dtype":"F32","shape":[2],"values":[1,"nan"]}]}'

expect_exit 1 "$N" scan --format github bs.safetensors
assert_eq "$(cat "$T/stdout")" '::error file=bs.safetensors,title=nanaudit nan%3A a\\x01::1 NaN value (first at [1])
::error file=bs.safetensors,title=nanaudit nan%3A b\x01::1 NaN value (first at [1])
::error file=bs.safetensors,title=nanaudit nan%3A p%25%2Cc%3Ad%0Ax::1 NaN value (first at [1])
::notice title=nanaudit::1 file, 3 tensors: 3 NaN, 0 Inf, 0 outliers, 0 errors; exit 1' "github output"
# the text report writes the two names the same way
expect_exit 1 "$N" scan bs.safetensors
expect_stdout_contains '  a\\x01 '
expect_stdout_contains '  b\x01 '

# a bidi override (U+202E) in a file name is escaped as the text report
# escapes it: it reordered what the annotation showed (eighteenth
# fresh-user round); other non-ASCII text stays as it is
cp bs.safetensors "$(printf 'bidi\xe2\x80\xaeX-\xc3\xa9.safetensors')"
expect_exit 1 "$N" scan --format github "$(printf 'bidi\xe2\x80\xaeX-\xc3\xa9.safetensors')"
expect_stdout_contains "$(printf '::error file=bidi\\xe2\\x80\\xaeX-\xc3\xa9.safetensors,title=nanaudit nan%%3A a')"
expect_exit 1 "$N" scan "$(printf 'bidi\xe2\x80\xaeX-\xc3\xa9.safetensors')"
expect_stdout_contains "$(printf 'bidi\\xe2\\x80\\xaeX-\xc3\xa9.safetensors (safetensors)')"

# one line for one failed write to standard output, whatever the format
if [ -w /dev/full ]; then
    for fmt in text json github; do
        rc=0
        "$N" scan --format "$fmt" bs.safetensors >/dev/full 2>err.txt || rc=$?
        assert_eq "$rc" 4 "exit code of scan --format $fmt >/dev/full"
        assert_eq "$(cat err.txt)" "nanaudit: write error on standard output" "stderr of --format $fmt"
    done
    rc=0
    "$N" info bs.safetensors >/dev/full 2>err.txt || rc=$?
    assert_eq "$rc" 4 "exit code of info >/dev/full"
    assert_eq "$(cat err.txt)" "nanaudit: write error on standard output" "stderr of info"
else
    echo "note: no writable /dev/full, the write-error case is skipped"
fi
pass
