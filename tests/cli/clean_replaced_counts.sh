#!/bin/bash
# What the change report's counts of changed values cover (round 27a:
# "nonfinite_replaced is too low"). They count the values changed in the
# samples written; a sample that a later step drops is accounted for as
# dropped. So [1, 2, NaN, 3, 2.5, 1.5, 2, Inf] with --nonfinite value=100
# --zscore 1.5: step 1 makes samples 2 and 7 100, step 2 flags and drops
# both: nonfinite_replaced 0, samples_dropped.outliers 2, first [2, 7];
# with --outliers clip the two stay (clipped): nonfinite_replaced 2,
# clipped 2. In both, before's NaN + Inf = replaced + the non-finite
# values of dropped samples (docs/json-schema.md).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c "
import numpy as np
np.array([1, 2, np.nan, 3, 2.5, 1.5, 2, np.inf]).tofile('nr.bin')" || fail "input"
N="$NANAUDIT"
expect_exit 0 "$N" clean --dtype F64 nr.bin -o nr.out --nonfinite value=100 --zscore 1.5 \
    --max-drop-fraction 0.9 --format json
j="$T/stdout"
expect_json "$j" 'j["tensors"][0]["nonfinite_replaced"]' '0'
expect_json "$j" 'j["tensors"][0]["samples_dropped"]["outliers"]' '2'
expect_json "$j" 'j["tensors"][0]["samples_dropped"]["first"]' '[2, 7]'
expect_json "$j" 'j["tensors"][0]["before"]["nan"] + j["tensors"][0]["before"]["pos_inf"]' '2'
"$NA_PYTHON" -c "
import numpy as np
assert np.fromfile('nr.out').tolist() == [1, 2, 3, 2.5, 1.5, 2]" || fail "nr.out values"
expect_exit 0 "$N" clean --dtype F64 nr.bin -o nr2.out --nonfinite value=100 --zscore 1.5 \
    --outliers clip --format json
j="$T/stdout"
expect_json "$j" 'j["tensors"][0]["nonfinite_replaced"]' '2'
expect_json "$j" 'j["tensors"][0]["clipped"]' '2'
expect_json "$j" 'j["tensors"][0]["samples_dropped"]["total"]' '0'
# the text report says the same
expect_exit 0 "$N" clean --dtype F64 nr.bin -o nr3.out --nonfinite value=100 --zscore 1.5 \
    --max-drop-fraction 0.9
expect_stdout_contains "dropped 2 samples (non-finite 0, outliers 2, together 0), first 2 7"
expect_stdout_contains "replaced 0 non-finite, 0 outliers; clipped 0"
pass
