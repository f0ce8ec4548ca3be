#!/bin/bash
# clean_together_h5.sh - three HDF5 datasets of three dtypes in one
# --together group (--mad 2) keep the samples numpy keeps on their
# columns side by side (tests/tools/together_ref.py; man page,
# --together). Round 38b: the fixpoint rule of the time did not settle
# here in 8 rounds and warned so; one dataset of the columns keeps 1345
# samples, and so does clean now, in one pass of each step.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c '
import numpy as np, h5py
rng = np.random.default_rng(1)
N = 2000
X32 = rng.normal(5, 2, (N, 4)).astype(np.float32)
X64 = rng.normal(-3, 0.5, (N, 3))
X16 = rng.normal(0, 1, (N, 2)).astype(np.float16)
X32[3, 1] = np.nan; X32[10, 0] = np.inf; X64[20, 2] = -np.inf; X16[30, 1] = np.nan
X32[100, 2] = 60; X64[200, 0] = 10; X16[300, 0] = 9
with h5py.File("t.h5", "w") as f:
    f["X32"] = X32; f["X64"] = X64; f["X16"] = X16' || fail "t.h5"
expect_exit 0 "$NANAUDIT" clean t.h5 -o o.h5 --together '/X*' --max-drop-fraction 0.9 --mad 2 \
    --report r.json
expect_stdout_lacks "warning"
"$NA_PYTHON" - "$NA_SRC/tests/tools" <<'PY' || fail "against the reference"
import json, sys
import h5py
import numpy as np
sys.path.insert(0, sys.argv[1])
from together_ref import together_ref
with h5py.File("t.h5") as f:
    x = [f[k][()] for k in ("X16", "X32", "X64")]  # the report's order: names sorted
u1, own, u = together_ref(x, "drop", "mad", 2.0)
assert (int(u1.sum()), [int(o.sum()) for o in own], int(u.sum())) == (4, [156, 316, 270], 655)
j = json.load(open("r.json"))
d = [t["samples_dropped"] for t in j["tensors"]]
assert [(s["nonfinite"], s["outliers"], s["total"]) for s in d] == \
    [(1, 156, 655), (2, 316, 655), (1, 270, 655)], d
assert all(t["warnings"] == [] for t in j["tensors"]), j["tensors"]
with h5py.File("o.h5") as f:
    for k, v in zip(("X16", "X32", "X64"), x):
        assert np.array_equal(f[k][()], v[~u]), k
PY
pass
