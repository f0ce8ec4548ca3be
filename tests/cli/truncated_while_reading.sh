#!/bin/bash
# Regression (h13 new-user run): a file truncated by another process while
# nanaudit read it killed nanaudit with SIGBUS ("Bus error", shell status
# 135), which a CI gate cannot tell from a crash. DESIGN.md: an input that
# cannot be read is exit 3 with a one-line message (cli/sigbus.c).
. "$(dirname "$0")/helpers.sh"
BUSMSG="nanaudit: bus error reading an input: a file shrank while it was being read (truncated by another process?); no report written"

# 1. Deterministic: the handler itself. Standard output is a FIFO whose
# reader never reads, so nanaudit blocks writing its table (after main
# installed the handler: a --report FIFO without a reader no longer
# blocks, gate_reports.sh); then a SIGBUS arrives. Expect the message and
# exit 3, not death by signal.
"$NA_PYTHON" -c "
import numpy as np
from safetensors.numpy import save_file
save_file({f'tensor_with_a_long_name_{i:05d}': np.ones(4, np.float32) for i in range(4000)},
          '$T/many.safetensors')" || fail "many.safetensors"
mkfifo "$T/fifo" || fail "mkfifo"
sleep 60 <"$T/fifo" &
holder=$!
"$NANAUDIT" scan "$T/many.safetensors" >"$T/fifo" 2>"$T/err1" &
pid=$!
for _ in $(seq 200); do
    grep -q pipe "/proc/$pid/wchan" 2>/dev/null && break
    sleep 0.05
done
kill -BUS "$pid"
wait "$pid"
rc=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
assert_eq "$rc" 3 "exit after SIGBUS"
assert_eq "$(cat "$T/err1")" "$BUSMSG" "stderr after SIGBUS"

# 2. The real thing: a 512 MiB sparse raw file cut to one page while it
# is scanned (~0.7 s on 2 threads). Depending on where the truncation
# lands, mapfile.c's fstat check ("file shrank from ...") or the SIGBUS
# handler, which resumes the read with zero pages (cli/sigbus.c), finds
# it; either way exit 3 with the file's error, never a signal. Two files
# and the reports: scan_truncated_during_read.sh.
truncate -s 512M "$T/big.raw" || fail "truncate"
"$NANAUDIT" scan -q --dtype F32 --threads 2 "$T/big.raw" >"$T/out2" 2>"$T/err2" &
pid=$!
sleep 0.1
truncate -s 4096 "$T/big.raw"
wait "$pid"
rc=$?
if [ "$rc" -ne 3 ] && [ "$rc" -ne 0 ]; then
    fail "truncated during the scan: exit $rc (want 3), stderr: $(cat "$T/err2")"
fi
if [ "$rc" -eq 3 ]; then
    # the line names the file being read (sixth fresh-user round), and
    # the tensor (the raw reader's one tensor, "data")
    grep -qF -e "nanaudit: $T/big.raw: data: the file shrank while it was being read (truncated by another process?)" \
        -e "nanaudit: $T/big.raw: data: file shrank from 536870912 to 4096 bytes while being read" "$T/err2" \
        || fail "exit 3 without the truncation message: $(cat "$T/err2")"
fi
pass
