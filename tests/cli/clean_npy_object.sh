#!/bin/bash
# Regression (issue 4, fresh-user reports): `clean obj.npy -o o.npy` on an
# object or string array first said "o.npy: .npy has no type for dtype
# INVALID (use --out-dtype)", naming the output and a flag that cannot
# help; then exit 3, "clean can neither clean nor copy it". Such an array
# is not numeric data, so clean leaves it as it is: the output is the
# input byte for byte (the object array's pickle is copied, never
# loaded), with scan's reason in the report, exit 0, as for the same
# arrays inside an .npz (tests/cli/clean_npz.sh). A dry run writes nothing.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
np.save("obj.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
np.save("str.npy", np.array(["ab", "cd"]))
PY
N="$NANAUDIT"
OBJ="object array (dtype |O) holds pickled Python objects: never unpickled, not audited"
STR="dtype <U2 is not numeric data (string, bytes, void or datetime)"

expect_exit 0 "$N" clean obj.npy --dry-run --normalize minmax
expect_stdout_contains "data: copied: $OBJ"
expect_stdout_contains "dry run: no output written"
expect_exit 0 "$N" clean str.npy --dry-run
expect_stdout_contains "data: copied: $STR"
[ "$(ls | grep -cv -e stdout -e stderr)" = 2 ] || fail "dry run wrote a file: $(ls)"

expect_exit 0 "$N" clean obj.npy -o o.npy --normalize minmax
expect_stderr_empty
cmp -s obj.npy o.npy || fail "o.npy is not obj.npy byte for byte"
expect_exit 0 "$N" clean str.npy -o s.npy
cmp -s str.npy s.npy || fail "s.npy is not str.npy byte for byte"
"$NA_PYTHON" -c "
import numpy as np
assert np.load('s.npy').tolist() == ['ab', 'cd']
assert np.load('o.npy', allow_pickle=True).tolist() == [1, 'a', None]" || fail "np.load"
ls -a | grep -q nanaudit-tmp && fail "temporary file left"
# the JSON report says why, per tensor
expect_exit 0 "$N" clean obj.npy -o o2.npy --report r.json
expect_json r.json '[[t["status"], t["reason"]] for t in j["tensors"]][0]' "[\"copied\", \"$OBJ\"]"
expect_json r.json 'j["written"]' 'true'

# a structured array with an object field is pickled whole by np.save:
# its numeric fields were decoded from the pickle's bytes (made-up
# numbers, a NaN missed; clean exit 0 with the NaN kept: sixteenth
# fresh-user round). Every field is now "not audited": scan exit 3, clean
# refuses the numeric field unless --exclude names it, then copies the
# file as it is
"$NA_PYTHON" -c "
import numpy as np
a = np.zeros(3, dtype=[('x', '<f4'), ('o', 'O')]); a['x'] = [1, np.nan, 3]; a['o'] = ['a', None, 2]
np.save('so.npy', a, allow_pickle=True)
np.savez('so.npz', a=a, b=np.arange(3.0))" || fail "making so.npy"
PF="a field of a structured array with an object field: np.save pickles the whole array, never unpickled, not audited"
expect_exit 3 "$N" scan --format json so.npy
expect_json "$T/stdout" '[(t["name"], t["status"], t["reason"]) for t in j["files"][0]["tensors"]]' \
    "[[\"data.x\", \"error\", \"$PF\"], [\"data.o\", \"error\", \"$OBJ\"]]"
expect_exit 3 "$N" scan so.npz
expect_stderr_contains "a.x: $PF"
expect_exit 3 "$N" clean so.npy -o so.c.npy
expect_stderr_contains "$PF; clean cannot read it, nothing written (--exclude 'data.x' copies it unchanged)"
[ ! -e so.c.npy ] || fail "so.c.npy written"
expect_exit 0 "$N" clean so.npy -o so.c.npy --exclude data.x
cmp -s so.npy so.c.npy || fail "so.c.npy is not so.npy byte for byte"
pass
