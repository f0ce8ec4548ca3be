#!/bin/bash
# npz_members.sh - regression (tester19 r6.sh): how an .npz's member list
# is read.
#  - Two members with the same name ("a.npy" twice) are refused, exit 3,
#    one line naming the file and the member: np.load keeps the last copy,
#    other zip readers the first, so which tensor is "a" is not decided by
#    the file (the safetensors reader refuses duplicate names the same way).
#    Before: two tensors both named "a", and clean wrote both.
#  - An empty .npz (np.savez with no arrays; np.load(...).files == []) is
#    a valid file with 0 tensors, as an empty safetensors or HDF5 file is
#    (tests/cli/cli_exit.sh): scan exit 0, info lists it, clean copies it.
#    Before: exit 3 "zip archive that is neither a PyTorch checkpoint ...
#    nor a NumPy .npz (not only .npy members)".
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" -W ignore - <<'EOF' || fail "could not write the test files"
import io, zipfile
import numpy as np
def npy(a):
    f = io.BytesIO(); np.save(f, a); return f.getvalue()
with zipfile.ZipFile("dup.npz", "w") as z:
    z.writestr("a.npy", npy(np.array([1.0, np.nan])))
    z.writestr("b.npy", npy(np.array([2.0])))
    z.writestr("a.npy", npy(np.array([5.0, 6.0, 7.0])))
with zipfile.ZipFile("dupdeflate.npz", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("w.npy", npy(np.arange(3.0)))
    z.writestr("w.npy", npy(np.arange(4.0)))
np.savez("empty.npz")
assert np.load("empty.npz").files == []
np.save("ok.npy", np.arange(4.0))
EOF

# duplicate member names: refused, one line, for scan, info and clean
expect_exit 3 "$N" scan dup.npz
assert_eq "$(cat "$T/stderr")" "nanaudit: dup.npz: zip: duplicate member name 'a.npy' (refused: readers disagree on which copy wins)"
expect_stdout_contains "1 file, 0 tensors, 0 elements: 0 NaN, 0 Inf, 0 outliers, 1 error; FAILED (exit 3)"
expect_exit 3 "$N" scan dupdeflate.npz
assert_eq "$(cat "$T/stderr")" "nanaudit: dupdeflate.npz: zip: duplicate member name 'w.npy' (refused: readers disagree on which copy wins)"
expect_exit 3 "$N" info dup.npz
expect_stderr_contains "nanaudit: dup.npz: zip: duplicate member name 'a.npy'"
expect_exit 3 "$N" clean --nonfinite zero dup.npz -o out.npz
expect_stderr_contains "nanaudit: dup.npz: zip: duplicate member name 'a.npy'"
[ ! -e out.npz ] || fail "clean wrote out.npz from an archive with duplicate names"
# the other inputs are still audited
expect_exit 3 "$N" scan --format json dup.npz ok.npy
expect_json "$T/stdout" '[f["status"] for f in j["files"]]' '["error", "ok"]'

# an empty .npz: 0 tensors, like an empty safetensors file
expect_exit 0 "$N" scan empty.npz
assert_eq "$(cat "$T/stdout")" "empty.npz (npz)
1 file, 0 tensors, 0 elements: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)"
expect_stderr_empty
expect_exit 0 "$N" info empty.npz
expect_stdout_contains "empty.npz (npz, 0 tensors, 0 bytes of data)"
expect_exit 0 "$N" clean --nonfinite zero empty.npz -o e2.npz
expect_stdout_contains "written: e2.npz (verified)"
assert_eq "$("$NA_PYTHON" -c "import numpy as np; print(np.load('e2.npz').files)")" "[]"
pass
