#!/usr/bin/env bash
# real_sources.sh - every file under tests/data/real/ has its provenance row
# in tests/data/real/SOURCES.md (origin, license, commit), and is a
# byte-for-byte copy of a file of the same name under ../shared/realdata/
# when that folder is present (DESIGN.md, "Real files"; $NA_REALDATA
# overrides its location).
#
# Env (set by ctest): NA_TEST_DATA = tests/data.
set -u
: "${NA_TEST_DATA:?set NA_TEST_DATA to tests/data}"
REAL="$NA_TEST_DATA/real"
SHARED="${NA_REALDATA:-$NA_TEST_DATA/../../../shared/realdata}"
fails=0
n=0
while IFS= read -r -d '' f; do
    rel="${f#"$REAL"/}"
    [ "$rel" = "SOURCES.md" ] && continue
    n=$((n + 1))
    if ! grep -qF "| \`$rel\` |" "$REAL/SOURCES.md"; then
        echo "FAIL: $rel has no row in tests/data/real/SOURCES.md"
        fails=$((fails + 1))
    fi
    # The copy may sit in another folder than in realdata: compare with
    # every shared file of the same name; one of them must be identical.
    if [ -d "$SHARED" ]; then
        same=0 seen=0
        while IFS= read -r -d '' s; do
            seen=1
            cmp -s "$f" "$s" && same=1
        done < <(find "$SHARED" -type f -name "${f##*/}" -print0)
        if [ "$seen" -eq 1 ] && [ "$same" -eq 0 ]; then
            echo "FAIL: $rel differs from every ${f##*/} under $SHARED"
            fails=$((fails + 1))
        fi
    fi
done < <(find "$REAL" -type f -print0 | sort -z)
[ "$n" -gt 0 ] || { echo "FAIL: no files under $REAL"; exit 1; }
if [ "$fails" -ne 0 ]; then
    echo "$fails problem(s) in $n files"
    exit 1
fi
echo "ok $n files under tests/data/real, each with its SOURCES.md row"
echo "PASS"
