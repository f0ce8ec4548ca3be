#!/bin/bash
# F64 values with a variance below 2^-1034 (N(0,1) * 1e-163, or F64
# subnormals) have a variance below the smallest normal double: the
# squared deviations became 0, scan said std 0 and flagged nothing (exit
# 0, no note) and clean --normalize zscore wrote every value as 0 under
# "1 constant feature(s) (std 0)" (tester round 21b, MED). The std is now
# unknown (null, "-") with a note, as for one that overflows, and clean
# refuses to scale by it (exit 3); --mad and minmax still work.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making the files"
import numpy as np
rng = np.random.default_rng(1)
(rng.standard_normal(1000) * 1e-163).tofile("tiny.f64")
np.array([5e-324, 1e-323, 2.225073858507201e-308, -5e-324,
          2.2250738585072014e-308]).tofile("sub.f64")
(rng.standard_normal(1000) * 1e-150).tofile("small.f64")
PY
WHY="underflows a double (a variance below 5.4e-312, a std below 2.3e-156: squared deviations that small lose their digits, and numpy's np.std gives 0 or a rounded value)"
for f in tiny sub; do
    expect_exit 0 "$NANAUDIT" scan --dtype F64 $f.f64 --zscore 3 --fail-on outliers
    expect_stdout_contains "note data: outlier test not applied: the standard deviation (--zscore) $WHY"
    expect_exit 0 "$NANAUDIT" scan --dtype F64 $f.f64 --format json
    "$NA_PYTHON" -c 'import json,sys; t=json.load(open(sys.argv[1]))["files"][0]["tensors"][0]; assert t["std"] is None and t["min"] < t["max"], t' "$T/stdout" || fail "$f: std not null"
done
# a spread of 1e-150 is still computed: std ~1e-150 as numpy's
expect_exit 0 "$NANAUDIT" scan --dtype F64 small.f64 --format json
"$NA_PYTHON" - "$T/stdout" <<'PY' || fail "small std"
import json, sys
import numpy as np
t = json.load(open(sys.argv[1]))["files"][0]["tensors"][0]
x = np.fromfile("small.f64")
assert abs(t["std"] - x.std()) <= 1e-12 * x.std(), (t["std"], x.std())
PY
# --mad needs no squares: it flags as numpy's median/MAD do
expect_exit 0 "$NANAUDIT" scan --dtype F64 tiny.f64 --mad 3
expect_stdout_contains "note data: 4 outliers with modified z-score"
# clean refuses to scale by an unknown std, names why, writes nothing
for opt in "--normalize zscore" "--zscore 3 --outliers clip"; do
    expect_exit 3 "$NANAUDIT" clean --dtype F64 tiny.f64 $opt -o out.f64
    expect_stderr_contains "tiny.f64: data: feature 0: the standard deviation"
    expect_stderr_contains "$WHY; --exclude 'data' copies the tensor unchanged"
    expect_stdout_lacks "constant"
    [ ! -e out.f64 ] || fail "out.f64 written with $opt"
done
# steps that need no std clean such data; the verification compares the
# written mean within the spread (it compared within a NaN tolerance and
# failed every such tensor, exit 4: tester round 22a)
for opt in "" "--nonfinite zero" "--mad 3 --outliers clip" "--mad 3 --outliers drop"; do
    rm -f k.f64
    expect_exit 0 "$NANAUDIT" clean --dtype F64 tiny.f64 $opt -o k.f64
    expect_stdout_contains "written: k.f64 (verified)"
    expect_stdout_lacks "nan  "
done
expect_exit 0 "$NANAUDIT" clean --dtype F64 tiny.f64 -o k2.f64
expect_stdout_contains "std -"
"$NA_PYTHON" - <<'PY' || fail "making mixed.safetensors"
import numpy as np
from safetensors.numpy import save_file
rng = np.random.default_rng(2)
save_file({"tiny": rng.standard_normal(100) * 1e-163, "w": rng.standard_normal(100)},
          "mixed.safetensors")
PY
expect_exit 0 "$NANAUDIT" clean mixed.safetensors --include w --nonfinite zero -o m2.safetensors
expect_exit 0 "$NANAUDIT" clean mixed.safetensors --nonfinite zero -o m3.safetensors
expect_exit 0 "$NANAUDIT" clean --dtype F64 tiny.f64 --normalize minmax -o mm.f64
"$NA_PYTHON" -c '
import numpy as np
x = np.fromfile("tiny.f64"); y = np.fromfile("mm.f64")
assert y.min() == 0 and y.max() == 1 and len(np.unique(y)) > 900, (y.min(), y.max())
' || fail "minmax of tiny values"
pass
