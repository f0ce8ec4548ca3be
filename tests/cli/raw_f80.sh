#!/bin/bash
# raw_f80.sh - --dtype F80 reads numpy's np.longdouble(...).tofile() on
# x86-64: the x87 80-bit value in 16-byte slots, as an .npy '<f16'.
# Eleventh fresh-user round: raw F80 had a 10-byte stride, so 5 long
# doubles [1, 2, 3, 4, nan] were 8 elements with 3 NaN. Checked against
# numpy's own reading of the file.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making the input"
import numpy as np
if np.dtype(np.longdouble).itemsize != 16 or np.finfo(np.longdouble).nmant != 63:
    raise SystemExit("SKIP")
a = np.array([1, 2, 3, 4, np.nan, -np.inf, 2.5, 0], np.longdouble)
a[7] = np.longdouble("1e-4940")  # an x87 subnormal (a double would be 0)
assert 0 < a[7] < np.finfo(np.longdouble).tiny
a.tofile("ld.bin")
b = np.fromfile("ld.bin", np.longdouble)
assert np.isnan(b).sum() == 1 and np.isneginf(b).sum() == 1
f = b[np.isfinite(b)].astype(np.float64)
open("ref.txt", "w").write("%d %r %r %r" % (len(b), float(f.min()), float(f.max()), float(f.mean())))
PY
read -r n lo hi mean < ref.txt
expect_exit 1 "$NANAUDIT" scan --format json --dtype F80 ld.bin
cp "$T/stdout" r.json
expect_json r.json '[[t["dtype"], t["shape"], t["nan"], t["neg_inf"], t["subnormal"]] for t in j["files"][0]["tensors"]]' \
    '[["F80", ['"$n"'], 1, 1, 1]]'
expect_json r.json '[(abs(t["min"] - '"$lo"') < 1e-300, t["max"] == '"$hi"', abs(t["mean"] - '"$mean"') < 1e-12) for t in j["files"][0]["tensors"]]' \
    '[[true, true, true]]'
expect_exit 1 "$NANAUDIT" scan --dtype F80 --shape 2x4 ld.bin
expect_stdout_contains "FAIL data: 1 NaN value (first at [1, 0])"
# not a whole number of 16-byte slots; big-endian x87 does not exist
head -c 40 ld.bin > short.bin
expect_exit 3 "$NANAUDIT" scan --dtype F80 short.bin
expect_stderr_contains "short.bin"
expect_exit 3 "$NANAUDIT" scan --dtype F80 --endian big ld.bin
expect_stderr_contains "F80 (the x87 80-bit type) is little-endian only: --endian big does not apply"
expect_json r.json 'j["files"][0]["notes"]' '[]'
# values beyond the double range: finite, taken as +-DBL_MAX, and a note
# says the figures are bounds (round 29b: no word of it)
"$NA_PYTHON" -c "
import numpy as np
np.save('big.npy', np.array([1, np.longdouble(10) ** 400, -np.longdouble(10) ** 500, 2], np.longdouble))" ||
    fail "big.npy"
expect_exit 0 "$NANAUDIT" scan --format json big.npy
cp "$T/stdout" big.json
expect_json big.json '[(t["finite"], t["pos_inf"], t["neg_inf"], t["min"], t["max"]) for t in j["files"][0]["tensors"]]' \
    '[[4, 0, 0, -1.7976931348623157e+308, 1.7976931348623157e+308]]'
expect_json big.json 'j["files"][0]["notes"]' \
    '["data: F80 values at or beyond the double range (|x| >= 1.7976931348623157e308) are taken as +-1.7976931348623157e308: min, max, mean and std are bounds, not stored values"]'
expect_exit 0 "$NANAUDIT" scan big.npy
expect_stdout_contains "  note: data: F80 values at or beyond the double range"
pass
