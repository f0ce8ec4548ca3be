#!/bin/bash
# NumPy's '<U4' holds 4 characters as UCS-4: 16 bytes per item. The .npy
# reader took 4, so in a record [('name', '<U4'), ('x', '<f4')] the field
# x was read 12 bytes early (subnormal garbage, the NaN missed, exit 0),
# a '<U' array's truncated data passed, and clean's row copy of a '<U'
# member wrote a quarter of each row. Checked against numpy.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
a = np.zeros(3, dtype=[("name", "<U4"), ("x", "<f4")])
a["x"] = [1.5, 2.5, np.nan]
a["name"] = ["ab", "cd", "ef"]
np.save("rec.npy", a)
np.savez("rec.npz", r=a, s=np.array(["abcd", "e"]))
b = np.array(["wxyz"] * 4)           # 4 x 16 bytes of data
np.save("short.npy", b)
raw = open("short.npy", "rb").read()
open("short.npy", "wb").write(raw[:-20])  # 44 of the 64 data bytes
PY
N="$NANAUDIT"
expect_exit 1 "$N" scan rec.npy --report rep.json
expect_json rep.json '[[t["name"], t.get("nan"), t.get("min"), t.get("max")] for t in j["files"][0]["tensors"]]' \
    '[["data.name", null, null, null], ["data.x", 1, 1.5, 2.5]]'
expect_exit 1 "$N" scan rec.npz --report rep2.json
expect_json rep2.json '[[t["name"], t.get("nan"), t.get("max")] for t in j["files"][0]["tensors"] if t["status"] == "ok"]' \
    '[["r.x", 1, 2.5]]'
expect_exit 3 "$N" scan short.npy
expect_stderr_contains "data truncated"
pass
