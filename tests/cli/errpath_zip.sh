#!/bin/bash
# errpath_zip.sh - zip container error paths (formats/zip.c na_zip_open,
# member checks) no other test triggered (audit 25a): no end of central
# directory record at all, a member count the file cannot hold, a stored
# member whose compressed size differs from its size. One line, exit 3,
# for scan and clean (nothing written).
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T" <<'PY' || fail "could not write the test files"
import io, struct, sys, zipfile
import numpy as np
T = sys.argv[1]
b = io.BytesIO(); np.save(b, np.arange(6.0)); arr = b.getvalue()
bio = io.BytesIO()
with zipfile.ZipFile(bio, "w") as z:
    z.writestr("a.npy", arr)
raw = bytearray(bio.getvalue())
e = raw.rfind(b"PK\x05\x06"); c = raw.find(b"PK\x01\x02")
open(f"{T}/noeocd.npz", "wb").write(raw[:e])
open(f"{T}/cut10.npz", "wb").write(raw[:10])   # inside the first header (round 37b)
open(f"{T}/cut2.npz", "wb").write(raw[:2])     # "PK" (round 39a: unrecognised content)
open(f"{T}/cut3.npz", "wb").write(raw[:3])
r = bytearray(raw); struct.pack_into("<HH", r, e + 8, 60000, 60000)
open(f"{T}/many.npz", "wb").write(r)
r = bytearray(raw); n = len(arr)
struct.pack_into("<I", r, c + 20, n - 8); struct.pack_into("<I", r, 18, n - 8)
open(f"{T}/csize.npz", "wb").write(r)
print(len(raw), file=open(f"{T}/size", "w"))
# the end record counts fewer members than the central directory holds
# (round 30a: np.load reads all, minizip stopped at the count, and the
# NaN of the second member went unaudited, exit 0)
b2 = io.BytesIO(); np.save(b2, np.array([np.nan, 1.0])); nan = b2.getvalue()
bio = io.BytesIO()
with zipfile.ZipFile(bio, "w") as z:
    z.writestr("a.npy", arr)
    z.writestr("b.npy", nan)
raw2 = bytearray(bio.getvalue())
e2 = raw2.rfind(b"PK\x05\x06")
for cnt in (1, 0):
    r = bytearray(raw2); struct.pack_into("<HH", r, e2 + 8, cnt, cnt)
    open(f"{T}/count{cnt}.npz", "wb").write(r)
    assert np.isnan(np.load(f"{T}/count{cnt}.npz")["b"]).sum() == 1
# zip64 (round 31a): a zip64 record counting 1 of 2 members; a locator
# that names a record other than the one in front of it, whose directory
# is another (np.load reads the one in front, minizip the one named)
import zlib
def lh(n, d):
    n = n.encode()
    return struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0x21, zlib.crc32(d), len(d),
                       len(d), len(n), 0) + n + d
def ch(n, d, off, cm=b""):
    n = n.encode()
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0x21, zlib.crc32(d),
                       len(d), len(d), len(n), 0, len(cm), 0, 0, 0, off) + n + cm
def eocd(n, size, off): return struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, n, n, size, off, 0)
def rec64(n, size, off): return struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, size, off)
def loc64(at): return struct.pack("<IIQI", 0x07064b50, 0, at, 1)
A = lh("a.npy", arr); B = lh("b.npy", nan)
cd = ch("a.npy", arr, 0) + ch("b.npy", nan, len(A)); o = len(A + B)
open(f"{T}/z64count.npz", "wb").write(A + B + cd + rec64(1, len(cd), o) + loc64(o + len(cd)) +
                                      eocd(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF))
A = lh("x.npy", arr); B = lh("x.npy", nan); cd1 = ch("x.npy", arr, 0); o1 = len(A + B)
r = o1 + len(cd1); cd2 = ch("x.npy", nan, len(A), cm=loc64(r)); o2 = r + 56
open(f"{T}/z64loc.npz", "wb").write(A + B + cd1 + rec64(1, len(cd1), o1) + cd2 + eocd(1, len(cd2), o2))
# members x.npy.npy and x.npy: np.load's key "x.npy" gives the second
with zipfile.ZipFile(f"{T}/npynpy.npz", "w") as z:
    z.writestr("x.npy.npy", nan)
    z.writestr("x.npy", arr)
zz = np.load(f"{T}/npynpy.npz")
assert sorted(zz.files) == ["x", "x.npy"] and not any(np.isnan(zz[k]).any() for k in zz.files)
for f in ("z64count.npz", "z64loc.npz"):  # np.load returns the NaN of each
    z = np.load(f"{T}/{f}")
    assert any(np.isnan(z[k]).any() for k in z.files), f
PY

bad() { # FILE PROBLEM
    expect_exit 3 "$NANAUDIT" scan "$T/$1"
    assert_eq "$(cat "$T/stderr")" "nanaudit: $T/$1: $2" "scan of $1"
    expect_exit 3 "$NANAUDIT" clean -o "$T/out-$1" "$T/$1"
    expect_stderr_contains "nanaudit: $T/$1: $2"
    [ ! -e "$T/out-$1" ] || fail "clean wrote out-$1"
}
bad noeocd.npz "not a readable zip archive (no valid end of central directory record)"
bad cut10.npz "not a readable zip archive (no valid end of central directory record)"
bad cut2.npz "not a readable zip archive (no valid end of central directory record)"
bad cut3.npz "not a readable zip archive (no valid end of central directory record)"
bad many.npz "zip: 60000 members cannot fit in a file of $(cat "$T/size") bytes"
bad csize.npz "zip: stored member 'a.npy' has compressed size 168 but size 176"
bad count1.npz "zip: the end of central directory record counts 1 member but the central directory holds 2 (refused: readers disagree, np.load reads all 2)"
bad count0.npz "zip: the end of central directory record counts 0 members but the central directory holds 2 (refused: readers disagree, np.load reads all 2)"
bad npynpy.npz "members 'x.npy.npy' and 'x.npy': np.load's key 'x.npy' names the second, and the first's values are reached by no key it lists (refused)"
bad z64count.npz "zip: the zip64 end of central directory record counts 1 member but the central directory holds 2 (refused: readers disagree, np.load reads all 2)"
bad z64loc.npz "zip: the zip64 end record is not where its locator says, or has extensible data (refused: readers disagree on which central directory is the archive's)"
# what Python's zipfile checks and minizip does not (round 43b: audited
# and cleaned, np.load refused them): a local header naming another member,
# a central extra block running past its field
"$NA_PYTHON" - "$T" <<'PY' || fail "making lhname.npz, extra.npz"
import io, struct, sys, zipfile
import numpy as np
b = io.BytesIO(); np.save(b, np.arange(3.0)); npy = b.getvalue()
with zipfile.ZipFile(f"{sys.argv[1]}/lhname.npz", "w") as z:
    z.writestr("a.npy", npy)
raw = bytearray(open(f"{sys.argv[1]}/lhname.npz", "rb").read())
assert raw[30:35] == b"a.npy"
raw[30:35] = b"b.npy"
open(f"{sys.argv[1]}/lhname.npz", "wb").write(raw)
zi = zipfile.ZipInfo("a.npy")
zi.extra = struct.pack("<HH", 1, 0)  # a zip64 block with nothing to hold
with zipfile.ZipFile(f"{sys.argv[1]}/extra.npz", "w") as z:
    z.writestr(zi, npy)
raw = bytearray(open(f"{sys.argv[1]}/extra.npz", "rb").read())
c = raw.rfind(b"PK\x01\x02")  # the central header: its block claims 200 bytes
x = c + 46 + struct.unpack_from("<H", raw, c + 28)[0]
assert struct.unpack_from("<HH", raw, x) == (1, 0)
struct.pack_into("<H", raw, x + 2, 200)
open(f"{sys.argv[1]}/extra.npz", "wb").write(raw)
PY
bad lhname.npz "zip: member 'a.npy': the local header at offset 0 does not hold the central directory's name for it"
bad extra.npz "zip: member 'a.npy': central extra block 0x0001 of 200 bytes runs past the end of its extra field (4 bytes)"
# numpy refuses them too (not many.npz: Python's zipfile ignores the
# record's member count and reads the one central header)
"$NA_PYTHON" - "$T" <<'PY' || fail "numpy loads a file nanaudit refuses"
import sys, numpy as np
for n in ("noeocd", "csize", "lhname", "extra"):
    try:
        with np.load(f"{sys.argv[1]}/{n}.npz") as z:
            [z[k] for k in z.files]
    except Exception:
        continue
    raise SystemExit(f"numpy loads {n}.npz")
PY
pass
