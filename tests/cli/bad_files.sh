#!/bin/bash
# bad_files.sh - every malformed safetensors file is refused: exit 3, the
# one-line message of its rule on stderr, within 10 s, no crash.
#
# Corpus: every file tests/data/bad/NAME with NAME.expect beside it (a
# fragment of the expected stderr; the safetensors ones are written by
# tests/tools/gen_bad.py); the real malformed file from
# syoyo/safetensors-cpp; and the cases too big to commit (`gen_bad.py --big`): a header above the 100,000,000-byte
# default cap, which --max-header-bytes makes auditable, and JSON nested
# 100,000 levels deep.
. "$(dirname "$0")/helpers.sh"

BAD="$NA_TEST_DATA/bad"
n=0
for f in "$BAD"/*; do
    case "$f" in *.expect | */README*) continue ;; esac
    [ -f "$f.expect" ] || fail "$f has no .expect file"
    frag="$(head -n 1 "$f.expect")"
    expect_exit 3 timeout 10 "$NANAUDIT" scan "$f"
    # "nanaudit: FILE: message" on one line (the CLI prefixes the path)
    expect_stderr_contains "nanaudit: $f: "
    grep -F -- "nanaudit: $f: " "$T/stderr" | grep -qF -- "$frag" ||
        fail "$f: stderr line lacks: $frag"
    n=$((n + 1))
done
[ "$n" -ge 40 ] || fail "only $n corpus files found in $BAD"

# the reference loader refuses them too (except F4, valid but not decoded)
if "$NA_PYTHON" -c "import safetensors" 2>/dev/null; then
    "$NA_PYTHON" "$NA_SRC/tests/tools/gen_bad.py" --check "$BAD" >"$T/check.txt" ||
        fail "corpus disagrees with the reference loader: $(cat "$T/check.txt")"
else
    echo "note: python safetensors missing, reference cross-check skipped"
fi

# `info` refuses them the same way (headers only)
expect_exit 3 timeout 10 "$NANAUDIT" info "$BAD/gap.safetensors"
expect_stderr_contains "tensor 'b' starts at data byte 8, leaving a gap of 4 bytes after 'a' (ends at 4)"

# the real malformed file: header length 1000 in an 88-byte file
REAL="$NA_TEST_DATA/real/syoyo-safetensors_abuse_attempt_1.safetensors"
expect_exit 3 timeout 10 "$NANAUDIT" scan "$REAL"
expect_stderr_contains "header length 1000 bytes runs past the end of the file (8 + 1000 > 88 bytes)"

# all of them in one run: still exit 3, and the clean file beside them is
# audited and reported ok
make_st "$T/clean.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[2],"values":[1,2]}]}'
expect_exit 3 timeout 60 "$NANAUDIT" scan --format json "$BAD"/*.safetensors "$T/clean.safetensors"
cp "$T/stdout" "$T/all.json"
expect_json "$T/all.json" '[f["status"] for f in j["files"]][-1]' '"ok"'
expect_json "$T/all.json" 'j["files"][-1]["tensors"][0]["elements"]' '2'
# every bad file is an error (f4_unsupported: its tensor is)
expect_json "$T/all.json" 'all(f["status"] == "error" or any(t["status"] == "error" for t in f["tensors"]) for f in j["files"][:-1])' 'true'

# generated at test time: a header of 100,000,001 bytes
"$NA_PYTHON" "$NA_SRC/tests/tools/gen_bad.py" --big "$T" || fail "gen_bad.py --big"
expect_exit 3 timeout 10 "$NANAUDIT" scan "$T/header_above_cap.safetensors"
expect_stderr_contains "header length 100000001 bytes exceeds the limit of 100000000 bytes (raise it with --max-header-bytes)"
expect_exit 0 timeout 30 "$NANAUDIT" scan --max-header-bytes 100000001 --format json "$T/header_above_cap.safetensors"
cp "$T/stdout" "$T/cap.json"
expect_json "$T/cap.json" 'j["files"][0]["tensors"][0]["max"]' '1.0'
rm -f "$T/header_above_cap.safetensors"
# JSON nested 100,000 levels: jansson's depth limit, no stack overflow
expect_exit 3 timeout 10 "$NANAUDIT" scan "$T/nested_100000.safetensors"
expect_stderr_contains "maximum parsing depth reached"
pass
