#!/bin/bash
# clean_allnan_fill.sh - --nonfinite zero and value=X fill a feature (or
# tensor) that has no finite value at all: they need no statistic. It
# passed through unchanged (tenth fresh-user round: `--nonfinite zero`
# on a dead bias of NaN wrote the NaN, exit 1, a file the CI gate then
# failed). With mean (no mean exists), drop and keep it still passes
# through with a warning, exit 1. Values checked against numpy.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
save_file({"dead": np.array([np.nan, np.nan, np.inf], np.float32),
           "w": np.array([1, 2, np.nan, 40, 5, 6, 7, 8, 9, 10], np.float32),
           "h": np.full(4, np.nan, np.float16)}, "an.safetensors")
x = np.array([[np.nan, 1.0], [np.nan, 2.0], [np.nan, np.inf], [np.nan, 4.0]])
np.save("an.npy", x)
PY

check() { # FILE PYTHON-EXPR-OF-d (the output, a dict of arrays)
    "$NA_PYTHON" - "$@" <<'PY' || fail "values of $1"
import sys, numpy as np
from safetensors.numpy import load_file
f, expr = sys.argv[1], sys.argv[2]
d = load_file(f) if f.endswith(".safetensors") else {"a": np.load(f)}
assert eval(expr), {k: v.tolist() for k, v in d.items()}
PY
}
expect_exit 0 "$N" clean an.safetensors -o z.safetensors --nonfinite zero
expect_stdout_contains "dead: F32 -> F32"
expect_stdout_lacks "passed through"
check z.safetensors 'd["dead"].tolist() == [0, 0, 0] and d["h"].tolist() == [0] * 4 and d["w"][2] == 0'
expect_exit 0 "$N" clean an.safetensors -o v.safetensors --nonfinite value=-7.5 --normalize minmax
expect_stdout_contains "warning: 1 constant feature(s) (max == min) mapped to LO"
check v.safetensors 'd["dead"].tolist() == [0, 0, 0] and np.allclose(d["w"], (lambda a: (a - a.min()) / (a.max() - a.min()))(np.array([1, 2, -7.5, 40, 5, 6, 7, 8, 9, 10], np.float32)))'
# mean has nothing to fill with: passed through, exit 1
expect_exit 1 "$N" clean an.safetensors -o m.safetensors --nonfinite mean
expect_stdout_contains "warning: 1 feature(s) without any finite value passed through unchanged"
check m.safetensors 'np.isnan(d["dead"][:2]).all() and np.isinf(d["dead"][2]) and np.isnan(d["h"]).all()'
# samples: column 0 has no finite value
expect_exit 0 "$N" clean an.npy -o z.npy --nonfinite value=3
check z.npy 'd["a"].tolist() == [[3, 1], [3, 2], [3, 3], [3, 4]]'
expect_exit 1 "$N" clean an.npy -o d.npy --max-drop-fraction 0.5
expect_stdout_contains "warning: 1 feature(s) without any finite value passed through unchanged"
check d.npy 'd["a"].shape == (3, 2) and np.isnan(d["a"][:, 0]).all() and d["a"][:, 1].tolist() == [1, 2, 4]'
# saved and applied: the same copy
expect_exit 0 "$N" clean an.npy -o s.npy --nonfinite zero --normalize zscore --save-params p.json
expect_json p.json 'j["tensors"]["data"]["passthrough"]' '[false, false]'
expect_exit 0 "$N" clean an.npy -o s2.npy --nonfinite zero --normalize zscore --apply-params p.json
cmp -s s.npy s2.npy || fail "--apply-params gives another copy"
pass
