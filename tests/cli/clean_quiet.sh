#!/bin/bash
# clean -q (issue 4): as scan -q keeps only findings, errors and the
# summary, clean -q keeps only the tensors clean changed (samples dropped,
# values replaced, clipped, set to NaN, overflowed), warned about, failed
# on or left with NaN/Inf, without their statistics (but the "after" line
# where NaN or Inf remain), and the closing written/refused/dry run line.
# Exact lines: one tensor with a NaN (changed), one without (unchanged).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
make_st q.safetensors '{"tensors": [
  {"name": "a", "dtype": "F32", "shape": [4], "values": [1, "nan", 3, 4]},
  {"name": "b", "dtype": "F32", "shape": [2], "values": [1, 2]}]}'
# numpy: a -> [1, 0, 3, 4]: mean 2, std (ddof=0) sqrt(2.5) = 1.58114
expect_exit 0 "$N" clean q.safetensors --nonfinite zero -o full.safetensors
assert_eq "$(cat stdout)" "clean q.safetensors (safetensors)
  a: F32 -> F32, 4 elements (weights: one statistic), 2 passes
    replaced 1 non-finite, 0 outliers; clipped 0; set NaN 0; overflow 0
    before finite 3  nan 1  inf 0  min 1  max 4  mean 2.66667  std 1.24722
    after  finite 4  nan 0  inf 0  min 0  max 4  mean 2  std 1.58114
  b: F32 -> F32, 2 elements (weights: one statistic), 2 passes
    replaced 0 non-finite, 0 outliers; clipped 0; set NaN 0; overflow 0
    before finite 2  nan 0  inf 0  min 1  max 2  mean 1.5  std 0.5
    after  finite 2  nan 0  inf 0  min 1  max 2  mean 1.5  std 0.5
written: full.safetensors (verified)" "clean without -q"
expect_exit 0 "$N" clean -q q.safetensors --nonfinite zero -o quiet.safetensors
assert_eq "$(cat stdout)" "clean q.safetensors (safetensors)
  a: F32 -> F32, 4 elements (weights: one statistic), 2 passes
    replaced 1 non-finite, 0 outliers; clipped 0; set NaN 0; overflow 0
written: quiet.safetensors (verified)" "clean -q"
expect_stderr_empty
# --dry-run -q: the same tensor lines, its own closing line
expect_exit 0 "$N" clean --quiet q.safetensors --nonfinite zero --dry-run
assert_eq "$(cat stdout)" "clean q.safetensors (safetensors)
  a: F32 -> F32, 4 elements (weights: one statistic), 2 passes
    replaced 1 non-finite, 0 outliers; clipped 0; set NaN 0; overflow 0
dry run: no output written" "clean -q --dry-run"
# nothing changed (b only; normalizing is what was asked, not a finding):
# the closing line alone, as scan -q prints its summary alone
expect_exit 0 "$N" clean -q q.safetensors --exclude a --normalize minmax -o b.safetensors
assert_eq "$(cat stdout)" "written: b.safetensors (verified)" "clean -q, nothing changed"
# NaN left (--nonfinite keep, the default for weights): exit 1, and the
# "after" line and a warning say why (round 31b: no word of it before)
expect_exit 1 "$N" clean -q q.safetensors -o keep.safetensors --report keep.json
assert_eq "$(cat stdout)" "clean q.safetensors (safetensors)
  a: F32 -> F32, 4 elements (weights: one statistic), 2 passes
    replaced 0 non-finite, 0 outliers; clipped 0; set NaN 0; overflow 0
    after  finite 3  nan 1  inf 0  min 1  max 4  mean 2.66667  std 1.24722
    warning: 1 NaN/Inf value(s) kept (--nonfinite keep, the default for weights; --nonfinite zero, mean or value=X replaces them)
written: keep.safetensors (verified)" "clean -q, NaN kept"
expect_json keep.json '[t["warnings"] for t in j["tensors"]]' \
    '[["1 NaN/Inf value(s) kept (--nonfinite keep, the default for weights; --nonfinite zero, mean or value=X replaces them)"], []]'
# replaced: no such warning
expect_exit 0 "$N" clean -q q.safetensors -o zero.safetensors --nonfinite zero
expect_stdout_lacks "kept (--nonfinite keep"
# samples dropped, and a refusal: the dropping tensor and the refused line
"$NA_PYTHON" -c '
import numpy as np
x = np.arange(20, dtype=np.float32).reshape(10, 2)
x[3, 1] = np.inf
x.tofile("r.bin")' || fail "making r.bin"
expect_exit 0 "$N" clean -q --dtype F32 --shape 10x2 r.bin -o r.out
assert_eq "$(cat stdout)" "clean r.bin (raw)
  data: F32 -> F32, 10 samples x 2, 2 feature(s), 2 passes
    dropped 1 sample (non-finite 1, outliers 0, together 0), first 3
    replaced 0 non-finite, 0 outliers; clipped 0; set NaN 0; overflow 0
written: r.out (verified)" "clean -q, a dropped sample"
expect_exit 1 "$N" clean -q --dtype F32 --shape 10x2 r.bin -o r2.out --max-drop-fraction 0.05
expect_stdout_contains "    dropped 1 sample (non-finite 1, outliers 0, together 0), first 3"
expect_stdout_contains "refused: tensor 'data': the non-finite step would drop 1 of 10 samples (10.0%), more than --max-drop-fraction 0.05; nothing written"
[ ! -e r2.out ] || fail "refused run wrote r2.out"
# an error is always shown
make_st e.safetensors '{"tensors": [
  {"name": "b", "dtype": "F32", "shape": [2], "values": [1, 2]},
  {"name": "big", "dtype": "I64", "shape": [1], "values": [1152921504606846976]}]}'
expect_exit 3 "$N" clean -q e.safetensors -o e.out
assert_eq "$(cat stdout)" "clean e.safetensors (safetensors)
  big: error: I64 values reach 2^53 or beyond, which clean's double arithmetic cannot carry exactly; --exclude 'big' copies it unchanged" "clean -q, an error"
# -q shapes the text only: the JSON report keeps every tensor
expect_exit 0 "$N" clean -q q.safetensors --nonfinite zero --dry-run --format json
cp stdout q.json
expect_json q.json '[t["name"] for t in j["tensors"]]' '["a", "b"]'
pass
