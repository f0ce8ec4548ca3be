#!/bin/bash
# `nanaudit clean` never loses data (issue 4, "Safety"): the input is
# untouched; a file-size limit (RLIMIT_FSIZE, ulimit -f) is a write error
# (exit 4) that leaves neither the output nor the temporary file; SIGTERM
# and SIGINT mid-write remove the temporary file and create no output;
# SIGKILL can leave only the hidden temporary file, never the output.
# The signals come from the NANAUDIT_TEST_SIGNAL hook (cli/clean.c),
# raised right after the first data bytes reach the temporary file, so
# the test is deterministic.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir out
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
rng = np.random.default_rng(0)
save_file({"a": rng.normal(size=(512, 256)).astype(np.float32),
           "b": rng.normal(size=(256, 256))}, "in.safetensors", metadata={"m": "1"})
rng.normal(size=(4096, 16)).tofile("in.f64")
PY
sum0="$(sha256sum in.safetensors in.f64)"
N="$NANAUDIT"

# a normal run: the output appears, no temporary file is left
expect_exit 0 "$N" clean in.safetensors -o out/ok.safetensors --normalize zscore
[ -f out/ok.safetensors ] || fail "no output"
assert_eq "$(ls -A out | grep -c nanaudit-tmp)" "0" "temporary files left"
expect_stdout_contains "written: out/ok.safetensors (verified)"

# disk full / file too large: 64 KiB limit, the output needs ~1 MiB.
# Not in the ThreadSanitizer build: under `ulimit -f 64` any TSan + libomp
# binary dies at start-up (SIGBUS in libomp's initialisation, whatever the
# command), before nanaudit runs; the other builds test it.
if ! nm "$N" 2>/dev/null | grep -q '__tsan_init'; then
    LAST_RC=0
    (ulimit -f 64; exec "$N" clean in.safetensors -o out/big.safetensors --normalize minmax) \
        >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    assert_eq "$LAST_RC" "4" "exit code under RLIMIT_FSIZE"
    expect_stderr_contains "out/big.safetensors: a: write error: File too large; nothing written"
    [ ! -e out/big.safetensors ] || fail "partial output after a write error"
    assert_eq "$(ls -A out | grep -c nanaudit-tmp)" "0" "temporary file left after a write error"
fi

# SIGTERM / SIGINT mid-write: handler removes the temporary file
# (and the other signals that end a run by default: SIGUSR1 and SIGXCPU,
# a CPU-time limit, left the temporary file behind)
# (and SIGPWR, SIGIO, SIGSTKFLT: round 34b)
for sig in TERM INT USR1 XCPU SYS PWR IO STKFLT; do  # (bash prints "Terminated" for the child: expected)
    LAST_RC=0
    NANAUDIT_TEST_SIGNAL=$sig "$N" clean --dtype F64 --shape 4096x16 in.f64 -o out/sig.f64 \
        --normalize minmax >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    want=$((128 + $(kill -l "$sig")))
    assert_eq "$LAST_RC" "$want" "exit status after SIG$sig"
    [ ! -e out/sig.f64 ] || fail "output exists after SIG$sig"
    assert_eq "$(ls -A out | grep -c nanaudit-tmp)" "0" "temporary file left after SIG$sig"
done

# SIGKILL: only the hidden temporary file may remain, never the output
LAST_RC=0
NANAUDIT_TEST_SIGNAL=KILL "$N" clean in.safetensors -o out/kill.safetensors --normalize minmax \
    >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
assert_eq "$LAST_RC" "137" "exit status after SIGKILL"
[ ! -e out/kill.safetensors ] || fail "output exists after SIGKILL"
ls -A out | grep -qE '^\.nanaudit-tmp-......-kill\.safetensors$' || fail "no recognisable temp file: $(ls -A out)"

# verification: a written file that does not match the prediction is
# removed, exit 4
expect_exit 4 env NANAUDIT_TEST_CORRUPT=1 "$N" clean --dtype F64 --shape 4096x16 in.f64 \
    -o out/bad.f64 --normalize minmax
expect_stderr_contains "out/bad.f64: verification: tensor 'data' statistics differ from the prediction; nothing written"
[ ! -e out/bad.f64 ] || fail "unverified output renamed into place"
assert_eq "$(ls -A out | grep -c 'nanaudit-tmp-.*-bad')" "0" "temporary file left after a failed verification"

# standard output closed or full (thirteenth fresh-user round: exit 4
# with OUT in place, so "4" did not mean "nothing written"): closed is
# refused before any work; full is found after OUT is in place, and the
# line says that OUT was written
rc=0
"$N" clean --dtype F64 --shape 4096x16 in.f64 -o out/closed.f64 >&- 2>"$T/err.closed" || rc=$?
assert_eq "$rc" "4" "exit with stdout closed"
assert_eq "$(cat "$T/err.closed")" "nanaudit: standard output is closed: clean writes its report there (give >/dev/null to discard it); nothing written" "closed stdout"
[ ! -e out/closed.f64 ] || fail "OUT written with stdout closed"
rc=0
"$N" clean --dtype F64 --shape 4096x16 in.f64 -o out/full.f64 --report out/full.json >/dev/full 2>"$T/err.full" || rc=$?
assert_eq "$rc" "4" "exit with stdout full"
# the --report file, written before stdout, says exit 4 too (it said 0)
"$NA_PYTHON" -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["exit_code"] == 4 and j["written"], j["exit_code"]' out/full.json ||
    fail "--report with stdout full: $(head -c 300 out/full.json)"
assert_eq "$(cat "$T/err.full")" "nanaudit: write error on standard output: the report is lost, but out/full.f64 was written and verified" "full stdout"
[ -e out/full.f64 ] || fail "no OUT with stdout full"

# the inputs were never modified
assert_eq "$(sha256sum in.safetensors in.f64)" "$sum0" "input checksums"
pass
