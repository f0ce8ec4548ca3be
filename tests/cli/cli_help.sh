#!/bin/bash
# The option table in cli/options.c feeds --help; every flag of that table
# must appear in --help and in man/nanaudit.1 (curl tests 1139/1478 idea),
# and the man page must have its sections and render without warnings.
. "$(dirname "$0")/helpers.sh"

MAN="$NA_SRC/man/nanaudit.1"
[ -f "$MAN" ] || fail "no man page at $MAN"
flags="$(grep -oE '^    \{"[a-z-]+",' "$NA_SRC/cli/options.c" | sed -E 's/.*"([a-z-]+)".*/\1/')"
[ "$(echo "$flags" | wc -l)" -ge 17 ] || fail "option table not found in cli/options.c"
"$NANAUDIT" --help >"$T/h.global"
"$NANAUDIT" scan --help >"$T/h.scan"
"$NANAUDIT" info --help >"$T/h.info"
"$NANAUDIT" clean --help >>"$T/h.info"
# the man page writes - as \- in roff
sed 's/\\-/-/g' "$MAN" >"$T/man.txt"
for f in $flags; do
    cat "$T/h.global" "$T/h.scan" "$T/h.info" | grep -qF -- "--$f" || fail "--$f missing from --help"
    grep -qF -- "--$f" "$T/man.txt" || fail "--$f missing from man/nanaudit.1"
done
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS STATISTICS '"EXIT STATUS"' FILES ENVIRONMENT EXAMPLES; do
    grep -q "^\.SH $s" "$MAN" || fail "man page lacks section $s"
done
grep -q 'ddof=0' "$T/man.txt" || fail "man page does not say ddof=0"
grep -q 'NO_COLOR' "$T/man.txt" || fail "man page lacks NO_COLOR"
grep -q 'ddof=0' "$T/h.scan" || fail "scan --help does not say ddof=0"
# each command's own exit statuses (info has no policy: it printed scan's
# "1 findings fail the policy", fourth fresh-user round)
"$NANAUDIT" info --help >"$T/h.info1"
grep -qF "Exit status: 0 listed, 2 usage error, 3 an input could not be read," "$T/h.info1" ||
    fail "info --help lacks its exit statuses"
! grep -qF "fail the policy" "$T/h.info1" || fail "info --help gives scan's exit statuses"
grep -qF "1 findings fail the policy" "$T/h.scan" || fail "scan --help lacks its exit statuses"
long="$(cat "$T/h.global" "$T/h.scan" "$T/h.info" | awk 'length($0) > 79')"
[ -z "$long" ] || fail "--help lines over 79 columns: $long"
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$MAN" 2>"$T/groff.err"
    [ ! -s "$T/groff.err" ] || fail "groff warnings: $(cat "$T/groff.err")"
fi
pass
