#!/bin/bash
# clean_npz_zip64.sh - `nanaudit clean` reads its input .npz through
# formats/zip.c (issue 4, formats/npz_write.c), small files (this runs
# under the sanitizers too; large_clean_npz_zip64.sh has members of 4 GiB):
#  - a member whose sizes and offset are only in zip64 extra fields (the
#    members minizip 1.1 misreads, read by zip.c itself), stored and
#    deflated, copied byte for byte (its stored bytes, CRC and sizes) while
#    the member after it is cleaned as numpy computes it;
#  - a copied deflated member whose data, by its central directory size,
#    runs past the end of the file (a local extra field of 1000 bytes
#    moves it there; the scan reads only its header): exit 3, the one-line
#    message naming the input (its damage: round 32b), nothing written.
# Archives laid out by tests/tools/gen_zip64_bad.py's helpers.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - "$NA_SRC/tests/tools" <<'PY' || fail "making inputs"
import io, sys, zlib
import numpy as np
sys.path.insert(0, sys.argv[1])
from gen_zip64_bad import FF, archive, central, local, z64

def npy(x):
    b = io.BytesIO()
    np.save(b, x)
    return b.getvalue()

def pack(data, method):
    if method == 0:
        return data
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    return co.compress(data) + co.flush()

for method, out in ((0, "stored.npz"), (8, "deflated.npz")):
    a = npy(np.array([0, np.nan, 2, 3], np.float32))
    b = npy(np.array([1, np.inf, 3, np.nan], np.float32))
    pa, pb = pack(a, method), pack(b, method)
    la = local(b"a.npy", method, zlib.crc32(a), FF, FF, z64(len(a), len(pa))) + pa
    lb = local(b"b.npy", method, zlib.crc32(b), len(pb), len(b)) + pb
    open(out, "wb").write(archive(
        [la, lb], [central(b"a.npy", method, zlib.crc32(a), FF, FF, FF, z64(len(a), len(pa), 0)),
                   central(b"b.npy", method, zlib.crc32(b), len(pb), len(b), len(la))]))

# past_eof.npz: x.npy cleaned; y.npy (copied) has 40 KB of random bytes,
# more than minizip's first 16 KiB read of it, and its central size says
# (as its local one) 224 bytes more than it has: past the central
# directory and the end of the file.
x = npy(np.array([1, np.nan, 3, 4], np.float32))
y = npy(np.random.default_rng(1).integers(0, 255, (4, 10000), np.uint8))
px, py = pack(x, 8), pack(y, 8)
lx = local(b"x.npy", 8, zlib.crc32(x), len(px), len(x)) + px
ly = local(b"y.npy", 8, zlib.crc32(y), len(py) + 224, len(y), bytes(1000)) + py
blob = archive([lx, ly], [central(b"x.npy", 8, zlib.crc32(x), len(px), len(x), 0),
                         central(b"y.npy", 8, zlib.crc32(y), len(py) + 224, len(y), len(lx))])
open("past_eof.npz", "wb").write(blob)
open("past_eof.msg", "w").write(  # its data: after x, y's local header, name and extra
    f"nanaudit: past_eof.npz: zip: member 'y.npy' ({len(py) + 224} bytes at offset "
    f"{len(lx) + 30 + 5 + 1000}) runs past the end of the file ({len(blob)} bytes); "
    "nothing written\n")
PY

for f in stored deflated; do
    expect_exit 0 "$NANAUDIT" clean "$f.npz" -o "out-$f.npz" --include b --nonfinite zero
    expect_stdout_contains "written: out-$f.npz (verified)"
    "$NA_PYTHON" - "$f" <<'PY' || fail "$f: output differs from the input or numpy"
import sys, zipfile
import numpy as np
f = sys.argv[1]
i, o = zipfile.ZipFile(f + ".npz"), zipfile.ZipFile(f"out-{f}.npz")
a, b = i.getinfo("a.npy"), o.getinfo("a.npy")
assert (a.CRC, a.file_size, a.compress_size, a.compress_type) == \
    (b.CRC, b.file_size, b.compress_size, b.compress_type), (a, b)
def raw(path, info):  # the member's bytes as stored, after its local header
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        h = fh.read(30)
        fh.seek(info.header_offset + 30 + int.from_bytes(h[26:28], "little") +
                int.from_bytes(h[28:30], "little"))
        return fh.read(info.compress_size)
assert raw(f + ".npz", a) == raw(f"out-{f}.npz", b)
with np.load(f"out-{f}.npz") as z:
    assert np.array_equal(z["a"], np.array([0, np.nan, 2, 3], np.float32), equal_nan=True)
    x = np.array([1, np.inf, 3, np.nan], np.float32)
    assert z["b"].dtype == np.float32 and np.array_equal(z["b"], np.where(np.isfinite(x), x, 0))
PY
done

expect_exit 3 "$NANAUDIT" clean past_eof.npz -o out.npz --include x --nonfinite zero
cmp -s "$T/stderr" past_eof.msg || fail "stderr is not: $(cat past_eof.msg)"
[ ! -e out.npz ] || fail "output written for a member past the end of the file"
assert_eq "$(ls -A | grep -c nanaudit-tmp)" 0 "temporary file left"
pass
