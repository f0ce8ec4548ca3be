#!/bin/bash
# --apply-params with a file whose tensors this input does not clean
# (fitted on other data, a tensor renamed or excluded): one warning naming
# them (the first three), since their statistics go unused; the run
# itself is unchanged (exit 0, the tensors it has are cleaned with the
# file's parameters, checked against numpy).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
rng = np.random.default_rng(3)
np.savez("train.npz", **{k: rng.normal(size=(50, 2)) for k in ("x", "y", "z", "w", "v")})
np.savez("test.npz", x=rng.normal(size=(20, 2)))
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean train.npz --normalize zscore --save-params p.json -o t.out.npz
expect_exit 0 "$N" clean test.npz --normalize zscore --apply-params p.json -o test.out.npz
expect_stderr_contains "nanaudit: warning: p.json: --apply-params: 4 tensors of the file are not cleaned in test.npz, their parameters unused: 'y', 'z', 'w', ..."
"$NA_PYTHON" - <<'PY' || fail "applied parameters"
import numpy as np
x = np.load("train.npz")["x"]
t = np.load("test.npz")["x"]
np.testing.assert_allclose(np.load("test.out.npz")["x"], (t - x.mean(0)) / x.std(0), rtol=0, atol=1e-12)
PY
# all used: no warning
expect_exit 0 "$N" clean train.npz --normalize zscore --apply-params p.json -o t2.out.npz
[ ! -s "$T/stderr" ] || fail "unexpected stderr: $(cat "$T/stderr")"
# one left out by --exclude
expect_exit 0 "$N" clean train.npz --normalize zscore --apply-params p.json --exclude v -o t3.out.npz
expect_stderr_contains "warning: p.json: --apply-params: 1 tensor of the file is not cleaned in train.npz, its parameters unused: 'v'"
pass
