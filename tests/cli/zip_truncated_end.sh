#!/bin/bash
# An .npz or PyTorch .pt that lost its last bytes (an interrupted download
# or copy) is refused, exit 3, as np.load and torch.load refuse it (Python's
# zipfile: "File is not a zip file"). Found by the sixth fresh-user round:
# minizip opened a zip64 archive (every torch.save file) without up to 21
# bytes of its end of central directory record, and an np.savez file
# without the last byte, so scan audited them as whole (exit 0/1) and
# clean wrote a copy. The 22-byte record must be whole (APPNOTE 4.3.16);
# an archive with a comment, and a whole one, still open.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
cp "$NA_TEST_DATA/real/pytorch/burn-checkpoint.pt" ck.pt
"$NA_PYTHON" -c "
import numpy as np, zipfile
np.savez('a.npz', x=np.arange(12.0).reshape(4, 3), y=np.ones(3, np.float32))
import shutil; shutil.copy('a.npz', 'c.npz')
with zipfile.ZipFile('c.npz', 'a') as z:
    z.comment = b'a zip comment'
" || fail "making inputs"

MSG="zip: the end of central directory record is cut short at the end of the file (truncated?)"
# cut FILE BYTES OUT: FILE without its last BYTES bytes
cut_end() { head -c $(($(stat -c %s "$1") - $2)) "$1" >"$3"; }
# python_refuses FILE: the reference refuses it too
python_refuses() {
    "$NA_PYTHON" -c "
import sys, zipfile
try:
    zipfile.ZipFile(sys.argv[1])
except zipfile.BadZipFile:
    sys.exit(0)
sys.exit(1)" "$1" || fail "Python's zipfile opens $1"
}

for c in 1 9 21; do
    cut_end ck.pt "$c" t.pt
    python_refuses t.pt
    for cmd in scan info; do
        expect_exit 3 "$N" "$cmd" t.pt
        assert_eq "$(cat "$T/stderr")" "nanaudit: t.pt: $MSG" "$cmd of a .pt without its last $c bytes"
    done
done
cut_end a.npz 1 t.npz
python_refuses t.npz
refused_everywhere t.npz "nanaudit: t.npz: $MSG" # an .npz without its last byte

# Whole archives, one with a comment, are audited as before.
expect_exit 0 "$N" scan ck.pt
expect_stdout_contains "5 tensors, 143 elements"
expect_exit 0 "$N" scan c.npz
expect_stdout_contains "2 tensors, 15 elements"
expect_exit 0 "$N" scan a.npz
pass
