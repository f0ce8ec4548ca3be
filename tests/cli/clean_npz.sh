#!/bin/bash
# `nanaudit clean` writes .npz (issue 4, formats/npz_write.c): the error
# paths, each with its one-line message and exit code, and nothing under
# the output's name nor a temporary file afterwards; untouched structured
# and string members copied byte for byte (values against numpy are in
# tests/conformance/test_clean_npz.py).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir out
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
rng = np.random.default_rng(3)
np.savez("z.npz", a=np.array([0.0, 1.0, np.nan, 3.0, 4.0]), b=np.arange(5.0))
np.savez_compressed("big.npz", a=rng.normal(size=(65536, 4)))
np.savez("obj.npz", a=np.arange(3.0), o=np.array([{"k": 1}, None], dtype=object))
np.savez("rec.npz", r=np.zeros(4, dtype=[("p", "<f4"), ("q", "<f8")]), x=np.arange(4.0))
np.savez_compressed("str.npz", a=np.array([1.0, np.nan, 3.0]), s=np.array(["x", "yy", "zzz"]))
PY
sum0="$(sha256sum z.npz big.npz obj.npz rec.npz str.npz)"
N="$NANAUDIT"
no_tmp() { assert_eq "$(ls -A "$1" | grep -c nanaudit-tmp)" "0" "temporary file left ($2)"; }

# written, verified; an existing output needs --force
expect_exit 0 "$N" clean z.npz -o out/z.npz --together 'a,b' --max-drop-fraction 0.5
expect_stdout_contains "written: out/z.npz (verified)"
expect_exit 2 "$N" clean z.npz -o out/z.npz --together 'a,b' --max-drop-fraction 0.5
expect_stderr_contains "nanaudit: out/z.npz: exists; use --force to replace it"
expect_exit 0 "$N" clean z.npz -o out/z.npz --together 'a,b' --max-drop-fraction 0.5 --force
no_tmp out "normal run"

# a directory that cannot hold the temporary file: exit 4, nothing left
touch notadir
expect_exit 4 "$N" clean z.npz -o notadir/x.npz --together 'a,b' --max-drop-fraction 0.5
expect_stderr_contains "nanaudit: notadir/x.npz: cannot create a temporary file in 'notadir': Not a directory"
if [ "$(id -u)" != 0 ]; then # root writes into a mode-555 directory anyway
    mkdir ro && chmod 555 ro
    expect_exit 4 "$N" clean z.npz -o ro/x.npz --together 'a,b' --max-drop-fraction 0.5
    expect_stderr_contains "nanaudit: ro/x.npz: cannot create a temporary file in 'ro': Permission denied"
    no_tmp ro "read-only directory"
fi

# a write error while minizip streams a member (RLIMIT_FSIZE 64 KiB, the
# archive ~2 MiB): exit 4, no output, no temporary file. Not under TSan
# (clean_safety.sh says why).
if ! nm "$N" 2>/dev/null | grep -q '__tsan_init'; then
    LAST_RC=0
    (ulimit -f 64; exec "$N" clean big.npz -o out/big.npz --normalize minmax) \
        >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    assert_eq "$LAST_RC" "4" "exit code under RLIMIT_FSIZE"
    expect_stderr_contains "nanaudit: out/big.npz: a: write error: File too large; nothing written"
    [ ! -e out/big.npz ] || fail "partial output after a write error"
    no_tmp out "write error"
fi

# an object member: copied as stored (its pickle is never loaded), the
# numeric member cleaned
expect_exit 0 "$N" clean obj.npz -o out/obj.npz --nonfinite zero
"$NA_PYTHON" - "$T" <<'PY' || fail "object member not copied byte for byte"
import sys, zipfile
a, b = (zipfile.ZipFile(f"{sys.argv[1]}/{p}") for p in ("obj.npz", "out/obj.npz"))
assert a.read("o.npy") == b.read("o.npy") and a.getinfo("o.npy").CRC == b.getinfo("o.npy").CRC
PY

# a structured member is copied byte for byte, whatever the options (it
# was refused, exit 3, unless excluded: tests/cli/clean_npy_parts.sh)
expect_exit 0 "$N" clean rec.npz -o out/rec.npz --nonfinite zero
"$NA_PYTHON" - <<'PY' || fail "structured member not copied byte for byte"
import zipfile
a, b = zipfile.ZipFile("rec.npz"), zipfile.ZipFile("out/rec.npz")
assert a.read("r.npy") == b.read("r.npy")
PY
rm out/rec.npz
expect_exit 0 "$N" clean rec.npz -o out/rec.npz --nonfinite zero --exclude 'r.*'
"$NA_PYTHON" - <<'PY' || fail "structured member not copied byte for byte"
import zipfile
a, b = zipfile.ZipFile("rec.npz"), zipfile.ZipFile("out/rec.npz")
assert [i.filename for i in b.infolist()] == ["r.npy", "x.npy"]
assert a.read("r.npy") == b.read("r.npy")
assert a.getinfo("r.npy").CRC == b.getinfo("r.npy").CRC
PY

# a string member (not numeric data): copied byte for byte, unlike .npy
expect_exit 0 "$N" clean str.npz -o out/str.npz --max-drop-fraction 0.5 --allow-misaligned
expect_stdout_contains "s: copied: dtype <U3 is not numeric data (string, bytes, void or datetime)"
"$NA_PYTHON" - <<'PY' || fail "string member not copied byte for byte"
import zipfile
import numpy as np
a, b = zipfile.ZipFile("str.npz"), zipfile.ZipFile("out/str.npz")
assert a.read("s.npy") == b.read("s.npy") and a.getinfo("s.npy").CRC == b.getinfo("s.npy").CRC
assert [i.compress_type for i in b.infolist()] == [zipfile.ZIP_DEFLATED] * 2
assert np.load("out/str.npz")["a"].tolist() == [1.0, 3.0]
PY

assert_eq "$(sha256sum z.npz big.npz obj.npz rec.npz str.npz)" "$sum0" "an input changed"
pass
