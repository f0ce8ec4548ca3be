#!/bin/bash
# --apply-params with a file that does not fit the input (issue 4): a
# tensor it has no parameters for, or another feature count, is exit 2
# with one line naming the parameters file, nothing written, and a report
# that lists the tensors looked at, the failing one as "error". Before,
# the report had unfilled entries after the failing tensor: -q crashed
# (SIGSEGV in the report's filter) and the JSON had {"name": null}.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
np.save("train.npy", np.arange(10.0))
np.savez("test.npz", a=np.arange(10.0), b=np.arange(12.0))
np.save("w3.npy", np.arange(30.0).reshape(10, 3))
np.savez("w4.npz", c=np.arange(30.0).reshape(10, 3), d=np.arange(40.0).reshape(10, 4))
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean --normalize zscore train.npy -o t.npy --save-params p.json
for q in -q ""; do
    expect_exit 2 "$N" clean $q --normalize zscore --apply-params p.json test.npz -o o.npz
    expect_stderr_contains "nanaudit: p.json: no parameters for tensor 'a'"
    expect_stdout_contains "  a: error: no parameters for tensor 'a'"
    [ ! -e o.npz ] || fail "o.npz written"
done
expect_exit 2 "$N" clean --format json --normalize zscore --apply-params p.json test.npz -o o.npz
expect_json "$T/stdout" '[[t["name"], t["status"]] for t in j["tensors"]]' '[["a", "error"]]'

# c fits (3 features); d has 4: the report stops at d
expect_exit 0 "$N" clean --normalize zscore w3.npy -o t3.npy --save-params p3.json
"$NA_PYTHON" - <<'PY' || fail "renaming the parameters' tensor"
import json
p = json.load(open("p3.json"))
t = p["tensors"]
t["c"] = t.pop(next(iter(t)))
t["d"] = t["c"]
json.dump(p, open("p3.json", "w"))
PY
expect_exit 2 "$N" clean -q --normalize zscore --apply-params p3.json w4.npz -o o4.npz --report r.json
expect_stderr_contains "nanaudit: p3.json:"
expect_json r.json '[[t["name"], t["status"]] for t in j["tensors"]]' '[["c", "cleaned"], ["d", "error"]]'
[ ! -e o4.npz ] || fail "o4.npz written"
pass
