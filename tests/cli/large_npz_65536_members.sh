#!/bin/bash
# An .npz of 65536 members or more (fresh-user round 25b). minizip's
# zip.h, clean's .npz writer, then writes 0xFFFF members in the end of
# central directory record ("see the zip64 record", APPNOTE 4.4.21) and
# no zip64 record; the reader took 0xFFFF as the count, so the
# verification of a clean of 65536 members found "tensor 'm65535'
# missing", exit 4, nothing written. The reader now counts the central
# headers, as Python's zipfile (np.load) does. Checked: a file written so
# by hand (Python's zipfile output with its zip64 records cut out) is
# read whole, and clean of 65536 members is written, verified and loads
# in numpy. Label large: about 15 s, 20 MB of files.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import io, struct, zipfile, numpy as np
b = io.BytesIO(); np.save(b, np.array([1, 2, np.nan, 4], "f4")); d = b.getvalue()
with zipfile.ZipFile("m.npz", "w") as z:
    for i in range(65536):
        z.writestr("m%d.npy" % i, d)
raw = open("m.npz", "rb").read()
e = raw.rfind(b"PK\x05\x06"); z64 = raw.rfind(b"PK\x06\x06", 0, e)
assert z64 > 0 and struct.unpack("<H", raw[e + 10:e + 12])[0] == 0xFFFF
open("mz.npz", "wb").write(raw[:z64] + raw[e:])  # as minizip writes it
PY
expect_exit 1 "$NANAUDIT" scan -q mz.npz
expect_stdout_contains "1 file, 65536 tensors, 262144 elements: 65536 NaN, 0 Inf, 0 outliers; FAILED (exit 1)"
expect_exit 0 "$NANAUDIT" clean --no-fsync --nonfinite zero -q -o c.npz m.npz
expect_stdout_contains "written: c.npz (verified)"
"$NA_PYTHON" -c '
import numpy as np
z = np.load("c.npz")
assert len(z.files) == 65536 and z.files[-1] == "m65535", z.files[-3:]
assert all(np.array_equal(z[k], np.array([1, 2, 0, 4], "f4")) for k in ("m0", "m65535"))' || fail "numpy reads c.npz"
expect_exit 0 "$NANAUDIT" scan -q c.npz
expect_stdout_contains "1 file, 65536 tensors, 262144 elements: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)"
pass
