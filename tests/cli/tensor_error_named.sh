#!/bin/bash
# A tensor that cannot be audited is one line naming the file and the
# tensor, in every report, once (seventh fresh-user round). Readers differ:
# HDF5's messages name their dataset ("/y: HDF5 filter 32000 (lzf) is not
# available ..."), the NumPy reader's do not ("object array (dtype |O)
# ..."). Before, the stderr line of an .npz object member did not name the
# member ("nanaudit: obj.npz: object array ..."), and a SARIF result
# message, which puts "TENSOR: " in front, named an HDF5 dataset twice
# ("/y: /y: HDF5 filter ..."). The text report already printed both once.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
np.savez("obj.npz", a=np.array([1, "x", None], dtype=object), b=np.arange(3.0))
try:
    import h5py
    with h5py.File("lzf.h5", "w") as f:
        f.create_dataset("y", data=np.arange(10.0), compression="lzf")
        f["x"] = np.arange(4.0)
except ImportError:
    pass
PY
N="$NANAUDIT"
MSG="object array (dtype |O) holds pickled Python objects: never unpickled, not audited"
expect_exit 3 "$N" scan obj.npz --report o.sarif --report o.json
assert_eq "$(cat "$T/stderr")" "nanaudit: obj.npz: a: $MSG"
expect_stdout_contains "  error: a: $MSG"
expect_json o.sarif '[r["message"]["text"] for r in j["runs"][0]["results"]]' "[\"a: $MSG\"]"
expect_json o.json 'j["files"][0]["tensors"][0]["reason"]' "\"$MSG\""

if [ -f lzf.h5 ] && "$N" info lzf.h5 >/dev/null 2>&1; then
    expect_exit 3 "$N" scan lzf.h5 --report h.sarif
    expect_stderr_contains "nanaudit: lzf.h5: /y: HDF5 filter 32000 (lzf) is not available"
    expect_stderr_lacks "/y: /y:"
    expect_stdout_contains "  error: /y: HDF5 filter 32000 (lzf)"
    expect_json h.sarif '[r["message"]["text"][:34] for r in j["runs"][0]["results"]]' \
        '["/y: HDF5 filter 32000 (lzf) is not"]'
fi
pass
