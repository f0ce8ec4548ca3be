#!/bin/bash
# npy_errors.sh - every error path of the .npy / .npz readers (npy.c,
# npz.c, zip.c): one hand-made file each, its one-line message and exit 3;
# a good tensor beside a bad one is still audited.
. "$(dirname "$0")/helpers.sh"

# npy FILE HEADER-TEXT [DATA-BYTES] [MAJOR] : write a .npy with that literal
"$NA_PYTHON" - "$T" <<'EOF' || fail "could not write the test files"
import io, os, struct, sys, zipfile
import numpy as np
T = sys.argv[1]

def npy(name, hdr, data=b"", major=1, hlen=None):
    h = hdr.encode("latin1")
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    n = len(h) if hlen is None else hlen
    lenb = struct.pack("<H", n) if major == 1 else struct.pack("<I", n)
    with open(os.path.join(T, name), "wb") as f:
        f.write(b"\x93NUMPY" + bytes([major, 0]) + lenb + h + data)

d4 = b"\0" * 16
npy("trunc.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", b"\0" * 8)
npy("ok.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
    np.array([1, 2, 3, 4], "<f4").tobytes())
npy("v4.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", d4, major=4)
npy("bigheader.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", d4,
    major=2, hlen=20000)
with open(os.path.join(T, "shorthdr.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f4',")
npy("literal.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': os.system('id')}", d4)
npy("call.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': __import__('os')}", d4)
npy("nokey.npy", "{'descr': '<f4', 'fortran_order': False}", d4)
npy("extrakey.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", d4)
npy("dupkey.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'shape': (4,)}", d4)
npy("fortbad.npy", "{'descr': '<f4', 'fortran_order': 1, 'shape': (4,)}", d4)
npy("kind.npy", "{'descr': '<q8', 'fortran_order': False, 'shape': (2,)}", d4)
npy("i16.npy", "{'descr': '<i16', 'fortran_order': False, 'shape': (1,)}", d4)
npy("negshape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}", d4)
npy("overflow.npy", "{'descr': '<f8', 'fortran_order': False, "
    "'shape': (4294967296, 2147483648)}", d4)
npy("overflow2.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", d4)
npy("obj.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", d4)
# np.load refuses these too: a shape that is an integer, not a tuple; a
# product of non-zero dimensions beyond numpy's signed 64-bit sizes beside
# a 0 (the array would be empty, but numpy cannot describe it)
npy("intshape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (12)}", d4 * 12)
npy("zerohuge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296)}", b"")
npy("zerobig.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 18446744073709551615)}", b"")
npy("deep.npy", "{'descr': " + "[" * 40 + "]" * 40 + ", 'fortran_order': False, 'shape': (2,)}", d4)
npy("py2long.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }",
    np.array([1.5, -2.5]).tobytes())

# .npz: a truncated member beside a good one; a corrupt deflated member
good = io.BytesIO(); np.save(good, np.arange(6.0))
bad = io.BytesIO(); np.save(bad, np.arange(6.0)); badb = bad.getvalue()[:-8]
with zipfile.ZipFile(os.path.join(T, "trunc.npz"), "w") as z:
    z.writestr("good.npy", good.getvalue())
    z.writestr("cut.npy", badb)
with zipfile.ZipFile(os.path.join(T, "crc.npz"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("w.npy", good.getvalue())
raw = bytearray(open(os.path.join(T, "crc.npz"), "rb").read())
i = raw.find(b"w.npy") + 5 + 20          # inside the deflated stream
raw[i] ^= 0xFF
open(os.path.join(T, "crc.npz"), "wb").write(raw)
EOF

expect_exit 3 "$NANAUDIT" scan "$T/trunc.npy"
expect_stderr_contains "trunc.npy: data truncated: shape (4,) × <f4 needs 16 bytes, the file has 8"
expect_exit 3 "$NANAUDIT" scan "$T/v4.npy"
expect_stderr_contains ".npy format version 4.0 is not supported (1.0, 2.0 and 3.0 are)"
expect_exit 3 "$NANAUDIT" scan "$T/bigheader.npy"
expect_stderr_contains "header of 20000 bytes is larger than 10000 bytes, numpy's default limit (max_header_size)"
expect_exit 3 "$NANAUDIT" scan "$T/shorthdr.npy"
expect_stderr_contains "truncated .npy header: 118 bytes announced, the file has 16"
expect_exit 3 "$NANAUDIT" scan "$T/literal.npy"
expect_stderr_contains "header is not a valid literal: unexpected character"
expect_exit 3 "$NANAUDIT" scan "$T/call.npy"
expect_stderr_contains "header is not a valid literal: unexpected character"
expect_exit 3 "$NANAUDIT" scan "$T/nokey.npy"
expect_stderr_contains "header has no 'shape' key"
expect_exit 3 "$NANAUDIT" scan "$T/extrakey.npy"
expect_stderr_contains "header has the key 'x'; a .npy header has exactly 'descr', 'fortran_order' and 'shape'"
expect_exit 3 "$NANAUDIT" scan "$T/dupkey.npy"
expect_stderr_contains "header has the key 'shape' twice"
expect_exit 3 "$NANAUDIT" scan "$T/fortbad.npy"
expect_stderr_contains "header 'fortran_order' is not True or False"
expect_exit 3 "$NANAUDIT" scan "$T/kind.npy"
expect_stderr_contains "descr '<q8' has unknown kind 'q'"
expect_exit 3 "$NANAUDIT" scan "$T/negshape.npy"
expect_stderr_contains "header 'shape' item 0 is not a non-negative integer"
expect_exit 3 "$NANAUDIT" scan "$T/overflow.npy"
expect_stderr_contains "shape (4294967296, 2147483648): more elements than numpy's 64-bit sizes hold (2^63 - 1)"
expect_exit 3 "$NANAUDIT" scan "$T/overflow2.npy"
expect_stderr_contains "shape (4294967296, 4294967296): more elements than numpy's 64-bit sizes hold (2^63 - 1)"
expect_exit 3 "$NANAUDIT" scan "$T/intshape.npy"
expect_stderr_contains "header 'shape' is not a tuple (a one-item shape is written (12,))"
expect_exit 3 "$NANAUDIT" scan "$T/zerohuge.npy"
expect_stderr_contains "shape (0, 4294967296, 4294967296): more elements than numpy's 64-bit sizes hold"
expect_exit 3 "$NANAUDIT" scan "$T/zerobig.npy"
expect_stderr_contains "shape (0, 18446744073709551615): more elements than numpy's 64-bit sizes hold"
"$NA_PYTHON" - "$T" <<'PY' || fail "numpy accepts what nanaudit refuses"
import sys, numpy as np
for n in ("intshape", "zerohuge", "zerobig", "overflow2"):
    try:
        np.load(f"{sys.argv[1]}/{n}.npy")
    except Exception:
        continue
    raise SystemExit(f"numpy loads {n}.npy")
PY
expect_exit 3 "$NANAUDIT" scan "$T/deep.npy"
expect_stderr_contains "header is not a valid literal: nested too deeply"
# numeric but not decodable, and object arrays: the tensor is an error
expect_exit 3 "$NANAUDIT" scan --format json "$T/i16.npy"
cp "$T/stdout" "$T/i16.json"
expect_json "$T/i16.json" 'j["files"][0]["tensors"][0]["status"]' '"error"'
expect_stderr_contains "unsupported numeric dtype <i16 in 'data'"
expect_exit 3 "$NANAUDIT" scan "$T/obj.npy"
expect_stderr_contains "object array (dtype |O) holds pickled Python objects: never unpickled, not audited"
# Python 2's '(2L,)' is accepted
expect_exit 0 "$NANAUDIT" scan --format json "$T/py2long.npy"
cp "$T/stdout" "$T/py2.json"
expect_json "$T/py2.json" 'j["files"][0]["tensors"][0]["shape"]' '[2]'
expect_json "$T/py2.json" 'j["files"][0]["tensors"][0]["min"]' '-2.5'

# the others are still audited
expect_exit 3 "$NANAUDIT" scan --format json "$T/trunc.npy" "$T/ok.npy"
cp "$T/stdout" "$T/two.json"
expect_json "$T/two.json" '[f["status"] for f in j["files"]]' '["error", "ok"]'
expect_json "$T/two.json" 'j["files"][1]["tensors"][0]["mean"]' '2.5'

# .npz
expect_exit 3 "$NANAUDIT" scan "$T/trunc.npz"
expect_stderr_contains "trunc.npz: member 'cut.npy': data truncated: shape (6,) × <f8 needs 48 bytes, the file has 40"
expect_exit 3 "$NANAUDIT" scan "$T/crc.npz"
expect_stderr_contains "crc.npz: member 'w.npy': zip: w.npy: the data's CRC-32 differs from the one the archive records (damaged data)"
pass
