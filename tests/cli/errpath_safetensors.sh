#!/bin/bash
# errpath_safetensors.sh - safetensors and sharded-index error paths no
# other test triggered (audit 25a): a duplicate key inside a tensor entry
# or __metadata__ (formats/safetensors.c dup_key_error, which names the
# entry), an index whose "metadata" or
# "weight_map" has the wrong type (formats/index.c), and an index shard
# that is not a safetensors file (formats/walk.c). Exit 3 each.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T" <<'PY' || fail "could not write the test files"
import json, os, struct, sys
import numpy as np
T = sys.argv[1]
def st(path, hdr, data):
    h = hdr.encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
one = np.array([1.0], "<f4").tobytes()
st(f"{T}/dupinner.safetensors",
   '{"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}', one)
st(f"{T}/dupsecond.safetensors",
   '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
   '"v":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"data_offsets":[0,4]}}', one + one)
st(f"{T}/dupmeta.safetensors",
   '{"__metadata__":{"a":"1","a":"2"},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', one)
for d in ("md", "wm", "sh"):
    os.makedirs(f"{T}/{d}")
    st(f"{T}/{d}/model-00001-of-00001.safetensors",
       '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', one)
json.dump({"metadata": [1], "weight_map": {"w": "model-00001-of-00001.safetensors"}},
          open(f"{T}/md/model.safetensors.index.json", "w"))
json.dump({"weight_map": ["w"]}, open(f"{T}/wm/model.safetensors.index.json", "w"))
np.save(f"{T}/sh/shard.npy", np.zeros(3, "f4"))
json.dump({"weight_map": {"w": "shard.npy"}}, open(f"{T}/sh/model.safetensors.index.json", "w"))
# headers that fit the file but are not a JSON object: a byte-order mark
# (UTF-8, UTF-16) or an array; they were "unrecognised content ... give
# --dtype" (round 40a)
w = '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
st(f"{T}/bom8.safetensors", "\ufeff" + w, one)
open(f"{T}/bom16.safetensors", "wb").write(
    struct.pack("<Q", 2 + 2 * len(w)) + b"\xff\xfe" + w.encode("utf-16-le") + one)
st(f"{T}/list.safetensors", "[" + w + "]", one)
PY

for f in bom8 bom16 list; do
    expect_exit 3 "$NANAUDIT" scan "$T/$f.safetensors"
    expect_stdout_contains "$T/$f.safetensors (safetensors)"
done
expect_exit 3 "$NANAUDIT" scan "$T/bom8.safetensors"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/bom8.safetensors: header begins with a UTF-8 byte-order mark (EF BB BF), which JSON text must not (RFC 8259, section 8.1); save it without one" "UTF-8 BOM"
expect_exit 3 "$NANAUDIT" scan "$T/bom16.safetensors"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/bom16.safetensors: header begins with a UTF-16 byte-order mark (FF FE): JSON here must be UTF-8 (RFC 8259, section 8.1)" "UTF-16 BOM"
expect_exit 3 "$NANAUDIT" scan "$T/list.safetensors"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/list.safetensors: header is an array, not a JSON object" "array header"

# a key twice inside a tensor's entry: refused, one line naming the
# tensor (audit 25a: it named only the key), exit 3
expect_exit 3 "$NANAUDIT" scan "$T/dupinner.safetensors"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/dupinner.safetensors: tensor 'w': duplicate key 'dtype' in its entry (at byte 27)" "dup in w"
expect_exit 3 "$NANAUDIT" scan "$T/dupsecond.safetensors"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/dupsecond.safetensors: tensor 'v': duplicate key 'data_offsets' in its entry (at byte 120)" "dup in v"
expect_exit 3 "$NANAUDIT" scan "$T/dupmeta.safetensors"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/dupmeta.safetensors: __metadata__: duplicate key 'a' in its entry (at byte 28)" "dup in metadata"
mkdir "$T/out"
expect_exit 3 "$NANAUDIT" clean -o "$T/out/x.safetensors" "$T/dupinner.safetensors"
assert_eq "$(ls -A "$T/out")" "" "clean left a file"

# index "metadata" not an object / "weight_map" not an object
expect_exit 3 "$NANAUDIT" scan "$T/md/model.safetensors.index.json"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/md/model.safetensors.index.json: index: \"metadata\" is not an object" "metadata"
expect_exit 3 "$NANAUDIT" scan "$T/wm/model.safetensors.index.json"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/wm/model.safetensors.index.json: index: \"weight_map\" is not an object" "weight_map"
expect_exit 3 "$NANAUDIT" info "$T/wm/model.safetensors.index.json"
expect_stderr_contains "index: \"weight_map\" is not an object"

# a shard that is another format: the shard is named and the index says
# it was not checked; the same through the folder
for arg in "$T/sh/model.safetensors.index.json" "$T/sh"; do
    expect_exit 3 "$NANAUDIT" scan "$arg"
    expect_stderr_contains "nanaudit: $T/sh/shard.npy: shard is not a safetensors file (NumPy .npy)"
    expect_stderr_contains "model.safetensors.index.json: shard 'shard.npy' is invalid or unreadable, so it was not checked against the index"
done

# named .safetensors, too short or with a header length that cannot be:
# the rule that fails, not "unrecognised content" (round 43a); a name
# without the suffix keeps the general line
printf '\1\2\3' > "$T/short.safetensors"
printf '\0\0\0\0\0\0\0\0' > "$T/hlen0.safetensors"
printf '\1\0\0\0\0\0\0\0x' > "$T/hlen1.SAFETENSORS"
printf '\0\0\0\0\0\0\0\1abcdefgh' > "$T/hlenbig.safetensors"
cp "$T/short.safetensors" "$T/short.bin"
expect_exit 3 "$NANAUDIT" scan "$T/short.safetensors" "$T/hlen0.safetensors" "$T/hlen1.SAFETENSORS" \
    "$T/hlenbig.safetensors" "$T/short.bin"
expect_stderr_contains "nanaudit: $T/short.safetensors: 3 bytes: too short for safetensors (it starts with an 8-byte header length)"
expect_stderr_contains "nanaudit: $T/hlen0.safetensors: safetensors header length 0 (bytes 0-7) is less than the 2 bytes of the smallest header, '{}'"
expect_stderr_contains "nanaudit: $T/hlen1.SAFETENSORS: safetensors header length 1 (bytes 0-7) is less than the 2 bytes of the smallest header, '{}'"
expect_stderr_contains "nanaudit: $T/hlenbig.safetensors: header length 72057594037927936 bytes runs past the end of the file (8 + 72057594037927936 > 16 bytes)"
expect_stderr_contains "nanaudit: $T/short.bin: unrecognised content (not safetensors,"
assert_eq "$(wc -l < "$T/stderr")" 5 "stderr lines of five bad files"
pass
