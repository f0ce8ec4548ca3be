#!/bin/bash
# clean_npy_parts.sh - regression (issue 4): arrays that .npy/.npz readers
# split into several tensors, and .npy arrays clean does not clean, are
# copied unchanged, never refused and never rewritten.
#  - complex128 (and complex64) arrays are read as NAME.real / NAME.imag;
#    clean fitted both parts as F64 data and then refused the .npy ("a .npy
#    file holds one array; this input gives 2 tensors"), exit 3, or the
#    .npz member ("holds a structured or complex array"), even with
#    nothing to change. Now copied with the reason, in both formats.
#  - a structured array's fields (NAME.x): the same refusal; and a
#    structured array with ONE field was cleaned and written as a plain
#    float array, losing its record dtype (np.load gave float32 instead of
#    [('x', '<f4')]). Now copied, record dtype and all.
#  - an .npy whose array is copied (not selected, an object or string
#    array, a part as above) is the input byte for byte: a Fortran-order
#    array stays Fortran order, an object array's pickle is copied, never
#    loaded (it was exit 3, "clean can neither clean nor copy it").
#  - NaN/Inf in a copied part are counted (warning, exit 1), as for any
#    tensor copied unchanged.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
c = np.array([1 + 2j, 3 - 1j, np.nan + 0j, 2 + 1e300j], dtype=np.complex128)
np.save("c16.npy", c)
np.save("c8.npy", np.array([1 + 1j, 2 - 2j], dtype=np.complex64))
np.save("c16ok.npy", np.array([1 + 2j, 3 - 1j], dtype=np.complex128))
r = np.zeros(3, dtype=[("x", "<f4"), ("y", "<f8")])
r["x"] = [1, 2, 3]; r["y"] = [4, np.inf, 6]
np.save("rec.npy", r)
one = np.zeros(3, dtype=[("x", "<f4")]); one["x"] = [7, 8, 100]
np.save("one.npy", one)
np.save("obj.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
np.save("str.npy", np.array(["ab", "cd"]))
np.save("fort.npy", np.asfortranarray(np.arange(6.0).reshape(2, 3)))
x = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0])
np.savez("z.npz", x=x, c=c, r=r)
PY
same() { cmp -s "$1" "$2" || fail "$2 is not $1 byte for byte"; }
reasons() { json_get "$1" '[[t["name"], t["status"], t.get("reason")] for t in j["tensors"]]'; }
CPLX="a part of a complex array: copied unchanged (clean does not transform complex numbers)"
FIELD="a field of a structured array: copied unchanged (clean cannot write fields back into its records)"

# complex128 .npy with a NaN: copied byte for byte, the NaN counted (exit 1)
expect_exit 1 "$N" clean c16.npy -o o16.npy --normalize minmax --report r16.json
same c16.npy o16.npy
expect_stdout_contains "data.real: copied: $CPLX"
expect_stdout_contains "    warning: 1 NaN/Inf value(s) left as they are (copied unchanged)"
expect_stdout_contains "written: o16.npy (verified)"
assert_eq "$(reasons r16.json)" "[[\"data.real\", \"copied\", \"$CPLX\"], [\"data.imag\", \"copied\", \"$CPLX\"]]" "c16 reasons"
expect_json r16.json 'j["written"]' 'true'
# without NaN/Inf: exit 0; complex64 too
expect_exit 0 "$N" clean c16ok.npy -o o16ok.npy --zscore 3
same c16ok.npy o16ok.npy
expect_exit 0 "$N" clean c8.npy -o o8.npy --normalize zscore
same c8.npy o8.npy
expect_stdout_contains "data.real: copied: $CPLX"
# the dry run agrees and writes nothing
before="$(ls | wc -l)"
expect_exit 1 "$N" clean c16.npy --dry-run --normalize minmax
expect_stdout_contains "dry run: no output written"
[ "$(ls | wc -l)" = "$before" ] || fail "dry run wrote a file: $(ls)"

# structured: copied whole, the Inf in field y counted
expect_exit 1 "$N" clean rec.npy -o orec.npy --nonfinite zero --report rrec.json
same rec.npy orec.npy
assert_eq "$(reasons rrec.json)" "[[\"data.x\", \"copied\", \"$FIELD\"], [\"data.y\", \"copied\", \"$FIELD\"]]" "rec reasons"
expect_json rrec.json '[t["name"] for t in j["tensors"] if t.get("warnings")]' '["data.y"]'
# one field: still a record array after clean (was written as float32)
expect_exit 0 "$N" clean one.npy -o oone.npy --zscore 1 --outliers clip
same one.npy oone.npy
"$NA_PYTHON" -c "
import numpy as np
a = np.load('oone.npy')
assert a.dtype == np.dtype([('x', '<f4')]) and a['x'].tolist() == [7, 8, 100], a" || fail "one-field dtype"

# object and string arrays: copied byte for byte, the pickle never loaded
expect_exit 0 "$N" clean obj.npy -o oobj.npy --report robj.json
same obj.npy oobj.npy
expect_json robj.json '[[t["name"], t["status"]] for t in j["tensors"]]' '[["data", "copied"]]'
expect_exit 0 "$N" clean str.npy -o ostr.npy
same str.npy ostr.npy
# not selected: byte for byte, Fortran order kept
expect_exit 0 "$N" clean fort.npy -o ofort.npy --exclude data
same fort.npy ofort.npy
"$NA_PYTHON" -c "
import numpy as np
a = np.load('ofort.npy')
assert a.flags.f_contiguous and not a.flags.c_contiguous and a.tolist() == [[0, 1, 2], [3, 4, 5]]" || fail "fortran"

# .npz: x cleaned (its NaN row dropped), c and r copied as stored, whatever
# the options; lengths differ (11, 4, 3), so no misalignment refusal
expect_exit 1 "$N" clean z.npz -o oz.npz --zscore 3 --normalize minmax --report rz.json
assert_eq "$(reasons rz.json)" "[[\"x\", \"cleaned\", null], [\"c.real\", \"copied\", \"$CPLX\"], [\"c.imag\", \"copied\", \"$CPLX\"], [\"r.x\", \"copied\", \"$FIELD\"], [\"r.y\", \"copied\", \"$FIELD\"]]" "npz reasons"
"$NA_PYTHON" - <<'PY' || fail "npz values"
import zipfile
import numpy as np
a, b = np.load("z.npz"), np.load("oz.npz")
x = a["x"][np.isfinite(a["x"])]
x = x[np.abs(x - x.mean()) <= 3 * x.std()]
want = (x - x.min()) / (x.max() - x.min())
assert np.array_equal(b["x"], want), (b["x"], want)
za, zb = zipfile.ZipFile("z.npz"), zipfile.ZipFile("oz.npz")
for m in ("c.npy", "r.npy"):
    assert za.read(m) == zb.read(m), m
PY
# a copied part cannot lose samples: the misalignment refusal says so
# instead of suggesting --together (which refuses it)
"$NA_PYTHON" -c "
import numpy as np
np.savez('al.npz', x=np.array([1.0, np.nan, 3, 4]), c=np.arange(4) + 1j)" || fail "al.npz"
expect_exit 2 "$N" clean al.npz -o oal.npz --max-drop-fraction 0.5
assert_eq "$(cat stderr)" "nanaudit: al.npz: dropping 1 sample from 'x' would misalign it with 'c.real' and 'c.imag' (all have 4 rows), 'c.real' clean copies unchanged ($CPLX); use --allow-misaligned if they are unrelated"
expect_exit 0 "$N" clean al.npz -o oal.npz --max-drop-fraction 0.5 --allow-misaligned
ls -a | grep -q nanaudit-tmp && fail "temporary file left"
pass
