#!/bin/bash
# An input that shrinks while clean writes its copy is exit 3 with one
# line naming the INPUT, nothing written. Found by the sixth fresh-user
# round: a safetensors input truncated by another process during the
# write pass gave "nanaudit: OUT: file shrank from ... while being read",
# naming the output, which was never read. Deterministic: the
# NANAUDIT_TEST_SIGNAL=STOP hook stops clean after each write to the
# temporary file; the input is cut while clean is stopped after its first
# 16 MiB, to a size that keeps the 64 MiB window then mapped readable
# (no SIGBUS), so the next window's size check (formats/mapfile.c) finds
# it. The input is a sparse file: nothing large is written to disk.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir out
H=$("$NA_PYTHON" -c "
import json, struct
a, b = 4 << 20, 25 << 20  # F32 elements: 16 MiB, then 100 MiB
hdr = {'a': {'dtype': 'F32', 'shape': [a], 'data_offsets': [0, 4 * a]},
       'b': {'dtype': 'F32', 'shape': [b], 'data_offsets': [4 * a, 4 * (a + b)]}}
h = json.dumps(hdr).encode()
h += b' ' * (-len(h) % 8)
with open('in.safetensors', 'wb') as f:
    f.write(struct.pack('<Q', len(h)) + h)
    f.truncate(8 + len(h) + 4 * (a + b))
print(8 + len(h))") || fail "making the input"
SIZE=$(stat -c %s in.safetensors)

NANAUDIT_TEST_SIGNAL=STOP "$NANAUDIT" clean --exclude '*' in.safetensors -o out/o.safetensors \
    >"$T/stdout" 2>"$T/stderr" </dev/null &
PID=$!
wait_stopped "$PID"
truncate -s $((H + (64 << 20))) in.safetensors
continue_to_end "$PID"
wait "$PID"
assert_eq "$?" "3" "exit status (stderr: $(cat "$T/stderr"))"
assert_eq "$(cat "$T/stderr")" "nanaudit: in.safetensors: file shrank from $SIZE to $((H + (64 << 20))) bytes while being read; nothing written" "stderr"
assert_eq "$(ls -A out)" "" "files left under out/"
pass
