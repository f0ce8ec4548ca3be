#!/bin/bash
# Regression (h13 new-user run): --max-locations 0 dropped the "first at"
# of NaN findings but still printed "1 +Inf value (first at [10, 0])",
# while the JSON's inf_locations was []. --help promises "the first N
# row-major indices of NaN, Inf and outliers", so N = 0 means none for
# every kind (lib/nanaudit.h: first_pos_inf is unknown when N is 0).
. "$(dirname "$0")/helpers.sh"

# 3x4 float32: NaN at [0,1], +Inf at [1,2], -Inf at [2,3]
"$NA_PYTHON" -c '
import numpy as np, sys
a = np.arange(12, dtype="<f4").reshape(3, 4)
a[0, 1] = np.nan; a[1, 2] = np.inf; a[2, 3] = -np.inf
a.tofile(sys.argv[1])
' "$T/a.bin" || fail "python"
B='j["files"][0]["tensors"][0]'

expect_exit 1 "$NANAUDIT" scan --dtype F32 --shape 3x4 --max-locations 0 "$T/a.bin"
expect_stdout_contains "1 NaN value"
expect_stdout_contains "1 +Inf value"
expect_stdout_contains "1 -Inf value"
expect_stdout_lacks "first at"

expect_exit 1 "$NANAUDIT" scan --format json --dtype F32 --shape 3x4 --max-locations 0 "$T/a.bin"
cp "$T/stdout" "$T/z.json"
expect_json "$T/z.json" "[$B['nan_locations'], $B['inf_locations']]" '[[], []]'
expect_json "$T/z.json" "[f['message'] for f in $B['findings']]" \
    '["1 NaN value", "1 +Inf value", "1 -Inf value"]'

# N = 1 keeps each kind's first location, +Inf and -Inf separately
expect_exit 1 "$NANAUDIT" scan --format json --dtype F32 --shape 3x4 --max-locations 1 "$T/a.bin"
cp "$T/stdout" "$T/o.json"
expect_json "$T/o.json" "$B['inf_locations']" '[[1, 2]]'
expect_json "$T/o.json" "[f['message'] for f in $B['findings']]" \
    '["1 NaN value (first at [0, 1])", "1 +Inf value (first at [1, 2])", "1 -Inf value (first at [2, 3])"]'
pass
