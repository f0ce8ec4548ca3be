#!/bin/bash
# walk_index_first.sh - a directory whose index sorts before its shards
# (fifth fresh-user round). HF names put shards first
# (model-00001-of-00002.safetensors < model.safetensors.index.json), but
# with other names (shards a.safetensors / s1.safetensors beside
# model.safetensors.index.json, or "Model.index.json") the walk reached
# each shard through the index first and then again as a directory entry,
# and scan listed every shard as "skipped: DIR/s1.safetensors (same file
# as DIR/s1.safetensors (audited once))", naming itself. The same
# directory entry reached twice is one item: the output is the same in
# either order. A second path to the file (a symlink) is still listed as
# the same file as the first.
. "$(dirname "$0")/helpers.sh"

mk() { # DIR SHARD1 SHARD2 INDEXNAME
    mkdir -p "$1"
    make_st "$1/$2" '{"tensors": [{"name": "a", "dtype": "F32", "shape": [2], "values": [1, "nan"]}]}'
    make_st "$1/$3" '{"tensors": [{"name": "b", "dtype": "F32", "shape": [1], "values": [2]}]}'
    printf '{"weight_map": {"a": "%s", "b": "%s"}}' "$2" "$3" >"$1/$4"
}
mk "$T/first" s1.safetensors s2.safetensors model.safetensors.index.json   # index sorts first
mk "$T/last" m-1.safetensors m-2.safetensors model.safetensors.index.json # shards sort first

for d in first last; do
    expect_exit 1 "$NANAUDIT" scan "$T/$d"
    expect_stdout_lacks "skipped"
    expect_stdout_contains "3 files, 2 tensors, 3 elements: 1 NaN, 0 Inf, 0 outliers; FAILED (exit 1)"
    expect_exit 1 "$NANAUDIT" scan --format json "$T/$d"
    expect_json "$T/stdout" 'sorted((f["format"], len(f["tensors"])) for f in j["files"])' \
        '[["index", 0], ["safetensors", 1], ["safetensors", 1]]'
    expect_json "$T/stdout" 'j.get("skipped", [])' '[]'
    expect_exit 0 "$NANAUDIT" info "$T/$d"
    expect_stderr_empty
done
# a symlink to a shard is another path to the same file: listed once as such
ln -s s1.safetensors "$T/first/z-link.safetensors"
expect_exit 1 "$NANAUDIT" scan "$T/first"
expect_stdout_contains "skipped: $T/first/z-link.safetensors (same file as $T/first/s1.safetensors"
rm "$T/first/z-link.safetensors"
# the index given, then its folder, then a shard again: each entry met again
# says how it was audited, never "same file as" its own path (round 43a)
expect_exit 1 "$NANAUDIT" scan --format json "$T/last/model.safetensors.index.json" "$T/last" "$T/last/m-1.safetensors"
expect_json "$T/stdout" '[(s["path"].rsplit("/", 1)[1], s["reason"].replace("'"$T"'/", "")) for s in j["skipped"]]' \
    '[["m-1.safetensors", "audited once, as a shard of last/model.safetensors.index.json"], ["m-2.safetensors", "audited once, as a shard of last/model.safetensors.index.json"], ["model.safetensors.index.json", "audited once (reached before by this path)"], ["m-1.safetensors", "audited once, as a shard of last/model.safetensors.index.json"]]'
expect_json "$T/stdout" 'len(j["files"])' 3
pass
