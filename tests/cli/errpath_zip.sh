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
