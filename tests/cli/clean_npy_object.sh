#!/bin/bash
# Regression (issue 4, fresh-user report): `clean obj.npy -o o.npy` on an
# object or string array said "o.npy: .npy has no type for dtype INVALID
# (use --out-dtype)", naming the output and a flag that cannot help. clean
# can neither clean nor copy such an array (object arrays are never
# unpickled; .npy needs a dtype to write), so it now names the input and
# scan's reason, exit 3, with or without --dry-run, and writes nothing.
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
TAIL="clean can neither clean nor copy it, nothing written"

for dry in "" --dry-run; do
    out=(-o o.npy)
    [ -n "$dry" ] && out=(--dry-run)
    expect_exit 3 "$N" clean obj.npy "${out[@]}"
    assert_eq "$(cat "$T/stderr")" "nanaudit: obj.npy: data: $OBJ; $TAIL" "obj.npy stderr"
    expect_stdout_contains "data: error: $OBJ"
    expect_exit 3 "$N" clean str.npy "${out[@]}"
    assert_eq "$(cat "$T/stderr")" "nanaudit: str.npy: data: $STR; $TAIL" "str.npy stderr"
    [ -e o.npy ] && fail "o.npy written"
    ls -a | grep -q nanaudit-tmp && fail "temporary file left"
done
# the JSON report says why, per tensor
expect_exit 3 "$N" clean obj.npy -o o.npy --report r.json
expect_json r.json '[[t["status"], t["reason"]] for t in j["tensors"]][0]' "[\"error\", \"$OBJ\"]"
expect_json r.json 'j["written"]' 'false'
pass
