#!/bin/bash
# errpath_cli.sh - command-line and --policy error paths no other test
# triggered (audit 25a): each is one line on stderr, exit 2 (usage), and
# nothing is read or written.
. "$(dirname "$0")/helpers.sh"

# one_line CODE LINE CMD... : exit CODE and stderr exactly LINE (one line)
one_line() {
    local code="$1" line="$2"; shift 2
    expect_exit "$code" "$@"
    assert_eq "$(wc -l <"$T/stderr" | tr -d ' ')" 1 "stderr lines of: $*"
    assert_eq "$(cat "$T/stderr")" "$line" "stderr of: $*"
}
printf '\0\0\x80\x3f\0\0\0\x40' >"$T/a.bin"

# --range LO:HI (cli/gate.c cli_set_range)
for r in 3:1 abc : 1:2:3 1:nan; do
    one_line 2 "nanaudit: --range: '$r' is not a range LO:HI of finite numbers with LO <= HI (either side may be empty) (try 'nanaudit scan --help')" \
        "$NANAUDIT" scan --dtype F32 --range "$r" "$T/a.bin"
done
# a raw-only option without --dtype (cli/options.c)
one_line 2 "nanaudit: --shape needs --dtype (it describes raw files) (try 'nanaudit scan --help')" \
    "$NANAUDIT" scan --shape 2 "$T/a.bin"

# --policy FILE problems (lib/policy_file.c): FILE:LINE: problem
pol() { # LINE MESSAGE <<< yaml
    cat >"$T/p.yaml"
    one_line 2 "nanaudit: --policy: $T/p.yaml:$1: $2 (try 'nanaudit scan --help')" \
        "$NANAUDIT" scan --policy "$T/p.yaml" "$T/does-not-exist.safetensors"
}
printf 'version: 1\ndefaults:\n  fail_on: [[nan]]\n' | pol 3 "fail_on: expected kind names"
printf 'version: 1\ndefaults:\n  fail_on: {a: 1}\n' | pol 3 "fail_on: expected a list of kinds"
printf 'version: 1\ndefaults:\n  range: [1]\n' | pol 3 "range: expected [LO, HI] (null for an open side)"
printf 'version: 1\nrules:\n  - match: []\n    max_abs: 1\n' | pol 3 "match: expected a glob or a list of globs"
printf 'version: 1\nrules:\n  - match: ""\n    max_abs: 1\n' | pol 3 "match: expected a non-empty glob"
printf 'version: 1\ndefaults:\n  [a]: 1\n' | pol 3 "defaults: keys must be plain words"
printf 'version: 1\nrules: 3\n' | pol 2 "rules: expected a list of rules (- match: GLOB ...)"
printf 'version: 1\ndefaults: [\n' | pol 3 "YAML error: did not find expected node content while parsing a flow node"
# an encoding error: its line, from libyaml's byte offset (round 27b:
# line 1, and two spaces before "(try")
printf 'version: 1\ndefaults:\n  fail_on: [nan, inf]\n\xff\n' | pol 4 "YAML error: invalid leading UTF-8 octet"
printf '\xffversion: 1\n' | pol 1 "YAML error: invalid leading UTF-8 octet"
printf 'version: 1\n---\nversion: 1\n' | pol 3 "a second YAML document; a policy is one document"
printf '' | pol 1 "empty policy (needs version: 1)"
printf '# only a comment\n' | pol 1 "empty policy (needs version: 1)"

# clean -o whose path does not fit PATH_MAX with the temporary prefix
# (cli/clean.c check_output_dir): exit 4, nothing created
mkdir -p "$T/out"
long="$(printf 'd/%.0s' $(seq 2100))o.bin"
expect_exit 4 "$NANAUDIT" clean --dtype F32 -o "$T/out/$long" "$T/a.bin"
assert_eq "$(wc -l <"$T/stderr" | tr -d ' ')" 1 "stderr lines"
expect_stderr_contains "/o.bin: path too long"
assert_eq "$(ls -A "$T/out")" "" "clean left a file"
pass
