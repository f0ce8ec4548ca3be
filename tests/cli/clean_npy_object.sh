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
pass
