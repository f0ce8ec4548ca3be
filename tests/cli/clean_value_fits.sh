#!/bin/bash
# clean_value_fits.sh - --nonfinite value=X, written as X when no
# --normalize rescales it, must be a value of the output dtype: 1e6 into
# F16 wrote +Inf for each NaN in a copy reported "verified" (round 36a).
# Refused, exit 2, one line naming the tensor, nothing written; a value
# that fits, a rescaled one and integer data without NaN are unaffected.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c '
import numpy as np
from safetensors.numpy import save_file
save_file({"f": np.array([1, np.nan], np.float32),
           "h": np.array([1, np.nan, 60000, -60000, 3], np.float16)}, "w.safetensors")
np.array([1, 2, 250], np.uint8).tofile("u8.raw")
np.array([1.5, np.nan, -3], "<f4").tofile("f32.raw")' || fail "inputs"
mkdir out
expect_exit 2 "$NANAUDIT" clean --nonfinite value=1e6 w.safetensors -o out/w.safetensors
assert_eq "$(cat stderr)" "nanaudit: w.safetensors: h: --nonfinite value=1e+06 does not fit F16 (it would be written as inf); give a value within its range, or a wider --out-dtype" "F16"
assert_eq "$(ls -A out)" "" "files written"
# F16's largest finite value is 65504: 60000 fits (and is exact)
expect_exit 0 "$NANAUDIT" clean --nonfinite value=60000 w.safetensors -o out/w.safetensors
"$NA_PYTHON" -c '
from safetensors.numpy import load_file
o = load_file("out/w.safetensors")
assert o["h"].tolist() == [1, 60000, 60000, -60000, 3], o["h"]
assert o["f"].tolist() == [1, 60000], o["f"]' || fail "value=60000"
# an integer --out-dtype saturates: refused too
expect_exit 2 "$NANAUDIT" clean --dtype F32 --nonfinite value=1000 --out-dtype I8 f32.raw -o out/i8.raw
expect_stderr_contains "data: --nonfinite value=1000 does not fit I8 (it would be written as 127)"
# rescaled by --normalize: the written value is not X
expect_exit 0 "$NANAUDIT" clean --dtype F32 --nonfinite value=1e6 --normalize minmax --out-dtype F16 \
    f32.raw -o out/n.raw
# integer data has no NaN to fill
expect_exit 0 "$NANAUDIT" clean --dtype U8 --nonfinite value=300 u8.raw -o out/u8.raw
cmp -s u8.raw out/u8.raw || fail "u8.raw changed"
pass
