#!/bin/bash
# index_errors.sh - sharded checkpoints through their HF index
# (model.safetensors.index.json). The real 6-shard set (transformers,
# via FluxML/SafeTensors.jl) and a small valid set are audited (exit 0);
# each set under tests/data/shards/ breaks one rule (tests/tools/gen_bad.py
# --shards) and must give exit 3 with the names in the message, while the
# valid shards of the set are still audited.
. "$(dirname "$0")/helpers.sh"

S="$NA_TEST_DATA/shards"
IX=model.safetensors.index.json
S1=model-00001-of-00002.safetensors
S2=model-00002-of-00002.safetensors

# real set: 6 shards, 36 tensors, total_size 4305 = the tensor data bytes
expect_exit 0 "$NANAUDIT" scan --format json "$NA_TEST_DATA/real/fluxml-sharded/$IX"
cp "$T/stdout" "$T/real.json"
expect_json "$T/real.json" 'j["summary"]["tensors"]' '36'
expect_json "$T/real.json" 'sorted(f["path"].rsplit("/", 1)[-1] for f in j["files"] if f["format"] == "safetensors")' \
    '["model-00001-of-00006.safetensors", "model-00002-of-00006.safetensors", "model-00003-of-00006.safetensors", "model-00004-of-00006.safetensors", "model-00005-of-00006.safetensors", "model-00006-of-00006.safetensors"]'

expect_exit 0 "$NANAUDIT" scan --format json "$S/ok/$IX"
cp "$T/stdout" "$T/ok.json"
expect_json "$T/ok.json" 'j["summary"]["tensors"]' '3'
expect_json "$T/ok.json" 'j["summary"]["elements"]' '6'

# check NAME CODE MESSAGE: scanning set NAME's index gives CODE and MESSAGE
check() {
    expect_exit "$2" timeout 10 "$NANAUDIT" scan --format json "$S/$1/$IX"
    expect_stderr_contains "$3"
}
check missing_shard 3 "nanaudit: $S/missing_shard/$IX: missing shard file '$S2' (the index puts 1 tensor in it)"
# the shard that is there is still audited
cp "$T/stdout" "$T/missing.json"
expect_json "$T/missing.json" '[t["name"] for f in j["files"] if f["path"].endswith("'$S1'") for t in f["tensors"]]' '["a.weight", "a.bias"]'
check not_in_shard 3 "tensor 'c.weight' is in the index (shard '$S2') but not in that shard"
check not_in_index 3 "tensor 'extra' is in shard '$S1' but not in the index"
check two_shards 3 "tensor 'a.bias' is in two shards: '$S1' and '$S2'"
# total_size is the sum of tensor bytes (24), not of file sizes (285)
expect_exit 0 "$NANAUDIT" scan --format json "$S/total_size_wrong/$IX"
cp "$T/stdout" "$T/ts.json"
expect_json "$T/ts.json" 'j["files"][0]["notes"]' '["index metadata.total_size is 285 bytes but the shards hold 24 bytes of tensor data (loaders do not read it; some writers add up file sizes)"]'
expect_json "$T/ts.json" 'j["files"][0]["status"]' '"ok"'
# a total_size that is no number is a note as well (tester round 23a)
mkdir -p "$T/tsbad"
cp "$S/total_size_wrong/"*.safetensors "$T/tsbad/"
for v in null '"abc"' -5 1.5; do
    sed "s/\"total_size\": *[0-9]*/\"total_size\": $v/" "$S/total_size_wrong/$IX" >"$T/tsbad/$IX"
    grep -qF "\"total_size\": $v" "$T/tsbad/$IX" || fail "sed did not set total_size $v"
    expect_exit 0 "$NANAUDIT" scan "$T/tsbad/$IX"
    expect_stdout_contains "note: index metadata.total_size is not a non-negative integer (loaders do not read it)"
done
expect_exit 0 "$NANAUDIT" scan "$S/total_size_wrong/$IX"
expect_stdout_contains "  note: index metadata.total_size is 285 bytes but the shards hold 24 bytes of tensor data (loaders do not read it; some writers add up file sizes)"
check escape 3 "index: shard path '../ok/$S2' of tensor 'b.weight' escapes the index's directory (absolute or '..'; refused)"
check bad_shard 3 "$S2: truncated: tensor 'b.weight' runs past the end of the file (the tensors need 8 data bytes after the header, file has 4"
expect_stderr_contains "shard '$S2' is invalid or unreadable, so it was not checked against the index"
# a shard's own problem and a missing shard: both named (round 29b: the
# missing shard was not, while the README promises a line naming it)
mkdir -p "$T/both"
cp "$S/not_in_index/$S1" "$T/both/"
"$NA_PYTHON" - "$S/not_in_index/$IX" "$T/both/$IX" <<'PY' || fail "both/$IX"
import json, sys
ix = json.load(open(sys.argv[1]))
ix["weight_map"] = {k: v for k, v in ix["weight_map"].items() if v.endswith("00001-of-00002.safetensors")}
ix["weight_map"]["gone"] = "model-00002-of-00002.safetensors"
json.dump(ix, open(sys.argv[2], "w"))
PY
expect_exit 3 "$NANAUDIT" scan --format json "$T/both/$IX"
expect_stderr_contains "nanaudit: $T/both/$IX: tensor 'extra' is in shard '$S1' but not in the index"
expect_stderr_contains "nanaudit: $T/both/$IX: missing shard file '$S2' (the index puts 1 tensor in it)"
expect_json "$T/stdout" '[f["error"] for f in j["files"] if f["format"] == "index"]' \
    '["tensor '"'extra'"' is in shard '"'$S1'"' but not in the index; missing shard file '"'$S2'"' (the index puts 1 tensor in it)"]'
# an unreadable shard inside a walked folder is one file and one error,
# whether the folder's walk or the index reaches it first (round 36a: it
# was listed twice, "3 files, 3 errors" for a folder of 2)
for order in "junk.safetensors x.safetensors.index.json" "b.safetensors a.safetensors.index.json"; do
    set -- $order
    d="$T/one_$1"
    mkdir -p "$d"
    printf 'junk' > "$d/$1"
    echo "{\"weight_map\": {\"w\": \"$1\"}}" > "$d/$2"
    expect_exit 3 "$NANAUDIT" scan --format json "$d"
    expect_json "$T/stdout" '[f["path"].rsplit("/", 1)[1] for f in j["files"]]' \
        "$("$NA_PYTHON" -c 'import json, sys; print(json.dumps(sorted(sys.argv[1:])))' "$1" "$2")"
    expect_json "$T/stdout" 'j["summary"]["files"]' 2
    expect_json "$T/stdout" 'j["summary"]["errors"]' 2
    assert_eq "$(grep -c "nanaudit: $d/$1: 4 bytes: too short for safetensors" "$T/stderr")" 1 "lines for $1"
done
# an index named as another index's shard: the naming index says why it
# was not checked (it had no reason, merged into the naming index's entry:
# round 36a), and the named index is audited as an index of its own, its
# problems and shards included, also when only the naming index is given
# (round 42a: it was "shard is not a safetensors file", its own problems
# unchecked); in a folder the named index keeps its own entry
d="$T/ixshard"
mkdir -p "$d"
"$NA_PYTHON" -c '
import numpy as np
from safetensors.numpy import save_file
save_file({"lm_head": np.ones(3, np.float32)}, "'"$d"'/m.safetensors")' || fail "m.safetensors"
echo '{"weight_map": {"lm_head": "model.safetensors.index.json"}}' > "$d/e14.safetensors.index.json"
echo '{"weight_map": {}}' > "$d/model.safetensors.index.json"
expect_exit 3 "$NANAUDIT" scan --format json "$d/e14.safetensors.index.json"
expect_json "$T/stdout" '[(f["path"].rsplit("/", 1)[1], f["error"]) for f in j["files"]]' \
    '[["e14.safetensors.index.json", "shard '"'model.safetensors.index.json'"' is an index file, not a safetensors or PyTorch file, so it was not checked against the index"], ["model.safetensors.index.json", "index: \"weight_map\" is empty: it names no tensor and no shard"]]'
assert_eq "$(wc -l < "$T/stderr")" 2 "stderr lines of an index naming a broken index"
# a valid named index: its shard audited under it, one error (the naming index's)
echo '{"weight_map": {"lm_head": "m.safetensors"}}' > "$d/inner.safetensors.index.json"
echo '{"weight_map": {"lm_head": "inner.safetensors.index.json"}}' > "$d/outer.safetensors.index.json"
expect_exit 3 "$NANAUDIT" scan --format json "$d/outer.safetensors.index.json"
expect_json "$T/stdout" '[(f["path"].rsplit("/", 1)[1], f["format"], f["error"] is None, len(f["tensors"])) for f in j["files"]]' \
    '[["outer.safetensors.index.json", "index", false, 0], ["inner.safetensors.index.json", "index", true, 0], ["m.safetensors", "safetensors", true, 1]]'
assert_eq "$(wc -l < "$T/stderr")" 1 "stderr lines of an index naming a valid index"
rm "$d/inner.safetensors.index.json" "$d/outer.safetensors.index.json"
# a tensor the index puts in the wrong shard: two problems, two stderr
# lines, and the report's error holds both, in scan and in info's JSON
# (round 43a: the line saying where the tensor is was on stderr only)
"$NA_PYTHON" -c '
import numpy as np
from safetensors.numpy import save_file
save_file({"a": np.ones(2, np.float32)}, "'"$d"'/w1.safetensors")
save_file({"b": np.ones(3, np.float32)}, "'"$d"'/w2.safetensors")' || fail "w1, w2"
echo '{"weight_map": {"a": "w1.safetensors", "b": "w1.safetensors", "c": "w2.safetensors"}}' > "$d/w.safetensors.index.json"
ONE="tensor 'b' is in the index (shard 'w1.safetensors') but not in that shard"
TWO="tensor 'b' is in shard 'w2.safetensors' but the index puts it in 'w1.safetensors'; tensor 'c' is in the index (shard 'w2.safetensors') but not in that shard"
for cmd in scan info; do
    expect_exit 3 "$NANAUDIT" $cmd --format json "$d/w.safetensors.index.json"
    expect_stderr_contains "nanaudit: $d/w.safetensors.index.json: $ONE"
    expect_stderr_contains "nanaudit: $d/w.safetensors.index.json: $TWO"
    assert_eq "$(wc -l < "$T/stderr")" 2 "$cmd: stderr lines of the wrong shard"
    if [ $cmd = scan ]; then
        expect_json "$T/stdout" 'j["files"][0]["error"]' "\"$ONE; $TWO\""
    else
        expect_json "$T/stdout" 'j["indexes"][0]["error"]' "\"$ONE; $TWO\""
    fi
done
rm "$d"/w*.safetensors*
# a file no index names beside an index whose shards it could be: a note
# (round 43a: a leftover shard redefining a tensor was audited without a
# word); a Trainer's optimizer.pt beside pytorch_model.bin.index.json is
# not one
mkdir -p "$T/stray" "$T/strayb"
cp "$S/ok/"* "$T/stray/"
cp "$S/ok/$S1" "$T/stray/model-00003-of-00002.safetensors"
PYTHONPATH="$NA_SRC/tests/tools" "$NA_PYTHON" - "$T/strayb" <<'PY' || fail "making strayb"
import json, sys
import numpy as np
from make_pt import Storage, Tensor, save
d = sys.argv[1]
t = lambda: Tensor(Storage(np.ones(2, np.float32)), 0, (2,), (1,))
save({"a": t()}, f"{d}/pytorch_model-00001-of-00001.bin")
save({"a": t()}, f"{d}/pytorch_model-old.bin")
save({"state": {"0": {"exp_avg": t()}}}, f"{d}/optimizer.pt")
json.dump({"weight_map": {"a": "pytorch_model-00001-of-00001.bin"}},
          open(f"{d}/pytorch_model.bin.index.json", "w"))
PY
for dir in stray strayb; do
    expect_exit 0 "$NANAUDIT" scan --format json "$T/$dir"
    cp "$T/stdout" "$T/$dir.json"
done
NOTE="in the same folder: a loader that reads the index never opens this file"
expect_json "$T/stray.json" '[(f["path"].rsplit("/", 1)[1], f["notes"]) for f in j["files"] if f["notes"]]' \
    "[[\"model-00003-of-00002.safetensors\", [\"not a shard of $IX $NOTE\"]]]"
expect_json "$T/strayb.json" '[(f["path"].rsplit("/", 1)[1], f["notes"]) for f in j["files"] if f["notes"]]' \
    "[[\"pytorch_model-old.bin\", [\"not a shard of pytorch_model.bin.index.json $NOTE\"]]]"
# a chain of 18 indexes, each naming the next as its shard: 16 walked as
# indexes, the one past that said so (round 44a: the old "shard is not a
# safetensors file")
mkdir -p "$T/chain"
for i in $(seq 0 17); do
    echo "{\"weight_map\": {\"t$i\": \"c$((i + 1)).safetensors.index.json\"}}" > "$T/chain/c$i.safetensors.index.json"
done
expect_exit 3 "$NANAUDIT" scan --format json "$T/chain/c0.safetensors.index.json"
expect_stderr_contains "nanaudit: $T/chain/c17.safetensors.index.json: an index named as a shard 17 indexes deep: not walked (at most 16; its own shards and problems are not checked)"
expect_json "$T/stdout" 'len(j["files"])' 18
# two indexes naming each other: each listed once, each says why, no loop
echo '{"weight_map": {"x": "b.safetensors.index.json"}}' > "$d/a.safetensors.index.json"
echo '{"weight_map": {"y": "a.safetensors.index.json"}}' > "$d/b.safetensors.index.json"
expect_exit 3 timeout 10 "$NANAUDIT" scan --format json "$d/a.safetensors.index.json"
expect_json "$T/stdout" '[f["path"].rsplit("/", 1)[1] for f in j["files"]]' \
    '["a.safetensors.index.json", "b.safetensors.index.json"]'
assert_eq "$(wc -l < "$T/stderr")" 2 "stderr lines of two indexes naming each other"
rm "$d/a.safetensors.index.json" "$d/b.safetensors.index.json"
expect_exit 3 "$NANAUDIT" scan --format json "$d"
expect_json "$T/stdout" 'len(j["files"])' 3
expect_json "$T/stdout" '[f["error"] is not None for f in j["files"] if f["path"].endswith("/model.safetensors.index.json")]' '[true]'
# an index naming itself as its shard: why it was not checked (round 40a:
# "invalid or unreadable" alone)
echo '{"weight_map": {"a": "self.safetensors.index.json"}}' > "$d/self.safetensors.index.json"
expect_exit 3 "$NANAUDIT" scan "$d/self.safetensors.index.json"
expect_stderr_contains "nanaudit: $d/self.safetensors.index.json: shard 'self.safetensors.index.json' is an index file, not a safetensors or PyTorch file, so it was not checked against the index"
assert_eq "$(wc -l < "$T/stderr")" 1 "stderr lines of the self-naming index"
# JSON that must not begin with a byte-order mark (RFC 8259 section 8.1),
# and a NUL in a name: said in words, not in jansson's (round 40a)
printf '\xef\xbb\xbf{"weight_map": {"lm_head": "m.safetensors"}}' > "$d/bom.safetensors.index.json"
expect_exit 3 "$NANAUDIT" scan "$d/bom.safetensors.index.json"
expect_stderr_contains "nanaudit: $d/bom.safetensors.index.json: index begins with a UTF-8 byte-order mark (EF BB BF), which JSON text must not (RFC 8259, section 8.1); save it without one"
printf '{"weight_map": {"lm_\\u0000head": "m.safetensors"}}' > "$d/nul.safetensors.index.json"
expect_exit 3 "$NANAUDIT" scan "$d/nul.safetensors.index.json"
expect_stderr_contains "nanaudit: $d/nul.safetensors.index.json: index: a tensor name or key holds a NUL character (U+0000; line 1, column"
pass
