#!/bin/bash
# info_index_check.sh - `nanaudit info INDEX` checks the index against its
# shards as scan does (fifth fresh-user round). info listed the shards of
# an index whose weight_map disagrees with them (a tensor in two shards,
# in a shard but not in the index, in the index but not in its shard, a
# wrong metadata.total_size) with exit 0, while scan of the same index is
# exit 3: a user checking a download with info was told it was fine. The
# checks need only the shard headers, which info reads anyway. Sets from
# tests/data/shards (tests/tools/gen_bad.py --shards), as index_errors.sh.
. "$(dirname "$0")/helpers.sh"

S="$NA_TEST_DATA/shards"
IX=model.safetensors.index.json
S1=model-00001-of-00002.safetensors
S2=model-00002-of-00002.safetensors

# consistent sets: exit 0, nothing on stderr
expect_exit 0 "$NANAUDIT" info "$S/ok/$IX"
expect_stderr_empty
expect_stdout_contains "$S/ok/$IX (index, 2 shards)"
expect_exit 0 "$NANAUDIT" info "$NA_TEST_DATA/real/fluxml-sharded/$IX"
expect_stderr_empty

# check SET MESSAGE: info and scan both give exit 3 and the same line,
# and info still lists every shard it could open
check() {
    expect_exit 3 "$NANAUDIT" scan -q "$S/$1/$IX"
    expect_stderr_contains "nanaudit: $S/$1/$IX: $2"
    expect_exit 3 "$NANAUDIT" info "$S/$1/$IX"
    expect_stderr_contains "nanaudit: $S/$1/$IX: $2"
    expect_stdout_contains "$S/$1/$S1 (safetensors"
}
check not_in_shard "tensor 'c.weight' is in the index (shard '$S2') but not in that shard"
check not_in_index "tensor 'extra' is in shard '$S1' but not in the index"
check two_shards "tensor 'a.bias' is in two shards: '$S1' and '$S2'"
# a total_size that is not the tensors' bytes is a note, not an error
# (mlx-examples writes the shard files' sizes; no loader reads it:
# tester round 22b)
expect_exit 0 "$NANAUDIT" info "$S/total_size_wrong/$IX"
expect_stdout_contains "note $S/total_size_wrong/$IX: index metadata.total_size is 285 bytes but the shards hold 24 bytes of tensor data (loaders do not read it; some writers add up file sizes)"
expect_stderr_empty
# a missing shard: one line, the index's (it was also "S2: No such file or
# directory" and a third file in scan's summary), as scan
check missing_shard "missing shard file '$S2' (the index puts 1 tensor in it)"
assert_eq "$(wc -l < "$T/stderr")" "1" "lines on stderr for a missing shard"
expect_stdout_lacks "$S2"
expect_exit 3 "$NANAUDIT" scan "$S/missing_shard/$IX"
assert_eq "$(cat "$T/stderr")" "nanaudit: $S/missing_shard/$IX: missing shard file '$S2' (the index puts 1 tensor in it)" "scan's stderr"
expect_stdout_contains "2 files, 2 tensors, 4 elements: 0 NaN, 0 Inf, 0 outliers, 1 error; FAILED (exit 3)"

# one line per problem: the index's line is not repeated per shard
expect_exit 3 "$NANAUDIT" info "$S/two_shards/$IX"
assert_eq "$(grep -c "two shards" "$T/stderr")" 1 "lines about the shared tensor"

# the same shard set given twice (index and a directory holding it):
# still one line, and the exit code of the worst input
expect_exit 3 "$NANAUDIT" info "$S/ok/$IX" "$S/two_shards"
expect_stdout_contains "$S/ok/$S1 (safetensors"
expect_stderr_contains "two shards"
pass
