#!/bin/bash
# short_options.sh - regression (tester19): short options are read as
# getopt(3) reads them. Before, "-oOUT" and the bundle "-qo OUT" were
# "unknown option". Now: a value may be glued on ("-oOUT") or be the next
# word ("-o OUT"); flags bundle ("-qV"), and the first option of a bundle
# that takes a value takes the rest of the word or the next word
# ("-qo OUT", "-qoOUT"). A character that is no option of the command is
# named; a missing value is the same error as for the long name.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
TRY="(try 'nanaudit clean --help')"

"$NA_PYTHON" -c "import numpy as np; np.save('x.npy', np.array([[1.0, 2.0], [3.0, 4.0]]))" ||
    fail "could not write x.npy"
fresh() { rm -f o1.npy o2.npy o3.npy o4.npy; }

# -oOUT, -o OUT, -qo OUT, -qoOUT: the same output, quiet where -q is given
for form in "-oo1.npy" "-o o2.npy" "-qo o3.npy" "-qoo4.npy"; do
    # shellcheck disable=SC2086 # the form is split on purpose
    expect_exit 0 "$N" clean --nonfinite zero $form x.npy
done
for f in o1.npy o2.npy o3.npy o4.npy; do
    cmp -s o1.npy "$f" || fail "$f differs from o1.npy"
done
expect_exit 0 "$N" clean --nonfinite zero -qoo5.npy x.npy
expect_stdout_contains "written: o5.npy (verified)"
expect_stdout_lacks "clean x.npy (npy)"   # -q took effect
expect_exit 0 "$N" clean --nonfinite zero -oo6.npy x.npy
expect_stdout_contains "clean x.npy (npy)" # without -q: the full report
# -o= is not special: the value is "=o7.npy", as getopt gives it
expect_exit 0 "$N" clean --nonfinite zero -o=o7.npy x.npy
[ -f "=o7.npy" ] || fail "-o=o7.npy did not write '=o7.npy'"

# flag bundles
expect_exit 0 "$N" scan -qh
expect_stdout_contains "Usage: nanaudit scan"
expect_exit 0 "$N" -hV
expect_exit 0 "$N" -Vh

# errors: an unknown letter, alone or in a bundle; a value missing
expect_exit 2 "$N" clean -z x.npy -o o.npy
assert_eq "$(cat "$T/stderr")" "nanaudit: unknown option '-z' $TRY"
expect_exit 2 "$N" clean -qz x.npy -o o.npy
assert_eq "$(cat "$T/stderr")" "nanaudit: unknown option '-z' in '-qz' $TRY"
expect_exit 2 "$N" clean -zq x.npy -o o.npy
assert_eq "$(cat "$T/stderr")" "nanaudit: unknown option '-zq' $TRY"
expect_exit 2 "$N" scan -qo o.npy x.npy
assert_eq "$(cat "$T/stderr")" "nanaudit: unknown option '-o' in '-qo' (try 'nanaudit scan --help')"
expect_exit 2 "$N" clean --nonfinite zero x.npy -qo
assert_eq "$(cat "$T/stderr")" "nanaudit: --output needs an argument FILE $TRY"
pass
