#!/bin/bash
# index_shared_shards.sh - a shard reached through two index files, or
# named "./s1.safetensors" beside "s1.safetensors" in one index, is one
# file: audited once, checked against every index that names it (tenth
# fresh-user round: it was audited once per index, the totals said 2 NaN
# for one, and "./s1" was a second shard that held the first's tensors,
# a false "tensor in two shards", exit 3). transformers opens a shard as
# os.path.join(folder, name), so both spellings load.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
mkdir ck
make_st ck/s1.safetensors '{"tensors": [{"name": "a", "dtype": "F32", "shape": [4], "values": [0, 1, 2, 3]}, {"name": "b", "dtype": "F32", "shape": [3], "values": [1, "nan", 3]}]}'
make_st ck/s2.safetensors '{"tensors": [{"name": "c", "dtype": "F32", "shape": [2], "values": [1, 1]}]}'
printf '{"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}}' > ck/good.index.json
printf '{"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}, "metadata": {"total_size": 36}}' > ck/sized.index.json
printf '{"weight_map": {"a": "s1.safetensors", "b": ".//s1.safetensors", "c": "./s2.safetensors"}}' > dot.index.json
printf '{"weight_map": {"a": "s2.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}}' > ck/wrong.index.json
printf '{"weight_map": {"a": "./", "b": "s1.safetensors"}}' > ck/empty.index.json
cp ck/s1.safetensors ck/s2.safetensors .

summary='[j["summary"][k] for k in ("files", "tensors", "nan", "errors")]'
# one spelling per shard, "./" and "//" ignored
expect_exit 1 "$N" scan --format json dot.index.json
cp "$T/stdout" r.json
expect_json r.json '[f["path"] for f in j["files"]]' '["dot.index.json", "s1.safetensors", "s2.safetensors"]'
expect_json r.json "$summary" '[3, 3, 1, 0]'
# two indexes over one folder: each shard once, both indexes checked
expect_exit 1 "$N" scan --format json ck/good.index.json ck/sized.index.json
cp "$T/stdout" r.json
expect_json r.json '[f["path"] for f in j["files"]]' \
    '["ck/good.index.json", "ck/s1.safetensors", "ck/s2.safetensors", "ck/sized.index.json"]'
expect_json r.json "$summary" '[4, 3, 1, 0]'
# the second index is still checked: its wrong entry, and its total_size
# (a note: tester round 22b)
expect_exit 3 "$N" scan -q ck/good.index.json ck/wrong.index.json
expect_stderr_contains "nanaudit: ck/wrong.index.json: tensor 'a' is in shard 's1.safetensors' but the index puts it in 's2.safetensors'"
printf '{"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}, "metadata": {"total_size": 999}}' > ck/sized.index.json
expect_exit 1 "$N" scan ck/good.index.json ck/sized.index.json # (a NaN; the total is a note)
expect_stdout_contains "note: index metadata.total_size is 999 bytes but the shards hold 36 bytes of tensor data"
expect_exit 3 "$N" info ck/good.index.json ck/wrong.index.json
expect_stderr_contains "nanaudit: ck/wrong.index.json: tensor 'a' is in shard 's1.safetensors' but the index puts it in 's2.safetensors'"
expect_exit 0 "$N" info ck/good.index.json dot.index.json
# a name of only "." and "/" names no file
expect_exit 3 "$N" scan ck/empty.index.json
expect_stderr_contains "index: weight_map entry of tensor 'a' is not a file name"
# problems of one shard: the first three said, the rest counted (tenth
# fresh-user round: "(and 3 more index problems)" showed none of them)
printf '{"weight_map": {"a": "s2.safetensors", "b": "s2.safetensors", "c": "s2.safetensors", "d": "s1.safetensors", "e": "s1.safetensors"}}' > ck/many.index.json
expect_exit 3 "$N" scan -q ck/many.index.json
expect_stderr_contains "nanaudit: ck/many.index.json: tensor 'a' is in shard 's1.safetensors' but the index puts it in 's2.safetensors'; tensor 'b' is in shard 's1.safetensors' but the index puts it in 's2.safetensors'; tensor 'd' is in the index (shard 's1.safetensors') but not in that shard (and 1 more index problems)"
rm ck/many.index.json
# a folder of several indexes: every shard audited once
rm ck/wrong.index.json ck/empty.index.json
expect_exit 1 "$N" scan --format json ck
cp "$T/stdout" r.json
expect_json r.json '[f["path"] for f in j["files"] if f["format"] != "index"]' '["ck/s1.safetensors", "ck/s2.safetensors"]'
expect_json r.json "$summary" '[4, 3, 1, 0]'
pass
