#!/usr/bin/env bash
# real_safetensors.sh - the valid safetensors files under tests/data/real/
# (written by burn, candle, SafeTensors.jl, the R package, modelaudit,
# swift-safetensors and safetensors-cpp; see tests/data/real/SOURCES.md)
# are audited with exit 0 (and `info` reads them), each with the right
# tensor and element counts (counted with the reference loader when the
# files were copied). The numbers themselves are compared with numpy in
# tests/conformance/test_real_files.py.
#
# Env (set by ctest): NANAUDIT = the binary, NA_TEST_DATA = tests/data.
set -u
: "${NANAUDIT:?set NANAUDIT to the nanaudit binary}"
: "${NA_TEST_DATA:?set NA_TEST_DATA to tests/data}"
command -v jq >/dev/null || { echo "FAIL: jq is needed (apt-get install jq)"; exit 1; }
REAL="$NA_TEST_DATA/real/safetensors"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME ARGS...: run nanaudit, stdout in $TMP/NAME.out, exit code in $rc.
run() {
    local name=$1; shift
    "$NANAUDIT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
}

# jqv NAME FILTER: one value from a JSON output.
jqv() { jq -r "$2" "$TMP/$1.out" 2>/dev/null || echo "<bad JSON>"; }

all=()
# file  tensors  elements (from safetensors.deserialize, numpy .size)
while read -r stem tensors elements; do
    f="$REAL/$stem.safetensors"
    run text scan "$f"
    [ "$rc" -eq 0 ] || fail "$stem: text scan exit $rc, expected 0: $(head -c 300 "$TMP/text.err")"
    run info info "$f"
    [ "$rc" -eq 0 ] || fail "$stem: info exit $rc, expected 0: $(head -c 300 "$TMP/info.err")"
    run json scan --format json "$f"
    [ "$rc" -eq 0 ] || fail "$stem: json scan exit $rc, expected 0"
    got="$(jqv json '[.files[0].status, .files[0].format, .summary.tensors, .summary.elements,
                     .summary.nan, .summary.pos_inf, .summary.neg_inf, .summary.errors,
                     .summary.exit_code] | map(tostring) | join(" ")')"
    want="ok safetensors $tensors $elements 0 0 0 0 0"
    [ "$got" = "$want" ] || fail "$stem: got '$got', expected '$want'"
    echo "ok $stem: scan and info exit 0, $tensors tensors, $elements elements"
    all+=("$f")
done <<'EOF'
burn-mnist 20 376940
burn-multi_layer 9 4241
candle-jfk-codes 1 1656
candle-voices 2 64812
fluxml-model.numpy 27 1107
fluxml-model 36 1476
fluxml-model.with_metadata 36 1476
mlverse-hello 2 150
modelaudit-malicious_import 3 273664
modelaudit-safe_model 3 273664
swiftst-data 1 4
syoyo-model 2 320
EOF

# All twelve in one run: one report, still exit 0.
run all scan --format json "${all[@]}"
got="$(jqv all '[.summary.files, .summary.tensors, .summary.exit_code] | map(tostring) | join(" ")')"
[ "$rc" -eq 0 ] && [ "$got" = "12 142 0" ] ||
    fail "all files in one run: exit $rc, files/tensors/exit_code '$got', expected '12 142 0'"
echo "ok all 12 files in one run: exit $rc ($got)"

# burn-mnist fc1.weight has 7 values beyond 6 std (numpy): the outlier gate
# turns them into exit 1; the default gate (nan,inf) does not.
run gate scan --format json --fail-on nan,inf,outliers "$REAL/burn-mnist.safetensors"
got="$(jqv gate '[.summary.outliers, .summary.failed, .summary.exit_code] | map(tostring) | join(" ")')"
[ "$rc" -eq 1 ] && [ "$got" = "7 true 1" ] ||
    fail "burn-mnist --fail-on nan,inf,outliers: exit $rc, '$got', expected exit 1, '7 true 1'"
echo "ok burn-mnist --fail-on nan,inf,outliers: exit 1, 7 outliers"

# Hostile metadata (code in __metadata__ strings) is data: exit 0 and no
# control characters reach the terminal.
run hostile scan "$REAL/modelaudit-malicious_import.safetensors"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/hostile.out" "$TMP/hostile.err"; then
    fail "malicious_import: control characters in the text output"
fi
[ "$rc" -eq 0 ] || fail "malicious_import: exit $rc, expected 0"
echo "ok modelaudit-malicious_import: exit $rc, no control characters in output"

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "PASS"
