#!/bin/bash
# --apply-params with data whose features are laid out differently from
# the fit's (seventh fresh-user round): statistics fitted per feature of
# (N, 4) data were applied to (M, 2, 2) data because both have 4 features,
# exit 0, each statistic landing on whatever element had the same flat
# index (a transposed or reshaped validation set was normalized with the
# wrong features' statistics, silently). --save-params now records
# "feature_shape" (the shape after axis 0) for per-feature statistics, and
# --apply-params refuses another one: exit 2, one line naming the
# parameters file, the tensor and both shapes, nothing written. Files
# without the key (written before it) still apply; a hand-edited one whose
# shape does not hold "features" elements is a bad parameters file.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
r = np.random.default_rng(1)
np.save("train.npy", r.normal(size=(30, 4)))
np.save("t4.npy", r.normal(size=(20, 4)))
np.save("t22.npy", r.normal(size=(20, 2, 2)))
np.save("g22.npy", r.normal(size=(20, 2, 2)))
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean -q --normalize zscore train.npy -o tr.npy --save-params p.json
expect_json p.json 'j["tensors"]["data"]["feature_shape"]' '[4]'
expect_json p.json 'j["tensors"]["data"]["features"]' '4'

# same feature shape, other row count: applies
expect_exit 0 "$N" clean -q --normalize zscore --apply-params p.json t4.npy -o o4.npy
"$NA_PYTHON" - <<'PY' || fail "t4 against numpy"
import json, numpy as np
p = json.load(open("p.json"))["tensors"]["data"]
x = np.load("t4.npy")
ref = (x - np.array(p["n_mean"])) / np.array(p["n_std"])
assert np.array_equal(np.load("o4.npy"), ref), "o4.npy differs from numpy"
PY

# 4 features as [2, 2]: refused, one line, nothing written
expect_exit 2 "$N" clean --normalize zscore --apply-params p.json t22.npy -o o22.npy
expect_stderr_contains "nanaudit: p.json: tensor 'data': parameters for features of shape [4], the data's are [2,2] (after axis 0, the sample axis)"
assert_eq "$(wc -l < "$T/stderr")" 1 "stderr lines"
expect_stdout_contains "  data: error: tensor 'data': parameters for features of shape [4]"
[ ! -e o22.npy ] || fail "o22.npy written"
ls -A | grep -q nanaudit-tmp && fail "temporary file left"

# a fit of (M, 2, 2) applies to (M, 2, 2)
expect_exit 0 "$N" clean -q --normalize zscore g22.npy -o g.npy --save-params p22.json
expect_json p22.json 'j["tensors"]["data"]["feature_shape"]' '[2, 2]'
expect_exit 0 "$N" clean -q --normalize zscore --apply-params p22.json t22.npy -o o22.npy
rm -f o22.npy

# --global: one statistic, no feature layout to check
expect_exit 0 "$N" clean -q --global --normalize zscore train.npy -o trg.npy --save-params pg.json
expect_json pg.json '"feature_shape" in j["tensors"]["data"]' 'false'
expect_exit 0 "$N" clean -q --global --normalize zscore --apply-params pg.json t22.npy -o o22.npy
rm -f o22.npy

# a file without the key (older nanaudit) applies as before
"$NA_PYTHON" - <<'PY' || fail "editing p.json"
import json
p = json.load(open("p.json"))
del p["tensors"]["data"]["feature_shape"]
json.dump(p, open("old.json", "w"))
p = json.load(open("p.json"))
p["tensors"]["data"]["feature_shape"] = [3]
json.dump(p, open("bad.json", "w"))
p["tensors"]["data"]["feature_shape"] = [2, "2"]
json.dump(p, open("bad2.json", "w"))
PY
expect_exit 0 "$N" clean -q --normalize zscore --apply-params old.json t22.npy -o o22.npy
rm -f o22.npy

# a feature_shape that does not hold "features" elements: bad file, exit 2
expect_exit 2 "$N" clean --normalize zscore --apply-params bad.json t4.npy -o o.npy
expect_stderr_contains "nanaudit: bad.json: bad --apply-params file: tensor 'data': \"feature_shape\" must be integers >= 0 whose product is \"features\" (4)"
expect_exit 2 "$N" clean --normalize zscore --apply-params bad2.json t4.npy -o o.npy
expect_stderr_contains "\"feature_shape\" must be integers >= 0"
[ ! -e o.npy ] || fail "o.npy written"
pass
