#!/bin/bash
# npz_other_members.sh - regression (issue 4 note): an .npz holding a
# member that is not a .npy file (a README or a JSON of labels added with
# zipfile beside np.savez's arrays) was refused whole by scan, info and
# clean: "zip archive that is neither a PyTorch checkpoint ... nor a NumPy
# .npz (not only .npy members)", exit 3. np.load opens it (NpzFile lists
# the member under its full name and gives its bytes), so nanaudit now
# reads the arrays, lists such a member as skipped (not numeric data), and
# clean copies it byte for byte. A zip with no .npy member at all is still
# not an .npz (exit 3, "no .npy member").
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import io, zipfile
import numpy as np
def npy(a):
    f = io.BytesIO(); np.save(f, a); return f.getvalue()
for name, method in (("m.npz", zipfile.ZIP_STORED), ("md.npz", zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(name, "w", method) as z:
        z.writestr("x.npy", npy(np.array([1.0, np.nan, 3.0, 4.0, 5.0])))
        z.writestr("labels.json", b'{"classes": ["cat", "dog"]}')
        z.writestr("y.npy", npy(np.array([1, 0, 1, 1, 0], dtype=np.int64)))
    f = np.load(name)
    assert f.files == ["x", "labels.json", "y"], f.files
with zipfile.ZipFile("other.zip", "w") as z:
    z.writestr("notes.txt", b"hello")
PY
SKIP="not an .npy member (np.load gives its bytes): not numeric data"

for f in m.npz md.npz; do
    expect_exit 1 "$N" scan --format json "$f"
    cp stdout s.json
    expect_json s.json '[[t["name"], t["status"]] for t in j["files"][0]["tensors"]]' \
        '[["x", "ok"], ["labels.json", "skipped"], ["y", "ok"]]'
    expect_json s.json '[t["nan"] for t in j["files"][0]["tensors"] if t["status"] == "ok"]' '[1, 0]'
    expect_json s.json 'j["files"][0]["format"]' '"npz"'
    expect_exit 1 "$N" scan "$f"
    expect_stdout_contains "skipped: labels.json: $SKIP"
    expect_exit 0 "$N" info "$f"
    expect_stdout_contains "labels.json"
    expect_stdout_contains "(skipped: not an .npy member (np.load gives its bytes): not numeric data)"

    # clean: x loses its NaN row, y (same length) with it, the JSON member
    # is copied byte for byte
    expect_exit 0 "$N" clean "$f" -o "out.$f" --together 'x,y' --max-drop-fraction 0.5
    expect_stdout_contains "labels.json: copied: $SKIP"
    "$NA_PYTHON" - "$f" <<'PY' || fail "clean output of $f"
import sys, zipfile
import numpy as np
f = sys.argv[1]
b = np.load("out." + f)
assert b.files == ["x", "labels.json", "y"], b.files
assert b["x"].tolist() == [1.0, 3.0, 4.0, 5.0] and b["y"].tolist() == [1, 1, 1, 0]
za, zb = zipfile.ZipFile(f), zipfile.ZipFile("out." + f)
assert za.read("labels.json") == zb.read("labels.json")
assert za.getinfo("labels.json").CRC == zb.getinfo("labels.json").CRC
PY
done

# the archive comment is kept too (sixth fresh-user round: clean wrote an
# empty one), with a member cleaned and with none
"$NA_PYTHON" - <<'PY' || fail "making c.npz"
import zipfile
with zipfile.ZipFile("m.npz") as a, zipfile.ZipFile("c.npz", "w") as b:
    for i in a.infolist():
        b.writestr(i, a.read(i))
    b.comment = b"made by hand: \xc3\xa9t\xc3\xa9 2026"
PY
for opts in "--max-drop-fraction 0.5 --together x,y" "--exclude x* --exclude y --nonfinite keep"; do
    expect_exit 0 "$N" clean c.npz -o out.c.npz $opts --force
    "$NA_PYTHON" -c "
import zipfile
assert zipfile.ZipFile('out.c.npz').comment == zipfile.ZipFile('c.npz').comment, zipfile.ZipFile('out.c.npz').comment" ||
        fail "archive comment ($opts)"
done

expect_exit 3 "$N" scan other.zip
assert_eq "$(cat stderr)" "nanaudit: other.zip: zip archive that is neither a PyTorch checkpoint (no DIR/data.pkl) nor a NumPy .npz (no .npy member)"

# a member whose first bytes cannot be read (bzip2, which np.load reads as
# an array; a damaged local header) was taken for bytes: its NaN passed,
# exit 0 (sixteenth fresh-user round). Now an error of the archive.
"$NA_PYTHON" - <<'PY' || fail "making bz.npz"
import io, zipfile, numpy as np
def npy(a):
    b = io.BytesIO(); np.save(b, a); return b.getvalue()
with zipfile.ZipFile("bz.npz", "w") as z:
    z.writestr("ok.npy", npy(np.zeros(3, "f4")))
    z.writestr("weights", npy(np.array([1.0, np.nan], "f4")), compress_type=zipfile.ZIP_BZIP2)
PY
expect_exit 3 "$N" scan bz.npz
expect_stderr_contains "nanaudit: bz.npz: member 'weights': zip: member 'weights' uses compression method 12 (only stored and deflated are supported)"
expect_exit 3 "$N" clean bz.npz -o bz.c.npz
[ ! -e bz.c.npz ] || fail "bz.c.npz written"
pass
