#!/bin/bash
# cast_check_singular.sh - the cast-check findings agree in number (fifth
# fresh-user round): one value read "1 finite value overflow F16" and
# "1 nonzero value underflow F16" in every report format. Singular and
# plural lines, text and JSON; the counts are numpy's (ml_dtypes for BF16):
# F16 overflows at |x| >= 65520 (70000), underflows at |x| <= 2^-25
# (1e-9), BF16 underflows at |x| <= 2^-134 (1e-41 as F32; 1e-46 is 0 in
# F32 already, so not a nonzero value).
. "$(dirname "$0")/helpers.sh"

make_st "$T/one.safetensors" '{"tensors": [
  {"name": "w", "dtype": "F32", "shape": [4], "values": [70000, 1e-9, 0.5, 1]}]}'
expect_exit 0 "$NANAUDIT" scan --cast-check F16 "$T/one.safetensors"
expect_stdout_contains "note w: 1 finite value overflows F16 (|x| >= 65520 rounds to Inf)"
expect_stdout_contains "note w: 1 nonzero value underflows F16 (|x| <= 2.9802322387695312e-08 rounds to 0)"
expect_exit 0 "$NANAUDIT" scan --format json --cast-check F16 "$T/one.safetensors"
expect_json "$T/stdout" '[f["message"] for f in j["files"][0]["tensors"][0]["findings"]]' \
    '["1 finite value overflows F16 (|x| >= 65520 rounds to Inf)", "1 nonzero value underflows F16 (|x| <= 2.9802322387695312e-08 rounds to 0)"]'

make_st "$T/two.safetensors" '{"tensors": [
  {"name": "w", "dtype": "F32", "shape": [5], "values": [70000, -80000, 1e-9, -1e-9, 1e-41]}]}'
expect_exit 1 "$NANAUDIT" scan --cast-check F16 --fail-on cast_overflow,cast_underflow "$T/two.safetensors"
expect_stdout_contains "FAIL w: 2 finite values overflow F16 (|x| >= 65520 rounds to Inf)"
expect_stdout_contains "FAIL w: 3 nonzero values underflow F16"
expect_exit 0 "$NANAUDIT" scan --cast-check BF16 "$T/two.safetensors"
expect_stdout_contains "note w: 1 nonzero value underflows BF16"
expect_stdout_lacks "overflow"
pass
