#!/bin/bash
# npz_array_without_suffix.sh - regression (eighth fresh-user round): an
# .npz member that holds a .npy array but is not named *.npy ("weights",
# as a zip written by hand or by a writer that takes the name as given)
# was listed as "not an .npy member (np.load gives its bytes)" and
# skipped, so its NaN was missed and scan exited 0. np.load decides by
# the member's first bytes, the .npy magic (NpzFile.__getitem__), and
# returns the array under the member's full name. A member without the
# magic (a README, a JSON of labels) still gives bytes: skipped. Checked
# against numpy's own reading of the archive.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import io, zipfile
import numpy as np
def npy(a):
    f = io.BytesIO(); np.save(f, a); return f.getvalue()
w = np.array([[1.0, np.nan], [3.0, np.inf], [-2.0, 0.5]], dtype=np.float32)
rec = np.array([(1.5, "ab"), (np.nan, "cd")], dtype=[("x", "<f8"), ("s", "<U2")])
for name, method in (("s.npz", zipfile.ZIP_STORED), ("d.npz", zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(name, "w", method) as z:
        z.writestr("step.npy", npy(np.array(5)))
        z.writestr("weights", npy(w))
        z.writestr("layer/bias", npy(np.array([0.25, -0.5])))
        z.writestr("rec", npy(rec))
        z.writestr("README", b"\x93NUMP, not an array")
    f = np.load(name)
    assert f.files == ["step", "weights", "layer/bias", "rec", "README"], f.files
    assert np.array_equal(f["weights"], w, equal_nan=True)
    assert isinstance(f["README"], bytes)
# no member named *.npy at all: np.load still gives arrays by the magic
with zipfile.ZipFile("n.npz", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("weights", npy(w))
    z.writestr("notes.txt", b"hello")
f = np.load("n.npz")
assert f.files == ["weights", "notes.txt"] and np.isnan(f["weights"]).sum() == 1
# a zip of neither arrays nor data.pkl stays unsupported
with zipfile.ZipFile("other.zip", "w") as z:
    z.writestr("notes.txt", b"\x93NUMP")
    z.writestr("empty", b"")
PY

expect_exit 1 "$N" scan --format json n.npz
cp "$T/stdout" n.json
expect_json n.json '[[t["name"], t["status"], t["nan"] if t["status"] == "ok" else None] for t in j["files"][0]["tensors"]]' \
    '[["weights", "ok", 1], ["notes.txt", "skipped", null]]'
expect_exit 3 "$N" scan other.zip
expect_stderr_contains "nor a NumPy .npz (no .npy member)"

for f in s.npz d.npz; do
    expect_exit 1 "$N" scan --format json "$f"
    cp "$T/stdout" r.json
    expect_json r.json '[[t["name"], t["status"], t["dtype"], t["shape"]] for t in j["files"][0]["tensors"]]' \
        '[["step", "ok", "I64", []], ["weights", "ok", "F32", [3, 2]], ["layer/bias", "ok", "F64", [2]], ["rec.x", "ok", "F64", [2]], ["rec.s", "skipped", null, [2]], ["README", "skipped", null, []]]'
    # numpy's values: weights has one NaN and one +Inf, min -2, max 3
    expect_json r.json '[[t["nan"], t["pos_inf"], t["min"], t["max"]] for t in j["files"][0]["tensors"] if t["name"] in ("weights", "rec.x")]' \
        '[[1, 1, -2.0, 3.0], [1, 0, 1.5, 1.5]]'
    expect_json r.json '[t["reason"] for t in j["files"][0]["tensors"] if t["name"] == "README"]' \
        '["not an .npy member (np.load gives its bytes): not numeric data"]'
    expect_exit 1 "$N" scan "$f"
    expect_stdout_contains "FAIL weights: 1 NaN value (first at [0, 1])"
    expect_exit 0 "$N" info "$f"
    expect_stdout_contains "weights     F32    [3,2]  24"
done
pass
