#!/bin/bash
# Sharded checkpoints through the CLI: the index gets its own file entry
# (format "index"), its shards are audited, and index problems (missing
# shard, tensor in a shard but not in the index) make that entry an error,
# exit 3, while the shards are still reported.
. "$(dirname "$0")/helpers.sh"

mkdir "$T/ck"
make_st "$T/ck/s1.safetensors" '{"tensors":[{"name":"a","dtype":"F32","shape":[2],"values":[1,2]}]}'
make_st "$T/ck/s2.safetensors" '{"tensors":[{"name":"b","dtype":"F32","shape":[2],"values":[3,"nan"]}]}'
echo '{"metadata":{"total_size":16},"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}}' >"$T/ck/m.index.json"
echo '{"weight_map":{"a":"s1.safetensors","b":"s2.safetensors","c":"s3.safetensors"}}' >"$T/miss.index.json"
sed 's/s1.safetensors/ck\/s1.safetensors/; s/s2.safetensors/ck\/s2.safetensors/' "$T/miss.index.json" >"$T/miss2.index.json"
echo '{"weight_map":{"a":"s1.safetensors","c":"s2.safetensors"}}' >"$T/ck/extra.index.json"

expect_exit 1 "$NANAUDIT" scan --format json "$T/ck/m.index.json"
cp "$T/stdout" "$T/ok.json"
expect_json "$T/ok.json" '[(f["path"].split("/")[-1], f["format"], f["status"]) for f in j["files"]]' \
    '[["m.index.json", "index", "ok"], ["s1.safetensors", "safetensors", "ok"], ["s2.safetensors", "safetensors", "ok"]]'
expect_json "$T/ok.json" 'j["summary"]["nan"]' '1'
expect_json "$T/ok.json" 'j["summary"]["errors"]' '0'

expect_exit 3 "$NANAUDIT" scan --format json "$T/miss2.index.json"
cp "$T/stdout" "$T/miss.json"
expect_stderr_contains "s3.safetensors"
expect_json "$T/miss.json" 'j["files"][0]["format"]' '"index"'
expect_json "$T/miss.json" 'j["files"][0]["status"]' '"error"'
expect_json "$T/miss.json" '"s3.safetensors" in j["files"][0]["error"]' 'true'
expect_json "$T/miss.json" '[f["status"] for f in j["files"] if f["format"] == "safetensors"]' '["ok", "ok"]'
expect_json "$T/miss.json" 'j["summary"]["exit_code"]' '3'

expect_exit 3 "$NANAUDIT" scan --format json "$T/ck/extra.index.json"
cp "$T/stdout" "$T/extra.json"
expect_stderr_contains "nanaudit: $T/ck/extra.index.json: "
expect_json "$T/extra.json" 'j["files"][0]["status"]' '"error"'
expect_json "$T/extra.json" '"\u0027b\u0027" in j["files"][0]["error"]' 'true'

expect_exit 0 "$NANAUDIT" info "$T/ck/m.index.json"
expect_stdout_contains "$T/ck/m.index.json (index, 2 shards)"
expect_stdout_contains "$T/ck/s2.safetensors (safetensors, 1 tensor, 8 bytes of data)"

# a C64 tensor is two entries (z.real, z.imag) but one name and 16 bytes in
# the index: total_size 20 matches, 21 does not
mkdir "$T/cx"
make_st "$T/cx/s1.safetensors" '{"tensors":[{"name":"z","dtype":"C64","shape":[2],"values":[1,2]},{"name":"a","dtype":"F32","shape":[1],"values":[1]}]}'
echo '{"metadata":{"total_size":20},"weight_map":{"z":"s1.safetensors","a":"s1.safetensors"}}' >"$T/cx/ok.index.json"
expect_exit 0 "$NANAUDIT" scan "$T/cx/ok.index.json"
echo '{"metadata":{"total_size":21},"weight_map":{"z":"s1.safetensors","a":"s1.safetensors"}}' >"$T/cx/bad.index.json"
expect_exit 0 "$NANAUDIT" scan "$T/cx/bad.index.json"
expect_stdout_contains "note: index metadata.total_size is 21 bytes but the shards hold 20 bytes"
pass
