#!/bin/bash
# large_clean_npz_zip64.sh - `nanaudit clean` of an .npz with a member of
# 4 GiB or more (issue 4, formats/npz_write.c): the input is read through
# formats/zip.c, which takes the zip64 sizes and offsets Debian's minizip
# 1.1 misreads (before, the members after the big one failed with "bad
# zip structure (-103)"), and the output is zip64 that Python's zipfile
# and numpy.load read back (and zip.c, whose checks of local against
# central headers run in clean's verification).
# The input, written by Python's zipfile (force_zip64, .npy headers from
# numpy's own writer), in this order:
#   a.npy    F32 [1..8, NaN, 40]            cleaned (before the big member)
#   big.npy  uint8, 2^32 + 4096 elements    copied: zero but for the bytes
#            of BIG_SET (one each side of 4 GiB)
#   c.npy    F32 [10..17, inf, -60]         cleaned (after it)
#   d.npy    int32 [5, 6, 7]                copied (after it)
# twice: stored (savez; c and d start past 4 GiB, big is sparse on disk)
# and deflated (savez_compressed; big is 4 MB of deflate data, which
# zip.c reads in place since minizip misreads its size).
# clean --include a --include c --zscore 2: a and c as numpy cleans them
# (drop non-finite rows, then rows with |x - mean| > 2 std, ddof 0), big
# and d byte for byte: CRC-32 and sizes in the central directory, d's
# bytes, big's .npy header and BIG_SET bytes (and a zero between them)
# read in place (stored), or its deflate data compared whole (deflated).
# The output's runs of zeros are holes (npz_write.c, nw_write), so both
# files take ~16 MB of disk, but 4.3 GB each on a filesystem without
# sparse files: skipped with a message when the disk has less than 12 GB
# free. ~8 s for the stored run (copying 4.3 GB), ~0.2 s for the deflated.
# Label "large": normal build only.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

avail=$(df -Pk "$T" | awk 'NR == 2 { print $4 }')
if [ "${avail:-0}" -lt $((12 * 1000 * 1000)) ]; then
    echo "SKIP $NA_TEST_NAME: needs 12 GB free in $T (has $((${avail:-0} / 1000)) MB)"
    exit 0
fi

# make_npz METHOD OUT: METHOD stored or deflated, as described above.
make_npz() {
    "$NA_PYTHON" - "$1" "$2" <<'PY' || fail "writing $2"
import ctypes, ctypes.util, io, sys, zipfile, zlib
import numpy as np

method, out = sys.argv[1], sys.argv[2]
N = (1 << 32) + 4096
BIG_SET = {0: 1, (1 << 32) - 1: 2, 1 << 32: 3, N - 1: 4}
STEP = 1 << 24

# CRC-32 of the zero runs without a pass over them: crc32_combine (zlib)
# joins the running CRC with that of a run of zeros, computed once per
# length. zipfile calls its module's crc32 on every piece it writes; only
# runs of zeros are longer than 4096 bytes here.
libz = ctypes.CDLL(ctypes.util.find_library("z"))
libz.crc32_combine64.restype = ctypes.c_ulong
libz.crc32_combine64.argtypes = [ctypes.c_ulong, ctypes.c_ulong, ctypes.c_int64]
zero_crc = {}
def crc32(data, crc=0):
    n = len(data)
    if n <= 4096:
        return zlib.crc32(data, crc)
    if n not in zero_crc:
        zero_crc[n] = zlib.crc32(bytes(n))
    return libz.crc32_combine64(crc, zero_crc[n], n)
zipfile.crc32 = crc32

class Sparse(io.FileIO):
    """Runs of zeros (every write over 4096 bytes) become holes."""
    def write(self, b):
        if len(b) > 4096:
            self.seek(len(b), io.SEEK_CUR)
            return len(b)
        return super().write(b)

class Deflater:
    """zlib's raw deflate, but a run of STEP zeros costs no pass: after a
    full flush (history reset, byte aligned; RFC 1951, zlib's Z_FULL_FLUSH)
    STEP zeros always compress to the same bytes, computed once."""
    def __init__(self):
        self.c = zlib.compressobj(6, zlib.DEFLATED, -15)
        self.run = None
    def compress(self, data):
        if len(data) != STEP:
            return self.c.compress(data)
        out = self.c.flush(zlib.Z_FULL_FLUSH)
        if self.run is None:
            self.run = self.c.compress(data) + self.c.flush(zlib.Z_FULL_FLUSH)
        return out + self.run
    def flush(self):
        return self.c.flush()

def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()

stored = method == "stored"
with (Sparse if stored else io.FileIO)(out, "w+") as f, \
        zipfile.ZipFile(f, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as z:
    z.writestr("a.npy", npy(np.array([1, 2, 3, 4, 5, 6, 7, 8, np.nan, 40], np.float32)))
    with z.open("big.npy", "w", force_zip64=True) as m:
        if not stored:
            m._compressor = Deflater()  # CPython's _ZipWriteFile compressor
        h = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            h, {"descr": "|u1", "fortran_order": False, "shape": (N,)})
        m.write(h.getvalue())
        at = 0
        for i, v in sorted(BIG_SET.items()):
            while at < i:
                k = min(STEP, i - at)
                m.write(bytes(k))
                at += k
            m.write(bytes([v]))
            at += 1
    z.writestr("c.npy", npy(np.array([10, 11, 12, 13, 14, 15, 16, 17, np.inf, -60],
                                     np.float32)))
    z.writestr("d.npy", npy(np.array([5, 6, 7], np.int32)))
PY
}

# check METHOD: out.npz against big.npz and numpy, as described above.
check() {
    "$NA_PYTHON" - "$1" <<'PY' || fail "$1: output differs from numpy's cleaning or the input"
import io, sys, zipfile
import numpy as np

stored = sys.argv[1] == "stored"
def ref(x):  # issue 4 semantics: drop non-finite, then |x - mean| > 2 std
    x = x[np.isfinite(x)]
    return x[np.abs(x - x.mean()) <= 2 * x.std()]

def data_at(f, info):  # file offset of a member's data, from its local header
    f.seek(info.header_offset)
    loc = f.read(30)
    return info.header_offset + 30 + int.from_bytes(loc[26:28], "little") + \
        int.from_bytes(loc[28:30], "little")

i, o = zipfile.ZipFile("big.npz"), zipfile.ZipFile("out.npz")
assert [m.filename for m in o.infolist()] == ["a.npy", "big.npy", "c.npy", "d.npy"], \
    o.namelist()
for name in ("big.npy", "d.npy"):
    a, b = i.getinfo(name), o.getinfo(name)
    assert (a.CRC, a.file_size, a.compress_size, a.compress_type) == \
        (b.CRC, b.file_size, b.compress_size, b.compress_type), (name, a, b)
assert o.read("d.npy") == i.read("d.npy")

N = (1 << 32) + 4096
BIG_SET = {0: 1, (1 << 32) - 1: 2, 1 << 32: 3, N - 1: 4, 1 << 31: 0}
a, b = i.getinfo("big.npy"), o.getinfo("big.npy")
with open("big.npz", "rb") as fi, open("out.npz", "rb") as fo, o.open("big.npy") as m:
    head = m.read(4096)
    h = io.BytesIO(head)
    np.lib.format.read_magic(h)
    assert np.lib.format.read_array_header_1_0(h) == ((N,), False, np.dtype(np.uint8))
    pi, po = data_at(fi, a), data_at(fo, b)
    if stored:
        hlen = 10 + int.from_bytes(head[8:10], "little")
        fo.seek(po)
        assert fo.read(hlen) == head[:hlen]
        for at, v in BIG_SET.items():
            fo.seek(po + hlen + at)
            assert fo.read(1) == bytes([v]), (at, v)
    else:
        assert b.compress_size < 8 << 20, b.compress_size
        fi.seek(pi)
        fo.seek(po)
        assert fi.read(a.compress_size) == fo.read(b.compress_size)

with np.load("out.npz") as z:
    for name, x in (("a", [1, 2, 3, 4, 5, 6, 7, 8, np.nan, 40]),
                    ("c", [10, 11, 12, 13, 14, 15, 16, 17, np.inf, -60])):
        want = ref(np.array(x, np.float32))
        assert z[name].dtype == np.float32 and np.array_equal(z[name], want), \
            (name, z[name], want)
    assert z["d"].tolist() == [5, 6, 7]
    if not stored:  # re-encoded as the archive's method
        assert o.getinfo("a.npy").compress_type == zipfile.ZIP_DEFLATED
PY
}

for method in stored deflated; do
    make_npz "$method" big.npz
    size=$(stat -c %s big.npz)
    [ "$method" = deflated ] || [ "$size" -gt 4294971392 ] || fail "big.npz is $size bytes"
    start=$(date +%s.%N)
    expect_exit 0 "$NANAUDIT" clean big.npz -o out.npz --include a --include c --zscore 2 \
        --max-drop-fraction 0.5 --allow-misaligned --no-fsync --report report.json
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    echo "$method: clean of a $size-byte .npz in $secs s"
    expect_stdout_contains "written: out.npz (verified)"
    # zeros stay holes where the filesystem has them (the input is sparse)
    if [ "$(du -k big.npz | cut -f1)" -lt 65536 ]; then
        disk=$(du -k out.npz | cut -f1)
        [ "$disk" -lt 65536 ] || fail "$method: out.npz takes $disk KiB of disk, not holes"
    fi
    check "$method"
    expect_json report.json '[t["status"] for t in j["tensors"]]' \
        '["cleaned", "copied", "cleaned", "copied"]'
    rm -f big.npz out.npz
done
pass
