#!/bin/bash
# --policy FILE (issue 5, part 3): YAML defaults and per-tensor rules by
# glob; precedence policy defaults < flags < matching rules; every bad
# policy is exit 2 with "FILE:LINE: problem", decided before any input is
# opened (the inputs here do not exist).
. "$(dirname "$0")/helpers.sh"

F="$T/m.safetensors"
make_st "$F" '{"tensors": [
  {"name": "tok_embed.weight", "dtype": "F32", "shape": [4], "values": [1, -20, 30, 5]},
  {"name": "layer.bias", "dtype": "F32", "shape": [3], "values": [1, "nan", 300]},
  {"name": "bn.running_var", "dtype": "F32", "shape": [3], "values": [1, -0.5, 2]},
  {"name": "head.weight", "dtype": "F32", "shape": [2], "values": [0.5, 2000]}]}'

P="$T/p.yaml"
cat >"$P" <<'YAML'
# the team's gate
version: 1
defaults:
  fail_on: [nan, inf]
  max_abs: 1000
rules:
  - match: "*embed*"
    max_abs: 10
  - match: ["*.bias", "*.nothing"]
    fail_on: none
  - match: "*.running_var"
    min: 0
YAML
expect_exit 1 "$NANAUDIT" scan --policy "$P" --zscore 0 --format json --report "$T/r.json" "$F"
# embed: max_abs 10 from its rule, failing (a limit in a policy is a gate)
expect_json "$T/r.json" '[(f["kind"], f["count"], f["fails"]) for f in j["files"][0]["tensors"][0]["findings"]]' '[["max_abs", 2, true]]'
# bias: NaN reported but the rule's fail_on none lets it pass; max_abs 1000 from defaults is not hit
expect_json "$T/r.json" '[(f["kind"], f["fails"]) for f in j["files"][0]["tensors"][1]["findings"]]' '[["nan", false]]'
# running_var: min 0 -> range, and the name rule's negative (not failing: defaults' fail_on)
expect_json "$T/r.json" '[(f["kind"], f["count"], f["fails"]) for f in j["files"][0]["tensors"][2]["findings"]]' '[["range", 1, true], ["negative", 1, false]]'
# head: max_abs 1000 from the defaults; the defaults give fail_on, so only
# nan,inf fail there: reported, not failing
expect_json "$T/r.json" '[(f["kind"], f["count"], f["fails"]) for f in j["files"][0]["tensors"][3]["findings"]]' '[["max_abs", 1, false]]'
# flags beat the defaults, rules beat flags
expect_exit 1 "$NANAUDIT" scan --policy "$P" --fail-on max_abs --zscore 0 --format json --report "$T/r2.json" "$F"
expect_json "$T/r2.json" '[f["fails"] for f in j["files"][0]["tensors"][3]["findings"]]' '[true]'
expect_json "$T/r2.json" '[f["fails"] for f in j["files"][0]["tensors"][1]["findings"]]' '[false]'
expect_exit 1 "$NANAUDIT" scan --policy "$P" --max-abs 100000 --zscore 0 --format json --report "$T/r3.json" "$F"
expect_json "$T/r3.json" '[f["kind"] for f in j["files"][0]["tensors"][3]["findings"]]' '[]'
expect_json "$T/r3.json" '[f["count"] for f in j["files"][0]["tensors"][0]["findings"]]' '[2]'

# a policy without rules, tolerances
cat >"$T/tol.yaml" <<'YAML'
version: 1
defaults:
  max_nan_fraction: 0.5
  range: [null, 100]
YAML
expect_exit 1 "$NANAUDIT" scan --policy "$T/tol.yaml" --zscore 0 --format json --report "$T/t.json" "$F"
expect_json "$T/t.json" '[(f["kind"], f["fails"]) for f in j["files"][0]["tensors"][1]["findings"]]' '[["nan", false], ["range", true]]'
# the report's run-wide fail_on: the policy's defaults (a limit adds its kind), then --fail-on
expect_json "$T/t.json" 'j["fail_on"]' '["nan", "pos_inf", "neg_inf", "range"]'
expect_json "$T/r2.json" 'j["fail_on"]' '["max_abs"]'
# --fail-on replaces the defaults' fail_on, not a limit's gate: the
# defaults' range still fails with --fail-on nan (it did not: exit 0,
# tester round 22b), as a rule's limit always did
printf 'version: 1\ndefaults:\n  max_abs: 1\n' >"$T/lim.yaml"
expect_exit 1 "$NANAUDIT" scan -q --policy "$T/lim.yaml" --zscore 0 "$F"
expect_exit 1 "$NANAUDIT" scan -q --policy "$T/lim.yaml" --zscore 0 --fail-on nan,inf,outliers --format json --report "$T/lim.json" "$F"
expect_json "$T/lim.json" 'j["fail_on"]' '["nan", "pos_inf", "neg_inf", "outliers", "max_abs"]'
expect_json "$T/lim.json" '[f["fails"] for f in j["files"][0]["tensors"][0]["findings"] if f["kind"] == "max_abs"]' '[true]'

# errors: exit 2, FILE:LINE, nothing opened
bad() { # LINE MESSAGE <<< yaml
    cat >"$T/bad.yaml"
    expect_exit 2 "$NANAUDIT" scan --policy "$T/bad.yaml" "$T/does-not-exist.safetensors"
    expect_stderr_contains "nanaudit: --policy: $T/bad.yaml:$1: $2"
    expect_stderr_lacks "does-not-exist"
}
printf 'version: 1\ndefaults:\n  fail_on: [nan]\n  colour: red\n' | bad 4 "unknown key 'colour' in defaults (valid: fail_on, range,"
printf 'version: 1\nrules:\n  - match: "*"\n    max-abs: 3\n' | bad 4 "unknown key 'max-abs' in a rule (valid: match, fail_on,"
printf 'version: 1\nextra: 2\n' | bad 2 "unknown key 'extra' (valid: version, defaults, rules)"
printf 'version: 2\n' | bad 1 "version: only version 1 is known"
# a quoted version is a string, as a quoted number is elsewhere (fifteenth
# fresh-user round: accepted); a number below the smallest double too
printf 'version: "1"\n' | bad 1 "version: expected the number 1, not a quoted string"
printf 'version: 1\ndefaults:\n  max_abs: 1e-400\n' | bad 3 "max_abs: '1e-400' is not a finite number"
printf 'defaults:\n  max_abs: 1\n' | bad 1 "missing 'version: 1'"
printf 'version: 1\ndefaults:\n  max_abs: big\n' | bad 3 "max_abs: 'big' is not a finite number"
printf 'version: 1\ndefaults:\n  max_abs: -1\n' | bad 3 "max_abs: -1 is below 0"
# (eleventh fresh-user round) 010 was 10 here and 8 in PyYAML; 0x10 was
# read, 0o10 refused: decimal only
for v in 010 0x10 0o10 -07; do
    printf 'version: 1\ndefaults:\n  max_abs: %s\n' "$v" |
        bad 3 "max_abs: '$v' is not a decimal number (YAML 1.1 and 1.2 read it differently)"
done
printf 'version: 1\ndefaults:\n  max_abs: 0.5\n  max_nan_fraction: 0\n' >"$T/dec.yaml"
expect_exit 3 "$NANAUDIT" scan --policy "$T/dec.yaml" "$T/does-not-exist.safetensors"
printf 'version: 1\ndefaults:\n  max_abs: "5"\n' | bad 3 "max_abs: expected a number"
printf 'version: 1\ndefaults:\n  max_nan_fraction: 2\n' | bad 3 "max_nan_fraction: 2 is not a fraction from 0 to 1"
printf 'version: 1\ndefaults:\n  fail_on: [nan, boom]\n' | bad 3 "fail_on: unknown kind 'boom'"
printf 'version: 1\ndefaults:\n  range: [5, 1]\n' | bad 3 "range: LO 5 is above HI 1"
printf 'version: 1\ndefaults:\n  range: 5\n' | bad 3 "range: expected [LO, HI]"
# (twelfth fresh-user round) min above max in one scope is refused like
# range: [5, 1]; from two scopes the range is empty and every finite value
# is outside it, counted once (it was counted below LO and above HI both:
# more values than the tensor has)
printf 'version: 1\nrules:\n  - match: "*"\n    min: 5\n    max: 1\n' | bad 5 "max: min 5 is above max 1"
# range and min/max in one scope, in either order (fourteenth round: a
# range after max overwrote it, max: 1 then range: [5, null] was [5, inf]
# and max: 10 then range: [0, null] dropped the max, so 50 passed)
printf 'version: 1\ndefaults:\n  range: [0, 1]\n  min: 2\n' | bad 4 "min: range already sets the limits in this scope: give range or min and max, not both"
printf 'version: 1\ndefaults:\n  max: 1\n  range: [5, null]\n' | bad 4 "range: min or max already sets a limit in this scope: give range or min and max, not both"
printf 'version: 1\nrules:\n  - match: "*"\n    max: 10\n    range: [0, null]\n' | bad 5 "range: min or max already sets a limit in this scope"
printf 'version: 1\ndefaults:\n  min: 5\nrules:\n  - match: tok_embed.weight\n    max: 1\n' >"$T/empty.yaml"
expect_exit 1 "$NANAUDIT" scan --policy "$T/empty.yaml" "$F"
expect_stdout_contains "FAIL tok_embed.weight: 4 values outside [5, 1] (min -20, max 30)"
printf 'version: 1\ndefaults:\n  nonnegative: yes\n' | bad 3 "nonnegative: expected true or false"
printf 'version: 1\ndefaults:\n  cast_check: F32\n' | bad 3 "cast_check: expected F16, BF16, F8_E4M3 or F8_E5M2"
printf 'version: 1\ndefaults:\n  max_abs: 1\n  max_abs: 2\n' | bad 4 "duplicate key 'max_abs' in defaults"
printf 'version: 1\nrules:\n  - max_abs: 2\n' | bad 3 "rule 1 has no match: GLOB"
printf 'version: 1\nrules:\n  match: "*"\n' | bad 3 "rules: expected a list of rules"
printf 'version: 1\ndefaults: [1, 2]\n' | bad 2 "defaults: expected a mapping of keys"
printf 'version: 1\ndefaults:\n  max_abs: [1\n' | bad 4 "YAML error:"
printf '' | bad 1 "empty policy (needs version: 1)"
printf 'version: 1\n---\nversion: 1\n' | bad 3 "a second YAML document; a policy is one document"
# (eleventh fresh-user round) libyaml's loader tags untagged scalars str too,
# so !!str 5 read as the number 5 (PyYAML: the string "5"): tags are refused
printf 'version: 1\ndefaults:\n  max_abs: !!str 5\n' |
    bad 3 "YAML tag '!!str': tags are not supported in a policy (a value's type is its key's)"
printf 'version: !!int 1\n' | bad 1 "YAML tag '!!int': tags are not supported"
printf 'version: 1\nrules: !mine\n  - match: x\n' | bad 2 "YAML tag '!mine': tags are not"
# collections nested deeper than 64 are refused before the document is
# built: libyaml's scanner is quadratic in the depth of flow collections,
# and 100000 levels (600 KB) ran for minutes (fifteenth fresh-user round)
"$NA_PYTHON" -c 'n = 100000; print("version: 1\nrules:\n  - match: " + "{a: " * n + "1" + "}" * n)' |
    bad 3 "collections nested more than 64 deep"
"$NA_PYTHON" -c 'n = 65; print("version: 1\nrules:\n  - match: " + "[" * n + "1" + "]" * n)' |
    bad 3 "collections nested more than 64 deep"
# a merge key is named at its own line, and so is an unknown key whose value
# is an alias (its node's line is the anchor's, line 2)
printf 'version: 1\ndefaults: &d\n  max_abs: 5\nrules:\n  - match: "*"\n    <<: *d\n' |
    bad 6 "rule: merge keys (<<) are not supported: write the keys out"
printf 'version: 1\ndefaults: &d\n  max_abs: 5\nrules:\n  - match: "*"\n    bogus: *d\n' |
    bad 6 "unknown key 'bogus' in a rule"
# an alias as a value is fine: its anchor's mapping is read again
printf 'version: 1\nx: &g "*.w"\n' | bad 2 "unknown key 'x' (valid: version, defaults, rules)"
printf 'version: 1\ndefaults:\n  max_abs: &m 5\nrules:\n  - match: "*"\n    max_abs: *m\n' >"$T/alias.yaml"
expect_exit 1 "$NANAUDIT" scan --policy "$T/alias.yaml" "$F"
expect_stdout_contains "FAIL tok_embed.weight: 2 values with |x| > 5 (max |x| 30)"
expect_exit 2 "$NANAUDIT" scan --policy "$T/missing.yaml" "$F"
expect_stderr_contains "nanaudit: --policy: cannot read '$T/missing.yaml': No such file or directory"
head -c 1100000 /dev/zero | tr '\0' ' ' >"$T/huge.yaml"
expect_exit 2 "$NANAUDIT" scan --policy "$T/huge.yaml" "$F"
expect_stderr_contains "cannot read '$T/huge.yaml': larger than 1 MiB"
pass
