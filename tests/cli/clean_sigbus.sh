#!/bin/bash
# A SIGBUS during `clean` (its input truncated by another process while
# mapped) is exit 3 with one line, and the hidden temporary output is
# removed too (cli/sigbus.c with cli_sigbus_unlink from cli/clean.c):
# nothing under the output's name, no .nanaudit-tmp-* file (issue 4,
# "Safety: nothing lost"; SIGINT/SIGTERM are in clean_safety.sh).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
# the line names the input (sixth fresh-user round: it said "an input")
BUSMSG="bus error: the file shrank while it was being read (truncated by another process?); nothing written"
mkdir out

# 1. Deterministic: the test hook raises SIGBUS after the first bytes of
# the temporary file are written.
"$NA_PYTHON" -c "import numpy as np; np.arange(4096*16, dtype=np.float64).tofile('in.f64')" \
    || fail "making in.f64"
LAST_RC=0
NANAUDIT_TEST_SIGNAL=BUS "$NANAUDIT" clean --dtype F64 --shape 4096x16 in.f64 -o out/bus.f64 \
    --normalize minmax >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
assert_eq "$LAST_RC" "3" "exit status after SIGBUS"
assert_eq "$(cat "$T/stderr")" "nanaudit: in.f64: $BUSMSG" "stderr after SIGBUS"
[ ! -e out/bus.f64 ] || fail "output exists after SIGBUS"
assert_eq "$(ls -A out | grep -c nanaudit-tmp)" "0" "temporary file left after SIGBUS"

# 2. The real thing: a 256 MiB sparse raw file cut to one page once the
# temporary output exists (the write pass or the verification is reading
# it). Depending on where the cut lands, mapfile.c's size check ("file
# shrank from ..."), the SIGBUS handler (zero pages, then the ordinary
# error path: "the file shrank while it was being read") or the check
# that the input did not change ("changed while it was being cleaned")
# reports it; either way exit 3 and nothing left. Should the clean finish
# before the cut (a very fast machine), exit 0 with the output is also
# correct. The report: scan_truncated_during_read.sh.
truncate -s 256M big.raw || fail "truncate"
"$NANAUDIT" clean --dtype F32 --nonfinite keep --normalize minmax big.raw -o out/big.f32 \
    >"$T/out2" 2>"$T/err2" </dev/null &
pid=$!
for _ in $(seq 400); do
    ls -A out | grep -q nanaudit-tmp && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
done
truncate -s 4096 big.raw
wait "$pid"
rc=$?
if [ "$rc" -eq 0 ]; then
    [ -e out/big.f32 ] || fail "exit 0 without output"
else
    assert_eq "$rc" "3" "exit after truncation mid-clean (stderr: $(cat "$T/err2"))"
    grep -qF -e "nanaudit: big.raw: data: the file shrank while it was being read (truncated by another process?); nothing written" \
        -e "shrank from 268435456 to 4096 bytes" -e "changed while it was being cleaned" "$T/err2" \
        || fail "exit 3 without the truncation message: $(cat "$T/err2")"
    [ ! -e out/big.f32 ] || fail "output exists after a truncated input"
fi
assert_eq "$(ls -A out | grep -c nanaudit-tmp)" "0" "temporary file left after truncation"
pass
