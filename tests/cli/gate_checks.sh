#!/bin/bash
# CI-gate checks (issue 5, part 1-2): --range, --max-abs, --cast-check,
# --max-*-fraction and the checkpoint name rules: every bad value is exit 2
# with its one-line message, before any input is opened; the findings show
# in the text and JSON reports with exact counts and their exit codes.
# (Counts against numpy/ml_dtypes: tests/conformance/test_gate.py.)
. "$(dirname "$0")/helpers.sh"

F="$T/w.safetensors"
make_st "$F" '{"tensors": [
  {"name": "enc.weight", "dtype": "F32", "shape": [6], "values": [0, 1, 300, -2, 1e7, 65520]},
  {"name": "bn.running_var", "dtype": "F32", "shape": [3], "values": [1, -0.5, 0]},
  {"name": "bias", "dtype": "F32", "shape": [2], "values": [0, 0]}]}'

# usage errors: exit 2, message names the flag and the value
for args in "--range 5" "--range 5:1" "--range :" "--range a:b" "--range 1:2:3" "--range nan:1"; do
    expect_exit 2 "$NANAUDIT" scan $args /nonexistent.safetensors
    expect_stderr_contains "is not a range LO:HI of finite numbers with LO <= HI"
    expect_stderr_lacks "nonexistent"
done
expect_exit 2 "$NANAUDIT" scan --max-abs -1 "$F"
expect_stderr_contains "nanaudit: --max-abs: '-1' is not a finite number >= 0 (try 'nanaudit scan --help')"
expect_exit 2 "$NANAUDIT" scan --max-abs inf "$F"
expect_stderr_contains "--max-abs: 'inf' is not a finite number >= 0"
expect_exit 2 "$NANAUDIT" scan --cast-check F32 "$F"
expect_stderr_contains "--cast-check: 'F32' is not F16, BF16, F8_E4M3 or F8_E5M2"
expect_exit 2 "$NANAUDIT" scan --cast-check f16 "$F"
expect_stderr_contains "--cast-check: 'f16' is not F16, BF16, F8_E4M3 or F8_E5M2"
for fl in --max-nan-fraction --max-inf-fraction --max-outlier-fraction; do
    for v in -0.1 1.5 x ""; do
        expect_exit 2 "$NANAUDIT" scan "$fl" "$v" "$F"
        expect_stderr_contains "$fl: '$v' is not a fraction from 0 to 1"
    done
done

# defaults: negative reported for running_var, zero_tensor for the zero
# bias, nothing fails (no NaN/Inf)
expect_exit 0 "$NANAUDIT" scan --format json --report "$T/r.json" "$F"
expect_json "$T/r.json" '[f["kind"] for f in j["files"][0]["tensors"][1]["findings"]]' '["negative"]'
expect_json "$T/r.json" 'j["files"][0]["tensors"][1]["findings"][0]["count"]' 1
expect_json "$T/r.json" 'j["files"][0]["tensors"][1]["findings"][0]["fails"]' false
expect_json "$T/r.json" '[f["kind"] for f in j["files"][0]["tensors"][2]["findings"]]' '["zero_tensor"]'
expect_json "$T/r.json" '[f["kind"] for f in j["files"][0]["tensors"][0]["findings"]]' '[]'

# every check at once, text report
expect_exit 1 "$NANAUDIT" scan --range 0:255 --max-abs 1000 --cast-check F16 --zscore 0 \
    --fail-on range "$F"
expect_stdout_contains "4 values outside [0, 255] (min -2, max 10000000)"
expect_stdout_contains "2 values with |x| > 1000 (max |x| 10000000)"
expect_stdout_contains "2 finite values overflow F16 (|x| >= 65520 rounds to Inf)"
expect_stdout_contains "1 negative value (min -0.5) in a tensor that must be >= 0"
# limits as the user typed them (they printed as 0.20000000000000001 and
# [-0.10000000000000001, 0.29999999999999999]; round 36a), data values as
# numpy prints an F32 (the shortest decimal of the float: round 43a, the
# double's -9.99999993922529e-09 for an F32 -1e-08)
expect_exit 0 "$NANAUDIT" scan -q --max-abs 0.2 --range -0.1:0.3 --zscore 0 \
    "$NA_SRC/examples/clean.safetensors"
read -r MN MX AB < <("$NA_PYTHON" -c '
from safetensors import safe_open
with safe_open("'"$NA_SRC"'/examples/clean.safetensors", "np") as f:
    w = f.get_tensor("layer1.weight")
print(w.dtype, w.min(), w.max(), abs(w).max())' | sed 's/^float32 //')
assert_eq "$MN $MX $AB" "-0.24725302 0.2407759 0.24725302" "numpy's F32 reprs"
expect_stdout_contains "note layer1.weight: 7 values with |x| > 0.2 (max |x| $AB)"
expect_stdout_contains "note layer1.weight: 18 values outside [-0.1, 0.3] (min $MN, max $MX)"
make_st "$T/neg.safetensors" '{"tensors":[{"name":"bn.running_var","dtype":"F32","shape":[3],"values":[1,-1e-8,16777216]},
 {"name":"bn64.running_var","dtype":"F64","shape":[2],"values":[-1e-8,1]}]}'
expect_exit 1 "$NANAUDIT" scan --fail-on negative,range --range 0:1 "$T/neg.safetensors"
expect_stdout_contains "FAIL bn.running_var: 1 negative value (min -1e-08) in a tensor that must be >= 0"
expect_stdout_contains "FAIL bn.running_var: 2 values outside [0, 1] (min -1e-08, max 16777216)"
expect_stdout_contains "FAIL bn64.running_var: 1 negative value (min -1e-08) in a tensor that must be >= 0"
# F16 by its own rounding (round 44a: F32's shortest gave -0.30004883), a
# large F32 as numpy prints it (957908099530752 was printed in full)
"$NA_PYTHON" -c '
import numpy as np
from safetensors.numpy import save_file
save_file({"h.running_var": np.array([-0.3, 1], np.float16),
           "f.running_var": np.array([-957908099530752.0, 0.5], np.float32)}, "'"$T"'/fv.safetensors")
print(np.float16(-0.3), np.float32(-957908099530752.0))' > "$T/np.txt" || fail "fv.safetensors"
read -r NP_H NP_F < "$T/np.txt"
expect_exit 1 "$NANAUDIT" scan --fail-on negative "$T/fv.safetensors"
expect_stdout_contains "FAIL h.running_var: 1 negative value (min $NP_H) in a tensor that must be >= 0"
expect_stdout_contains "FAIL f.running_var: 1 negative value (min $NP_F) in a tensor that must be >= 0"
assert_eq "$NP_H $NP_F" "-0.3 -9.579081e+14" "numpy's prints"
# open-sided range; the fail list decides the exit code only
expect_exit 0 "$NANAUDIT" scan --range 0: --zscore 0 --format json --report "$T/o.json" "$F"
expect_json "$T/o.json" '[f["count"] for f in j["files"][0]["tensors"][0]["findings"] if f["kind"] == "range"]' '[1]'
expect_exit 1 "$NANAUDIT" scan --cast-check F8_E4M3 --fail-on cast-overflow --zscore 0 "$F"
expect_stdout_contains "2 finite values overflow F8_E4M3 (|x| > 464 becomes NaN, no Inf in this type)"
expect_exit 1 "$NANAUDIT" scan --fail-on negative "$F"
expect_exit 1 "$NANAUDIT" scan --fail-on zero_tensor "$F"
pass
