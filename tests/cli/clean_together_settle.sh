#!/bin/bash
# clean_together_settle.sh - a --together group is fitted until its drops
# settle; after JOIN_ROUNDS (8) rounds without settling the union only
# grows (man page, --together). That case was silent (round 38b: --mad 2
# over three datasets kept 1369 rows, nothing said the rule's fixpoint was
# not reached): each member's report now warns. A group that settles has
# no such warning.
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
W="rounds of the --together fit did not settle; after them the group's drops only grew"
expect_exit 0 "$NANAUDIT" clean t.h5 -o o.h5 --together '/X*' --max-drop-fraction 0.9 --mad 2 \
    --report r.json
expect_stdout_contains "    warning: 8 $W"
expect_json r.json '[t["warnings"] for t in j["tensors"]]' "[[\"8 $W\"], [\"8 $W\"], [\"8 $W\"]]"
expect_exit 0 "$NANAUDIT" clean t.h5 -o o2.h5 --together '/X*' --mad 3 --report r2.json
expect_stdout_lacks "did not settle"
pass
