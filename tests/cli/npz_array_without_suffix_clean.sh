#!/bin/bash
# npz_array_without_suffix_clean.sh - the clean side of
# npz_array_without_suffix.sh: an .npz array member not named *.npy
# ("weights", "ids") is cleaned, follows --together and keeps its name;
# a structured one is copied byte for byte. Needs npz_write.c's
# read_member to ask na_npz_member_is_array, as npz.c does. Against numpy.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import io, zipfile
import numpy as np
def npy(a):
    f = io.BytesIO(); np.save(f, a); return f.getvalue()
w = np.array([[1.0, np.nan], [3.0, 4.0], [-2.0, 0.5], [7.0, 8.0]], dtype=np.float32)
rec = np.array([(1.5, "ab"), (np.nan, "cd")], dtype=[("x", "<f8"), ("s", "<U2")])
with zipfile.ZipFile("n.npz", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("step.npy", npy(np.array(3)))
    z.writestr("weights", npy(w))
    z.writestr("ids", npy(np.array(["a", "b", "c", "d"])))
    z.writestr("rec", npy(rec))
    z.writestr("README", b"notes")
PY
expect_exit 1 "$N" clean n.npz -o out.npz --together weights,ids --max-drop-fraction 0.5
expect_stdout_contains "weights: F32 -> F32, 4 samples x 2"
expect_stdout_contains "rec.x: copied: a field of a structured array"
"$NA_PYTHON" - <<'PY' || fail "clean output"
import zipfile
import numpy as np
a, b = np.load("n.npz"), np.load("out.npz")
assert b.files == ["step", "weights", "ids", "rec", "README"], b.files
keep = np.isfinite(a["weights"]).all(1)
np.testing.assert_array_equal(b["weights"], a["weights"][keep])
np.testing.assert_array_equal(b["ids"], a["ids"][keep])
za, zb = zipfile.ZipFile("n.npz"), zipfile.ZipFile("out.npz")
assert za.read("rec") == zb.read("rec") and za.read("README") == zb.read("README")
PY
pass
