#!/bin/bash
# --together with a .npz string member whose .npy header another writer
# spaced with tabs ({'descr':\t'<U3', ..., 'shape':\t(20,)}): np.load and
# scan read it (Python's literal syntax allows tabs), but clean's row copy
# looked for 'shape' followed by spaces only and refused it ("no single
# 'shape' in its .npy header", exit 3). The kept rows must be written.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import struct, zipfile
import numpy as np
def npy(d, data):
    h = d.encode("latin1")
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
x = np.arange(40, dtype="<f4").reshape(20, 2)
x[[3, 7, 15], 0] = np.nan
s = np.array([f"s{i:02d}" for i in range(20)], dtype="<U3")
with zipfile.ZipFile("tab.npz", "w") as z:
    z.writestr("x.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (20, 2), }",
                            x.tobytes()))
    z.writestr("s.npy", npy("{'descr':\t'<U3', 'fortran_order': False, 'shape':\t(20,)}",
                            s.tobytes()))
assert list(np.load("tab.npz")["s"]) == list(s)
PY
expect_exit 0 "$NANAUDIT" clean tab.npz --together x,s --max-drop-fraction 0.5 --no-fsync -o out.npz
expect_stdout_contains "written: out.npz (verified)"
"$NA_PYTHON" - <<'PY' || fail "out.npz against the input"
import numpy as np
a, b = np.load("tab.npz"), np.load("out.npz")
keep = np.isfinite(a["x"]).all(1)
assert np.array_equal(b["s"], a["s"][keep]) and np.array_equal(b["x"], a["x"][keep])
PY
pass
