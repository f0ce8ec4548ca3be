#!/bin/bash
# examples/ci/prelaunch.sh runs as documented (issue 5, part 6): it starts
# the command only when the gate passes, and otherwise refuses with
# nanaudit's exit code and says why. examples/ci/policy.yaml is a valid
# policy. (The YAML files are parsed in tests/conformance/test_ci_examples.py.)
. "$(dirname "$0")/helpers.sh"

PRE="$NA_SRC/examples/ci/prelaunch.sh"
POL="$NA_SRC/examples/ci/policy.yaml"
export NANAUDIT
expect_exit 0 "$NANAUDIT" scan --policy "$POL" "$NA_SRC/examples/clean.safetensors"

# clean checkpoint: the command runs, with its own arguments and exit code
expect_exit 0 "$PRE" --policy "$POL" "$NA_SRC/examples/clean.safetensors" -- touch "$T/started"
[ -f "$T/started" ] || fail "the command did not start on a clean checkpoint"
expect_exit 7 "$PRE" "$NA_SRC/examples/clean.safetensors" -- sh -c 'exit 7'

# NaN in the checkpoint: refused, exit 1, nothing started
expect_exit 1 "$PRE" --policy "$POL" "$NA_SRC/examples/nan.safetensors" -- touch "$T/bad"
expect_stderr_contains "prelaunch: not starting 'touch': a finding fails the policy (nanaudit exit 1)"
[ ! -e "$T/bad" ] || fail "the command started although the gate failed"
# a missing shard: exit 3
expect_exit 3 "$PRE" "$T/missing.safetensors" -- touch "$T/bad"
expect_stderr_contains "an input could not be read or audited (nanaudit exit 3)"
# bad options, and no command at all
expect_exit 2 "$PRE" --range nope "$NA_SRC/examples/clean.safetensors" -- touch "$T/bad"
expect_stderr_contains "bad nanaudit options (nanaudit exit 2)"
expect_exit 2 "$PRE" "$NA_SRC/examples/clean.safetensors"
expect_stderr_contains "usage: prelaunch.sh"
[ ! -e "$T/bad" ] || fail "the command started although the gate failed"
# the report is kept when asked
NANAUDIT_REPORT="$T/r.json" expect_exit 1 "$PRE" "$NA_SRC/examples/nan.safetensors" -- true
expect_json "$T/r.json" 'j["summary"]["exit_code"]' 1
pass
