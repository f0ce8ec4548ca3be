#!/bin/bash
# --apply-params across formats (round 43): an HDF5 dataset is named by its
# path from the root group ('/X'), an .npz member without the '/' ('X').
# Parameters fitted on train.h5 apply to test.npz and the reverse; before,
# the run stopped with "no parameters for tensor 'X'" (exit 2). The values
# are numpy's (x - train mean) / train std, ddof=0; an exact name still wins
# over the one with the '/' taken away.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np, h5py
rng = np.random.default_rng(43)
with h5py.File("train.h5", "w") as f:
    f["X"] = rng.normal(2.0, 3.0, size=(200, 3))
np.savez("test.npz", X=rng.normal(size=(50, 3)))
np.savez("train.npz", X=rng.normal(-1.0, 0.5, size=(80, 3)))
with h5py.File("test.h5", "w") as f:
    f["X"] = rng.normal(size=(40, 3))
PY
N="$NANAUDIT"
ref() { # FIT_FILE TEST_FILE OUT: numpy's z-scores of TEST with FIT's statistics
    "$NA_PYTHON" - "$@" <<'PY' || fail "values of $3 differ from numpy's"
import sys, numpy as np, h5py
def load(p):
    if p.endswith(".h5"):
        with h5py.File(p) as f:
            return f["X"][()]
    return np.load(p)["X"]
fit, test, out = (load(p) for p in sys.argv[1:4])
want = (test - fit.mean(axis=0)) / fit.std(axis=0)
assert out.shape == want.shape, (out.shape, want.shape)
d = np.abs(out - want).max()
assert d <= 1e-12, d
PY
}
# HDF5 fit ('/X') on an .npz ('X')
expect_exit 0 "$N" clean -q --normalize zscore train.h5 -o t.h5 --save-params p.json
expect_json p.json 'list(j["tensors"])' '["/X"]'
expect_exit 0 "$N" clean --normalize zscore --apply-params p.json test.npz -o o.npz
expect_stderr_lacks "unused"
ref train.h5 test.npz o.npz
# .npz fit ('X') on an HDF5 file ('/X')
expect_exit 0 "$N" clean -q --normalize zscore train.npz -o t.npz --save-params q.json
expect_json q.json 'list(j["tensors"])' '["X"]'
expect_exit 0 "$N" clean --normalize zscore --apply-params q.json test.h5 -o o.h5
expect_stderr_lacks "unused"
ref train.npz test.h5 o.h5
# both names in the file: the exact one ('/X' holds the .npz fit's statistics,
# 'X' the HDF5 fit's), and the other is reported unused
"$NA_PYTHON" - <<'PY' || fail "joining the parameter files"
import json
p, q = json.load(open("p.json")), json.load(open("q.json"))
p["tensors"]["X"] = p["tensors"].pop("/X")
p["tensors"]["/X"] = q["tensors"]["X"]
json.dump(p, open("pq.json", "w"))
PY
expect_exit 0 "$N" clean -q --normalize zscore --apply-params pq.json --force test.h5 -o o.h5
expect_stderr_contains "1 tensor of the file is not cleaned in test.h5, its parameters unused: 'X'"
ref train.npz test.h5 o.h5
pass
