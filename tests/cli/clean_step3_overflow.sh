#!/bin/bash
# clean_step3_overflow.sh - a z-score whose arithmetic overflows a double
# (parameters fitted on values of spread ~1e-150, applied to values near
# 1e200) makes finite values +-Inf. Those count as "overflow", warned
# about, in every path of the write pass: F64 output (value by value), F32
# (its vectorised loop), F16, and rows of several features. They did not
# for F64 ("overflow 0", round 36b), nor anywhere the double itself
# overflowed rather than its rounding.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c '
import numpy as np
tr = np.array([1.0, 2.0, 3.0, 4.0]) * 1e-150
te = np.array([1e-150, 1e200, -1e200, 2.5e-150, 3e300, 4e-150])
np.save("tr64.npy", tr)
np.save("te64.npy", te)
np.save("tr32.npy", (tr * 1e120).astype("f4"))   # spread ~1e-30 in F32
np.save("te32.npy", np.array([1e-30, 3e38, -1e30, 2e-30], "f4"))
np.save("tr16.npy", np.array([1, 2, 3, 4], "f2"))
np.save("te16.npy", np.array([1, 2, 60000, 3], "f2"))
np.save("tr2.npy", np.stack([tr, tr], axis=1))
np.save("te2.npy", np.stack([te, te[::-1]], axis=1))' || fail "inputs"
# fit, then apply to TE; prints the JSON report's overflow count
apply() { # $1: fit file, $2: data, $3: expected overflow, $4: expected +-Inf in the output
    expect_exit 0 "$NANAUDIT" clean --normalize zscore "$1" -o fit.npy --force --save-params p.json
    expect_exit 1 "$NANAUDIT" clean --normalize zscore --nonfinite keep --apply-params p.json \
        "$2" -o out.npy --force --report r.json
    expect_json r.json 'j["tensors"][0]["overflow"]' "$3"
    expect_stdout_contains "value(s) overflowed the output dtype"
    assert_eq "$("$NA_PYTHON" -c 'import numpy as np; print(int(np.isinf(np.load("out.npy")).sum()))')" \
        "$4" "+-Inf written for $2"
}
# F64: 1e200, -1e200 and 3e300 over a std of ~1.1e-150
apply tr64.npy te64.npy 3 3
# F32: 3e38 and -1e30 over a std of ~1.1e-30 overflow a float, not a double
apply tr32.npy te32.npy 2 2
# F16 (value by value): 60000 over a std of 1.1 stays finite; no overflow
expect_exit 0 "$NANAUDIT" clean --normalize zscore tr16.npy -o fit.npy --force --save-params p.json
expect_exit 0 "$NANAUDIT" clean --normalize zscore --apply-params p.json te16.npy -o out.npy \
    --force --report r.json
expect_json r.json 'j["tensors"][0]["overflow"]' 0
# two features (the general path): three in each column
apply tr2.npy te2.npy 6 6
pass
