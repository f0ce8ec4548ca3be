#!/bin/bash
# Regression (issue 7, fresh-user report): the --format github summary
# said "1 files, 1 tensors". Singular for 1, plural otherwise, for files,
# tensors, outliers and errors (NaN and Inf are symbols, unchanged), like
# the text and Markdown summaries.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
make_st one.safetensors '{"tensors":[{"name":"w","dtype":"F32","shape":[8],"values":[0,0,0,0,0,0,0,100]}]}'
make_st two.safetensors '{"tensors":[{"name":"a","dtype":"F32","shape":[1],"values":[1]},{"name":"b","dtype":"F32","shape":[1],"values":[2]}]}'
printf 'junk' >bad.safetensors

# 1 file, 1 tensor, 1 outlier (100 is 2.65 std above the mean of 8 values)
expect_exit 0 "$N" scan --format github --zscore 2.5 one.safetensors
expect_stdout_contains "::notice title=nanaudit::1 file, 1 tensor: 0 NaN, 0 Inf, 1 outlier, 0 errors; exit 0"
# 3 files, 3 tensors, 1 error
expect_exit 3 "$N" scan --format github one.safetensors two.safetensors bad.safetensors
expect_stdout_contains "::notice title=nanaudit::3 files, 3 tensors: 0 NaN, 0 Inf, 0 outliers, 1 error; exit 3"
pass
