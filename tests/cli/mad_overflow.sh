#!/bin/bash
# Regression (issues 4 and 7, fresh-user report): the median of an even
# count is the mean of the two middle values; numpy's (a + b) / 2
# overflows to inf for [DBL_MAX, 0.99 DBL_MAX], and scan --mad reported
# median and MAD null as if there were no finite value. lib/median.c now
# takes a / 2 + b / 2 when a + b is not finite (every other median stays
# numpy's expression). clean --mad uses the same selection; its
# verification accepted no overflowed (inf) mean before either.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
M = np.finfo(np.float64).max
a = np.array([M, 0.99 * M])
save_file({"x": a}, "ov.safetensors")
np.save("ov.npy", a)
# the expected values, without overflow: the median is M/2 + 0.99M/2 and
# the MAD is the median of |x - median| (two equal distances)
med = M / 2 + (0.99 * M) / 2
mad = float(np.median(np.abs(a - med)))
open("want", "w").write("%r %r\n" % (float(med), mad))
PY
read -r MED MAD <want
N="$NANAUDIT"

expect_exit 0 "$N" scan --mad 3.5 --format json ov.safetensors
cp "$T/stdout" s.json
expect_json s.json 'j["files"][0]["tensors"][0]["outliers"]["median"]' "$MED"
expect_json s.json 'j["files"][0]["tensors"][0]["outliers"]["mad"]' "$MAD"
expect_json s.json 'j["files"][0]["tensors"][0]["outliers"]["count"]' '0'

# clean --mad: the same median and MAD go into --save-params; nothing is
# flagged and the copy is written (exit 0), byte-identical data
expect_exit 0 "$N" clean --mad 3.5 --save-params p.json -o o.npy ov.npy
expect_json p.json 'j["tensors"]["data"]["center"]' "[$MED]"
expect_json p.json 'j["tensors"]["data"]["scale"]' "[$MAD]"
"$NA_PYTHON" -c 'import numpy as np, sys; sys.exit(not np.array_equal(np.load("o.npy"), np.load("ov.npy")))' ||
    fail "cleaned copy differs"
pass
