#!/bin/bash
# hdf5_bool.sh - regression (fifth fresh-user round): h5py stores numpy's
# bool as an HDF5 enum of a 1-byte integer {FALSE: 0, TRUE: 1}; scan and
# info listed such datasets as skipped ("enum data (named values)"), so a
# mask or label dataset was not audited at all, unlike the same array in
# an .npy (BOOL). They are now BOOL (a nonzero byte is 1, as numpy reads
# it); other enums are still skipped, and clean copies both unchanged.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("b.h5", "w") as f:
    f["m"] = np.array([True, False, True, True])
    f.create_dataset("g", data=np.zeros((3, 2), bool), chunks=(1, 2), compression="gzip")
    e = h5py.enum_dtype({"RED": 0, "GREEN": 1}, basetype="i1")
    f.create_dataset("e", data=np.array([0, 1], "i1"), dtype=e)
    e3 = h5py.enum_dtype({"FALSE": 0, "TRUE": 1, "MAYBE": 2}, basetype="i1")
    f.create_dataset("e3", data=np.array([0, 2], "i1"), dtype=e3)
    f["x"] = np.array([1.0, 2.0, 3.0])
PY
expect_exit 1 "$N" scan --format json --fail-on nan,inf,zero_tensor b.h5 --report r.json
expect_json r.json '[[t["name"], t["status"], t.get("dtype")] for t in j["files"][0]["tensors"]]' \
    '[["/e", "skipped", null], ["/e3", "skipped", null], ["/g", "ok", "BOOL"], ["/m", "ok", "BOOL"], ["/x", "ok", "F64"]]'
expect_json r.json '[[t["name"], t["min"], t["max"], t["mean"], t["zeros"]] for t in j["files"][0]["tensors"] if t.get("dtype") == "BOOL"]' \
    '[["/g", 0.0, 0.0, 0.0, 6], ["/m", 0.0, 1.0, 0.75, 1]]'
expect_json r.json '[f["kind"] for t in j["files"][0]["tensors"] for f in t.get("findings", [])]' '["zero_tensor"]'
expect_exit 0 "$N" info b.h5
expect_stdout_contains "/m      BOOL   [4]    4"
expect_stdout_contains "/e      ?      [2]    0  (skipped: enum data (named values))"
# clean copies them; the values read back in h5py as bool
expect_exit 0 "$N" clean b.h5 -o o.h5 --normalize minmax
expect_stdout_contains "/m: copied: BOOL is never transformed"
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("o.h5") as f:
    assert f["m"].dtype == bool and f["m"][:].tolist() == [True, False, True, True]
    assert f["e"][:].tolist() == [0, 1] and f["x"][:].tolist() == [0.0, 0.5, 1.0]' || fail "o.h5"
pass
