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
PY

bad() { # FILE PROBLEM
    expect_exit 3 "$NANAUDIT" scan "$T/$1"
    assert_eq "$(cat "$T/stderr")" "nanaudit: $T/$1: $2" "scan of $1"
    expect_exit 3 "$NANAUDIT" clean -o "$T/out-$1" "$T/$1"
    expect_stderr_contains "nanaudit: $T/$1: $2"
    [ ! -e "$T/out-$1" ] || fail "clean wrote out-$1"
}
bad noeocd.npz "not a readable zip archive (no valid end of central directory record)"
bad many.npz "zip: 60000 members cannot fit in a file of $(cat "$T/size") bytes"
bad csize.npz "zip: stored member 'a.npy' has compressed size 168 but size 176"
bad count1.npz "zip: the end of central directory record counts 1 member but the central directory holds 2 (refused: readers disagree, np.load reads all 2)"
bad count0.npz "zip: the end of central directory record counts 0 members but the central directory holds 2 (refused: readers disagree, np.load reads all 2)"
# numpy refuses them too (not many.npz: Python's zipfile ignores the
# record's member count and reads the one central header)
"$NA_PYTHON" - "$T" <<'PY' || fail "numpy loads a file nanaudit refuses"
import sys, numpy as np
for n in ("noeocd", "csize"):
    try:
        with np.load(f"{sys.argv[1]}/{n}.npz") as z:
            [z[k] for k in z.files]
    except Exception:
        continue
    raise SystemExit(f"numpy loads {n}.npz")
PY
pass
