#!/bin/bash
# `nanaudit clean --together` (issue 4): tensors sharing the sample axis
# lose the same samples, checked against a numpy reference; the refusal
# for tensors not grouped names both; bad --together values exit 2.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
rng = np.random.default_rng(4)
# Uniform data: after the planted outliers go, nothing else is beyond
# 3 std (the uniform's bound is 1.73 std), so the drops are exactly known.
x = rng.uniform(-1, 1, (200, 3))
y = rng.uniform(-1, 1, 200)
x[5, 1] = np.nan      # x: non-finite drop
x[17, 2] = 1e3        # x: outlier drop
y[40] = np.inf        # y: non-finite drop
y[90] = -1e3          # y: outlier drop
w = np.ones(50)
save_file({"x": x, "y": y}, "xy.safetensors")
save_file({"x": x, "y": y, "z": np.arange(200.0)}, "xyz.safetensors")
save_file({"x": x, "y": y, "w": w}, "xyw.safetensors")
np.arange(10, dtype=np.float64).tofile("a.f64")
PY
N="$NANAUDIT"

# Without --together the drop from x is refused, naming both tensors.
expect_exit 2 "$N" clean xy.safetensors --samples --zscore 3 -o out.st --report mis.json
expect_stderr_contains "dropping 2 samples from 'x' would misalign it with 'y' (both have 200 rows)"
expect_stderr_contains "--together to drop from both"
[ ! -e out.st ] || fail "refused run wrote output"
# the report ends with the reason, as other refusals' do (round 29b: the
# JSON said refused null and the text had no closing line)
expect_stdout_contains "refused: dropping 2 samples from 'x' would misalign it with 'y' (both have 200 rows); use --allow-misaligned if they are unrelated, --together to drop from both; nothing written"
expect_json mis.json '[j["refused"].startswith("dropping 2 samples from"), "would misalign" in j["refused"], j["written"], j["exit_code"]]' '[true, true, false, 2]'

check_aligned() { # FILE: x and y of FILE against the numpy reference
    "$NA_PYTHON" - "$1" <<'PY' || fail "aligned output $1"
import sys
import numpy as np
from safetensors.numpy import load_file
src, out = load_file("xy.safetensors"), load_file(sys.argv[1])
x, y = src["x"], src["y"]
keep = np.isfinite(x).all(1) & np.isfinite(y)
xs, ys = x[keep], y[keep]
keep[keep] = ~((np.abs(xs - xs.mean(0)) > 3 * xs.std(0)).any(1) |
               (np.abs(ys - ys.mean()) > 3 * ys.std()))
assert sorted(np.flatnonzero(~keep)) == [5, 17, 40, 90], np.flatnonzero(~keep)
xk, yk = x[keep], y[keep]
rx = (xk - xk.min(0)) / (xk.max(0) - xk.min(0))
ry = (yk - yk.min()) / (yk.max() - yk.min())
assert out["x"].shape == (196, 3) and out["y"].shape == (196,)
np.testing.assert_allclose(out["x"], rx, rtol=0, atol=1e-12)
np.testing.assert_allclose(out["y"], ry, rtol=0, atol=1e-12)
PY
}

expect_exit 0 "$N" clean xy.safetensors --samples --zscore 3 --normalize minmax \
    --together x,y -o out.st --report rep.json
check_aligned out.st
expect_stdout_contains "dropped 4 samples (non-finite 1, outliers 1, together 2), first 5 17 40 90"
expect_json rep.json '[e["samples_dropped"] for e in j["tensors"]]' \
    '[{"nonfinite": 1, "outliers": 1, "together": 2, "total": 4, "first": [5, 17, 40, 90]}, {"nonfinite": 1, "outliers": 1, "together": 2, "total": 4, "first": [5, 17, 40, 90]}]'
# a glob names the same group
expect_exit 0 "$N" clean xy.safetensors --samples --zscore 3 --normalize minmax \
    --together '[xy]' -o glob.st
check_aligned glob.st

# --mad and --nonfinite zero go through the same joint drops: the zeros
# replace NaN/Inf, the planted outliers go from both (modified z of the
# uniform values stays under 1.4, far below 3.5).
expect_exit 0 "$N" clean xy.safetensors --samples --nonfinite zero --mad 3.5 \
    --together x,y -o mad.st --report mad.json
expect_json mad.json '[(e["samples_dropped"]["together"], e["samples_dropped"]["first"], e["nonfinite_replaced"]) for e in j["tensors"]]' \
    '[[1, [17, 90], 1], [1, [17, 90], 1]]'
"$NA_PYTHON" - <<'PY' || fail "--mad --together output"
import numpy as np
from safetensors.numpy import load_file
src, out = load_file("xy.safetensors"), load_file("mad.st")
keep = np.ones(200, bool); keep[[17, 90]] = False
x, y = np.nan_to_num(src["x"], nan=0, posinf=0), np.nan_to_num(src["y"], nan=0, posinf=0)
assert np.array_equal(out["x"], x[keep]) and np.array_equal(out["y"], y[keep])
PY

# HDF5 (written by --dry-run for now): the same joint drops by dataset path
"$NA_PYTHON" -c '
import h5py, numpy as np
x = np.arange(20.0).reshape(10, 2); x[3, 0] = np.nan
with h5py.File("d.h5", "w") as f:
    f["x"] = x; f["g/y"] = np.arange(10.0)' || fail "making d.h5"
expect_exit 2 "$N" clean d.h5 --dry-run --max-drop-fraction 0.5
expect_stderr_contains "dropping 1 sample from '/x' would misalign it with '/g/y' (both have 10 rows)"
expect_exit 0 "$N" clean d.h5 --dry-run --max-drop-fraction 0.5 --together '/x,/g/*' --report h.json
expect_json h.json '[(e["name"], e["samples_dropped"]["nonfinite"], e["samples_dropped"]["together"], e["out_shape"]) for e in j["tensors"]]' \
    '[["/g/y", 0, 1, [9]], ["/x", 1, 0, [9, 2]]]'

# The fit's warnings follow the refit: a partner's drops can leave a
# feature constant, which the first fit (all rows) did not see. x has
# no non-finite value; column 0 differs only in row 0, which y's NaN
# drops from both.
"$NA_PYTHON" -c '
import numpy as np
from safetensors.numpy import save_file
x = np.array([[1, 0], [5, 1], [5, 2], [5, 3]], dtype=np.float64)
save_file({"x": x, "y": np.array([np.nan, 1.0, 2.0, 3.0])}, "refit.safetensors")' \
    || fail "making refit.safetensors"
expect_exit 0 "$N" clean refit.safetensors --samples --normalize minmax --together x,y \
    --max-drop-fraction 1 -o refit.st --report refit.json
expect_json refit.json '[(e["name"], e["samples_dropped"]["total"], e["warnings"]) for e in j["tensors"]]' \
    '[["x", 1, ["1 constant feature(s) (max == min) mapped to LO"]], ["y", 1, []]]'

# A tensor outside the group keeps the refusal, which names it.
expect_exit 2 "$N" clean xyz.safetensors --samples --zscore 3 --together x,y --exclude z -o o.st
expect_stderr_contains "dropping 4 samples from 'x' would misalign it with 'z' (both have 200 rows)"

# bad --together values: exit 2, one line each
expect_exit 2 "$N" clean xy.safetensors --samples --together '' -o o.st
expect_stderr_contains "--together: '' is not a comma-separated list of tensor names or globs"
expect_exit 2 "$N" clean xy.safetensors --samples --together 'x,,y' -o o.st
expect_stderr_contains "--together: 'x,,y' is not a comma-separated list"
expect_exit 2 "$N" clean xy.safetensors --samples --together 'x,' -o o.st
expect_stderr_contains "--together: 'x,' is not a comma-separated list"
expect_exit 2 "$N" clean xy.safetensors --samples --together x,nosuch -o o.st
expect_stderr_contains "xy.safetensors: --together: 'nosuch' matches no tensor"
expect_exit 2 "$N" clean xy.safetensors --samples --together x -o o.st
expect_stderr_contains "--together 'x' names one tensor ('x'); give the tensors that share its sample axis"
# the report, printed after the fit, ends with the refusal (sixteenth
# fresh-user round: no closing line, a log reader saw a full report)
expect_stdout_contains "refused: --together 'x' names one tensor ('x'); give the tensors that share its sample axis; nothing written"
expect_exit 2 "$N" clean xyw.safetensors --samples --together x,w -o o.st
expect_stderr_contains "--together: 'w' has 50 samples and 'x' 200; grouped tensors must share the sample axis"
expect_stdout_contains "refused: --together: 'w' has 50 samples and 'x' 200; grouped tensors must share the sample axis; nothing written"
expect_exit 2 "$N" clean xy.safetensors --samples --together x,y --together 'y*' -o o.st
expect_stderr_contains "--together: 'y' is in two groups ('x,y' and 'y*')"
expect_exit 2 "$N" clean xy.safetensors --together x,y --nonfinite zero -o o.st
expect_stderr_contains "--together needs --samples (safetensors tensors are weights"
# raw input is one tensor, "data": nothing to group it with
expect_exit 2 "$N" clean --dtype F64 a.f64 --together data -o o.f64
expect_stderr_contains "a.f64: --together 'data' names one tensor ('data')"
[ ! -e o.st ] && [ ! -e o.f64 ] || fail "a refused run wrote output"

# A tensor --together names but the selection leaves out (labels beside
# features) follows its partners: it loses the samples they drop and
# keeps its values, its own NaN/Inf and outliers included (it was
# refused: "'y' is not cleaned (not selected)"). x loses row 5 (NaN) and
# row 17 (outlier) and is normalized; y keeps its Inf at 40 and -1e3 at
# 90, and is not normalized.
expect_exit 1 "$N" clean xy.safetensors --samples --zscore 3 --normalize minmax --together x,y \
    --exclude y -o f.st --report f.json --max-drop-fraction 0.5
expect_stdout_contains "    not selected, named by --together: loses the samples its partners drop, values unchanged"
expect_stdout_contains "    warning: 1 NaN/Inf value(s) left as they are (it follows its --together partners; no step runs on it)"
expect_json f.json '[[t["name"], t["status"], t["samples_dropped"]["total"], t["reason"]] for t in j["tensors"]]' \
    '[["x", "cleaned", 2, null], ["y", "cleaned", 2, "not selected, named by --together: loses the samples its partners drop, values unchanged"]]'
"$NA_PYTHON" - <<'PY' || fail "follower values"
import numpy as np
from safetensors.numpy import load_file
src, out = load_file("xy.safetensors"), load_file("f.st")
keep = np.array([r not in (5, 17) for r in range(200)])
x = src["x"][keep]
assert np.array_equal(out["x"], (x - x.min(0)) / (x.max(0) - x.min(0))), "x"
assert np.array_equal(out["y"], src["y"][keep]), "y"
assert out["y"].dtype == np.float64
PY
# --include picks the cleaned ones the same way
expect_exit 1 "$N" clean xy.safetensors --samples --zscore 3 --together x,y --include x -o g.st \
    --max-drop-fraction 0.5
"$NA_PYTHON" -c "
import numpy as np
from safetensors.numpy import load_file
s, o = load_file('xy.safetensors'), load_file('g.st')
keep = np.array([r not in (5, 17) for r in range(200)])
assert np.array_equal(o['y'], s['y'][keep]) and np.array_equal(o['x'], s['x'][keep])" ||
    fail "--include follower"
pass
