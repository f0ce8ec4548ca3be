#!/usr/bin/env bash
# real_examples.sh - the bundled examples behave as README.md shows:
#  - README command 1 ends in `nanaudit scan examples/clean.safetensors`:
#    exit 0, nothing on stderr;
#  - every "$ build/nanaudit ..." block in README.md prints exactly the
#    output shown under it (text report, no colour off a terminal), so the
#    README cannot drift from the binary.
#
# Env (set by ctest): NANAUDIT = the binary, NA_SRC = the source tree.
set -u
: "${NANAUDIT:?set NANAUDIT to the nanaudit binary}"
: "${NA_SRC:?set NA_SRC to the source tree}"
cd "$NA_SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$NANAUDIT" scan examples/clean.safetensors >"$TMP/clean.out" 2>"$TMP/clean.err"
rc=$?
[ "$rc" -eq 0 ] || fail "scan examples/clean.safetensors: exit $rc, expected 0"
[ ! -s "$TMP/clean.err" ] || fail "scan examples/clean.safetensors wrote to stderr: $(cat "$TMP/clean.err")"
grep -q "OK (exit 0)" "$TMP/clean.out" || fail "clean example: no 'OK (exit 0)' summary line"
echo "ok README command 1: scan examples/clean.safetensors exits 0"

# Split README.md into blocks: a line "$ build/nanaudit ARGS" inside a
# fenced block starts one; the lines up to the closing fence are its output.
n=0
while IFS= read -r -d '' block; do
    args="${block%%$'\n'*}"
    expected="${block#*$'\n'}"
    n=$((n + 1))
    # shellcheck disable=SC2086  # ARGS are plain words in the README
    NO_COLOR=1 "$NANAUDIT" $args >"$TMP/out" 2>/dev/null
    if [ "$(cat "$TMP/out")" != "$expected" ]; then
        fail "README block '$args' differs from the binary's output:"
        diff <(printf '%s\n' "$expected") "$TMP/out" | head -20
    else
        echo "ok README block: nanaudit $args"
    fi
done < <(awk '
    /^\$ build\/nanaudit / { if (inb) printf "%s%c", buf, 0; inb = 1; buf = substr($0, 18); next }
    inb && /^```/ { printf "%s%c", buf, 0; inb = 0; next }
    inb { buf = buf "\n" $0 }' README.md)
[ "$n" -gt 0 ] || fail "no '\$ build/nanaudit' example blocks found in README.md"

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "PASS"
