#!/bin/bash
# hostile_realdata.sh - every malformed or hostile file of tests/data/real
# (copied from ../shared/realdata with its SOURCES.md row: the HDF5 CVE
# reproducers, the GGUF fuzz seeds, the pickle exploit fixtures, the
# malformed netCDF files) is survived: no crash, no hang, no signal; the
# exit code is 3 (refused) or 0/1 (a correct audit of what is readable);
# stdout stays valid JSON (nothing a payload could print gets in); every
# stderr line is one "nanaudit: FILE: problem" line naming the file.
#
# Written to keep holding as readers land: a file that is "not supported"
# today (exit 3) may be audited tomorrow (exit 0/1), but it may never
# crash, hang (a 60 s timeout each, generous for loaded CI machines) or
# exit 2/4. Files whose outcome does not depend on a reader still being
# written are checked exactly below.
. "$(dirname "$0")/helpers.sh"

REAL="$NA_TEST_DATA/real"
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find "$REAL" -type f \( -path '*/malformed/*' -o -path '*/malicious/*' \
        -o -name 'modelaudit-*' -o -name '*corrupt*' -o -name '*broken*' \
        -o -name 'syoyo-safetensors_abuse*' \) -print0 | sort -z)
[ "${#files[@]}" -ge 30 ] || fail "only ${#files[@]} hostile files found under $REAL"

for f in "${files[@]}"; do
    rc=0
    timeout -s KILL 60 "$NANAUDIT" scan --format json "$f" >"$T/stdout" 2>"$T/stderr" \
        </dev/null || rc=$?
    case "$rc" in
        0 | 1 | 3) ;;
        137) fail "$f: hung (killed after 60 s)" ;;
        *) fail "$f: exit $rc (want 0, 1 or 3; >128 is a signal)" ;;
    esac
    json_get "$T/stdout" 'j["files"][0]["path"]' >/dev/null
    if [ "$rc" = 3 ]; then
        [ -s "$T/stderr" ] || fail "$f: exit 3 without a message"
    fi
    # every line names the file; a message is never split over lines
    while IFS= read -r line; do
        case "$line" in
            "nanaudit: $f: "?*) ;;
            *) fail "$f: stderr line does not name the file: $line" ;;
        esac
    done <"$T/stderr"
done

# all of them in one run: exit 3, one report entry per file, every one
# of them present in the JSON
rc=0
timeout -s KILL 300 "$NANAUDIT" scan --format json "${files[@]}" >"$T/all.json" 2>"$T/stderr" \
    </dev/null || rc=$?
assert_eq "$rc" 3 "exit code of the whole set"
expect_json "$T/all.json" 'len(j["files"])' "${#files[@]}"

# outcomes that do not depend on a reader in progress
expect_exit 3 timeout 60 "$NANAUDIT" scan "$REAL/hdf5/malformed/hdfgroup-tmulti-g.h5"
expect_stderr_contains "hdfgroup-tmulti-g.h5: empty file (0 bytes)"
expect_exit 3 timeout 60 "$NANAUDIT" scan "$REAL/gguf/malformed/gridcore-fuzz-trunc-magic.bin"
expect_stderr_contains "gridcore-fuzz-trunc-magic.bin: "
# valid safetensors whose metadata holds code text: audited, text kept
# as data (JSON string), never interpreted
expect_exit 0 timeout 60 "$NANAUDIT" scan --format json \
    "$REAL/safetensors/modelaudit-malicious_import.safetensors"
cp "$T/stdout" "$T/mal.json"
expect_json "$T/mal.json" '[t["name"] for t in j["files"][0]["tensors"]]' \
    '["bias", "embeddings", "weights"]'
expect_json "$T/mal.json" 'j["summary"]["elements"]' '273664'
# the pickle payloads (echo pwned, whoami) never run: stdout above was
# JSON every time; and no reader leaves a file behind
assert_eq "$(find "$T" -name 'pwned*' | wc -l)" 0 "files left by a payload"
pass
