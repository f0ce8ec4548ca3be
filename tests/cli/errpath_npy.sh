#!/bin/bash
# errpath_npy.sh - .npy header error paths no other test triggered (audit
# 25a): structured descrs (formats/npy.c parse_member, parse_descr), a NUL
# in the header, a byte size past 64 bits. Each is one line
# "nanaudit: FILE: problem", exit 3, for scan and for clean (no output).
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T" <<'PY' || fail "could not write the test files"
import os, struct, sys
T = sys.argv[1]
def npy(name, descr, shape="(2,)"):
    h = ("{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }").encode("latin1")
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    with open(os.path.join(T, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + b"\0" * 64)
npy("item1.npy", "[('a',)]")
npy("item4.npy", "[('a', '<f4', (2,), 1)]")
npy("fname.npy", "[(1, '<f4')]")
npy("sub9.npy", "[('a', '<f4', (1, 1, 1, 1, 1, 1, 1, 1, 1))]")
npy("subneg.npy", "[('a', '<f4', (-1,))]")
npy("substr.npy", "[('a', '<f4', 'x')]")
npy("subbig.npy", "[('a', '<f4', (65536, 65536, 2))]")
npy("ubig.npy", "'<U2000000000'")
npy("notstr.npy", "5")
npy("substruct.npy", "[('a', [('x', '<f4')], (2,))]")
npy("recbig.npy", "[('a', '<f8', (536870912,)), ('b', '<f8', (536870912,))]")
npy("ovf.npy", "'<f8'", "(4611686018427387904,)")
npy("ovfrec.npy", "[('a', '<f8', (536870911,))]", "(4611686018427387904,)")
npy("nul.npy", "'<f4',\0")
PY

bad() { # FILE PROBLEM
    expect_exit 3 "$NANAUDIT" scan "$T/$1"
    assert_eq "$(cat "$T/stderr")" "nanaudit: $T/$1: $2" "scan of $1"
    expect_exit 3 "$NANAUDIT" clean -o "$T/out-$1" "$T/$1"
    assert_eq "$(cat "$T/stderr")" "nanaudit: $T/$1: $2" "clean of $1"
    [ ! -e "$T/out-$1" ] || fail "clean wrote $T/out-$1"
}
bad item1.npy "structured descr item is not (name, type[, shape])"
bad item4.npy "structured descr item is not (name, type[, shape])"
bad fname.npy "structured descr field name is not a string"
bad sub9.npy "field 'a': subarray of 9 dimensions (at most 8)"
bad subneg.npy "field 'a': bad subarray shape"
bad substr.npy "field 'a': bad subarray shape"
bad subbig.npy "subarray too large"
bad ubig.npy "item of 8000000000 bytes is too large"
bad notstr.npy "descr is neither a type string nor a list of fields"
bad substruct.npy "'a': subarrays of structured types are not supported"
bad recbig.npy "record too large"
bad ovf.npy "array size in bytes overflows 64 bits"
bad ovfrec.npy "array size in bytes overflows 64 bits"
bad nul.npy "header holds a NUL byte"
[ -z "$(ls -A "$T" | grep '^\.nanaudit-tmp')" ] || fail "a temporary file was left"

# numpy refuses them too (the descrs that numpy's own parser can read)
"$NA_PYTHON" - "$T" <<'PY' || fail "numpy loads a file nanaudit refuses"
import sys, numpy as np
for n in ("item1", "item4", "fname", "subneg", "substr", "notstr", "nul", "ovf"):
    try:
        np.load(f"{sys.argv[1]}/{n}.npy")
    except Exception:
        continue
    raise SystemExit(f"numpy loads {n}.npy")
PY
pass
