#!/bin/bash
# hdf5_truncated_during_read.sh - an HDF5 file truncated by another
# process while scan reads it (eleventh fresh-user round). libhdf5 reads
# the chunks past the new end of the file as zeros: scan said "ok" with
# zeros for the lost part, NaN missed, exit 0; a variable-length dataset cut so made
# the reader spin until the 60 s timeout. nanaudit now checks the file's
# size after every window libhdf5 reads and every second of a wait, so
# the file is an error ("file shrank from A to B bytes while being
# read"), exit 3, and the other input is still audited. A cut before the
# reader opened the file is libhdf5's own "truncated file" error. Either
# way the NaN count of the cut file is never reported.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c "
import h5py, numpy as np
a = np.random.default_rng(0).random(40_000_000, dtype=np.float32)
a[::1_000_000] = np.nan  # 40 NaN
with h5py.File('big.h5', 'w') as f:
    f.create_dataset('c', data=a, chunks=(1_000_000,))
v = np.arange(1000, dtype=np.float32)
v[::143] = np.nan  # 7 NaN
np.save('other.npy', v)
" || fail "making the inputs"
# the answer without a cut: a run that reports exactly it ended before
# the cut (anything else must be the error)
"$NANAUDIT" scan --threads 1 --format json big.h5 >ref.json </dev/null
ref() { "$NA_PYTHON" -c "import json, sys; print(json.dumps(json.load(open(sys.argv[1]))['files'][0]['tensors']))" "$1"; }
REF=$(ref ref.json) || fail "reference"
# the cut: once the reader child runs (the scan is in the data), 0.05 s
# later the file loses all but its first 40 MB
cut=0
for try in 1 2 3 4 5; do
    cp big.h5 victim.h5 || fail "cp"
    "$NANAUDIT" scan --threads 1 --format json victim.h5 other.npy \
        >"$T/stdout" 2>"$T/stderr" </dev/null &
    pid=$!
    for _ in $(seq 500); do
        pgrep -P "$pid" >/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    sleep 0.05
    truncate -s 40000000 victim.h5
    RC=0
    wait "$pid" || RC=$?
    [ "$RC" = 1 ] && [ "$(ref "$T/stdout")" = "$REF" ] && { echo "note: scan ended before the cut (try $try)"; continue; }
    cut=1
    break
done
[ "$cut" = 1 ] || fail "every scan ended before the cut"
assert_eq "$RC" "3" "exit status (stderr: $(cat "$T/stderr"))"
assert_eq "$(grep -c . "$T/stderr")" "1" "stderr lines"
grep -qE "^nanaudit: victim\.h5: (/c: file shrank from [0-9]+ to 40000000 bytes while being read|.*truncated file.*)$" \
    "$T/stderr" || fail "the line: $(cat "$T/stderr")"
cp "$T/stdout" r.json
expect_json r.json '[f["status"] for f in j["files"]]' '["error", "ok"]'
expect_json r.json '[t["nan"] for t in j["files"][1]["tensors"]]' '[7]'
# the cut file's dataset never reports counts from the zeros
expect_json r.json '[t["status"] for t in j["files"][0]["tensors"] if t["nan"] is not None]' '[]'
pass
