#!/bin/bash
# clean of big-endian raw data (--endian big) writes the cleaned copy in
# the input's byte order. Raw data has no header to say which order it is
# in, so the copy must read back with the flags that read the input. Found
# by the fourth fresh-user round: a cleaned tensor came out little-endian
# (a tensor copied unchanged kept big-endian), and `nanaudit scan --dtype
# F32 --endian big` of the copy showed other numbers (subnormals) with exit
# 0. Values against numpy: >f4 with a NaN row dropped and a --zscore
# clip, >f8 with minmax, >i2 normalized to big-endian F32, and U8 (one
# byte: no order); little-endian input stays little-endian.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" -c "
import numpy as np
rng = np.random.default_rng(7)
a = rng.normal(3, 2, (300, 3)).astype('>f4'); a[5, 1] = np.nan; a[9, 2] = 80
a.tofile('f4.bin'); a.astype('<f4').tofile('f4le.bin')
rng.normal(0, 1, (64, 2)).astype('>f8').tofile('f8.bin')
rng.integers(-500, 500, (50, 4)).astype('>i2').tofile('i2.bin')
rng.integers(0, 255, 40).astype('u1').tofile('u1.bin')
" || fail "inputs"

expect_exit 0 "$N" clean --dtype F32 --endian big --shape 300x3 --zscore 3 --outliers clip \
    f4.bin -o f4.out
expect_exit 0 "$N" clean --dtype F32 --shape 300x3 --zscore 3 --outliers clip f4le.bin -o f4le.out
expect_exit 0 "$N" clean --dtype F64 --endian big --shape 64x2 --normalize minmax f8.bin -o f8.out
expect_exit 0 "$N" clean --dtype I16 --endian big --shape 50x4 --normalize zscore i2.bin -o i2.out
expect_exit 0 "$N" clean --dtype U8 --endian big --normalize minmax --out-dtype U8 u1.bin -o u1.out
expect_exit 0 "$N" clean --dtype F64 --endian big --shape 64x2 --exclude data f8.bin -o f8.copy
cmp -s f8.bin f8.copy || fail "a raw tensor copied unchanged is not byte-identical"
"$NA_PYTHON" -c "
import numpy as np
def clip(x, k):
    m = x.mean(0); s = x.std(0)
    return np.clip(x, m - k * s, m + k * s)
a = np.fromfile('f4.bin', '>f4').reshape(300, 3).astype('f8')
a = a[np.isfinite(a).all(1)]
r = clip(a, 3).astype('f4')
assert np.array_equal(np.fromfile('f4.out', '>f4').reshape(-1, 3), r), 'f4 big'
assert np.array_equal(np.fromfile('f4le.out', '<f4').reshape(-1, 3), r), 'f4 little'
b = np.fromfile('f8.bin', '>f8').reshape(64, 2)
r = (b - b.min(0)) / (b.max(0) - b.min(0))
assert np.array_equal(np.fromfile('f8.out', '>f8').reshape(64, 2), r), 'f8'
c = np.fromfile('i2.bin', '>i2').reshape(50, 4).astype('f8')
r = ((c - c.mean(0)) / c.std(0)).astype('f4')
o = np.fromfile('i2.out', '>f4').reshape(50, 4)
assert np.abs(o - r).max() <= 1e-6, np.abs(o - r).max()
d = np.fromfile('u1.bin', 'u1').astype('f8')
r = np.clip(np.rint((d - d.min()) / (d.max() - d.min())), 0, 255).astype('u1')
assert np.array_equal(np.fromfile('u1.out', 'u1'), r), 'u1'
" || fail "values"
# and the copy reads back with the input's flags: the same statistics as
# the report's 'after' line
expect_exit 0 "$N" clean --dtype F32 --endian big --shape 300x3 --zscore 3 --outliers clip \
    --format json f4.bin -o f4.out --force
after_max="$(json_get "$T/stdout" 'j["tensors"][0]["after"]["max"]')"
expect_exit 0 "$N" scan --format json --dtype F32 --endian big --shape 299x3 f4.out
expect_json "$T/stdout" 'j["files"][0]["tensors"][0]["max"]' "$after_max"
expect_json "$T/stdout" 'j["files"][0]["tensors"][0]["subnormal"]' '0'
# (twelfth fresh-user round) every sample dropped: the 0-byte copy is
# written and verified (it was "verification: the written file does not
# re-open: empty file (0 bytes)", exit 4, while --dry-run said 0); it reads
# back as shape 0x2, and an empty file with --dtype alone is an error
printf '\x00\x00\xc0\x7f\x00\x00\x80\x3f\x00\x00\x80\x3f\x00\x00\xc0\x7f' >alln.bin
expect_exit 0 "$N" clean --dtype F32 --shape 2x2 --max-drop-fraction 1 alln.bin -o alln.out
expect_stdout_contains "dropped 2 samples (non-finite 2, outliers 0, together 0), first 0 1"
expect_stdout_contains "written: alln.out (verified)"
assert_eq "$(stat -c %s alln.out)" "0" "size of the copy"
expect_exit 0 "$N" scan --dtype F32 --shape 0x2 alln.out
expect_stdout_contains "  data    F32    [0,2]         0    0    0"
expect_exit 3 "$N" scan --dtype F32 alln.out
assert_eq "$(cat "$T/stderr")" "nanaudit: alln.out: empty file (0 bytes); give --shape with a 0 dimension if no data is right" "empty raw file"
mkdir d && cp alln.out d/ && cp alln.bin d/
expect_exit 1 "$N" scan --dtype F32 d
expect_stdout_contains "skipped: d/alln.out (empty file (0 bytes))"
pass
