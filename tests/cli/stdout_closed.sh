#!/bin/bash
# stdout_closed.sh - a closed standard output (`>&-`) is exit 4 with one
# line for every command, and no file the run opens takes its descriptor:
# main.c puts /dev/null on a closed 0, 1 or 2 first (before, the first file
# opened became descriptor 1, so what was printed could land in it).
# clean refuses before any work (clean_safety.sh).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
E="$NA_SRC/examples/nan.safetensors"

run_closed() { # CMD...: stdout closed, stderr to err; sets rc
    rc=0
    "$@" >&- 2>err || rc=$?
}
run_closed "$N" scan "$E" --report r.json
assert_eq "$rc" "4" "scan exit"
assert_eq "$(cat err)" "nanaudit: write error on standard output" "scan stderr"
# the report says the run's exit code, 4 (it said the findings' 1)
"$NA_PYTHON" -c 'import json, sys; j = json.load(open("r.json")); assert j["summary"]["nan"] == 1 and j["summary"]["exit_code"] == 4, j["summary"]' ||
    fail "the report is not the scan's JSON with exit_code 4"
run_closed "$N" info "$E"
assert_eq "$rc" "4" "info exit"
assert_eq "$(cat err)" "nanaudit: write error on standard output" "info stderr"
run_closed "$N" --version
assert_eq "$rc" "4" "--version exit"
# stdin and stderr closed too: the run still works and says nothing
rc=0
"$N" scan -q "$E" --report r2.json <&- 2>&- >out || rc=$?
assert_eq "$rc" "1" "scan with stdin and stderr closed"
grep -q "FAILED (exit 1)" out || fail "scan's summary: $(cat out)"
"$NA_PYTHON" -c 'import json; json.load(open("r2.json"))' || fail "r2.json"
pass
