#!/bin/bash
# A Hugging Face hub cache folder (models--org--name/ with blobs/, refs/
# and snapshots/REV/FILE -> ../../blobs/HASH). Walked in sorted order,
# blobs/ came first: the index blob looked for its shards by file name
# among the hashes ("missing shard file", exit 3 on a valid model), the
# snapshot's index was then "the same file", and findings were named
# blobs/HASH (tester round 22b). blobs/ is now skipped with a reason and
# the files are audited through snapshots/, under their own names.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
R=hub/models--org--name
mkdir -p "$R/blobs" "$R/refs" "$R/snapshots/abc123"
echo abc123 >"$R/refs/main"
make_st s1.safetensors '{"tensors": [{"name": "a", "dtype": "F32", "shape": [2], "values": [1, 2]}]}'
make_st s2.safetensors '{"tensors": [{"name": "b", "dtype": "F32", "shape": [2], "values": [3, "nan"]}]}'
echo '{"metadata": {"total_size": 16}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}' >ix.json
for pair in "s1.safetensors model-00001-of-00002.safetensors" "s2.safetensors model-00002-of-00002.safetensors" "ix.json model.safetensors.index.json"; do
    set -- $pair
    h=$(sha256sum "$1" | cut -c1-40)
    cp "$1" "$R/blobs/$h"
    ln -s "../../blobs/$h" "$R/snapshots/abc123/$2"
done
for arg in "$R/snapshots/" "$R" hub; do
    expect_exit 1 "$NANAUDIT" scan --format json "$arg"
    cp "$T/stdout" r.json
    expect_json r.json '[f["path"].split("models--org--name/")[1] for f in j["files"]]' \
        '["snapshots/abc123/model-00001-of-00002.safetensors", "snapshots/abc123/model-00002-of-00002.safetensors", "snapshots/abc123/model.safetensors.index.json"]'
    expect_json r.json '[f["status"] for f in j["files"]]' '["ok", "ok", "ok"]'
    expect_json r.json 'j["summary"]["nan"]' '1'
done
expect_json r.json '[(s["path"], s["reason"]) for s in j["skipped"] if "blobs" in s["path"]]' \
    '[["hub/models--org--name/blobs", "Hugging Face cache blobs: audited through snapshots/, under their file names"]]'
# --baseline across revisions: a new revision that shares the weights
# (only its config changed) had the shared file audited under whichever
# revision sorts first, and the baselined NaN became new, exit 1 (tester
# round 23a); the revision of a hub cache path is compared as "*"
R2=hub2/models--org--name
OLD=ffffffffffffffffffffffffffffffffffffffff
NEW=0000000000000000000000000000000000000000
mkdir -p "$R2/blobs" "$R2/snapshots/$OLD"
h=$(sha256sum s2.safetensors | cut -c1-40)
cp s2.safetensors "$R2/blobs/$h"
ln -s "../../blobs/$h" "$R2/snapshots/$OLD/model.safetensors"
expect_exit 1 "$NANAUDIT" scan --report base.json hub2
mkdir -p "$R2/snapshots/$NEW"
ln -s "../../blobs/$h" "$R2/snapshots/$NEW/model.safetensors"
expect_exit 0 "$NANAUDIT" scan --baseline base.json --format json hub2
cp "$T/stdout" b.json
expect_json b.json '[f["path"] for f in j["files"]]' "[\"$R2/snapshots/$NEW/model.safetensors\"]"
expect_json b.json '[f["baseline"] for f in j["files"][0]["tensors"][0]["findings"]]' '[1]'
# (another folder's "snapshots" stays a path like any other)
mkdir -p x/snapshots/$OLD x/snapshots/$NEW
cp s2.safetensors x/snapshots/$OLD/m.safetensors
expect_exit 1 "$NANAUDIT" scan --report xb.json x
mv x/snapshots/$OLD/m.safetensors x/snapshots/$NEW/m.safetensors
expect_exit 1 "$NANAUDIT" scan --baseline xb.json x

# a second revision sharing every blob, the index included: its files are
# listed as the same files (round 29a: its index was in no list at all)
mkdir -p "$R/snapshots/def456"
for f in model-00001-of-00002.safetensors model-00002-of-00002.safetensors model.safetensors.index.json; do
    ln -s "$(readlink "$R/snapshots/abc123/$f")" "$R/snapshots/def456/$f"
done
expect_exit 1 "$NANAUDIT" scan --format json "$R"
expect_json "$T/stdout" '[(s["path"].split("models--org--name/")[1], s["reason"].split(" (")[0]) for s in j["skipped"] if "def456" in s["path"]]' \
    '[["snapshots/def456/model-00001-of-00002.safetensors", "same file as hub/models--org--name/snapshots/abc123/model-00001-of-00002.safetensors"], ["snapshots/def456/model-00002-of-00002.safetensors", "same file as hub/models--org--name/snapshots/abc123/model-00002-of-00002.safetensors"], ["snapshots/def456/model.safetensors.index.json", "same file as hub/models--org--name/snapshots/abc123/model.safetensors.index.json"]]'
rm -r "$R/snapshots/def456"
# a blob no snapshot links to (a pruned revision, a download in progress)
# is audited under its blob name; a folder that is not named as the hub
# names repositories is walked as any other (round 29a: "lake/" with
# blobs/ and snapshots/ was taken for a cache and its blobs/ unaudited)
cp s2.safetensors "$R/blobs/orphan"
expect_exit 1 "$NANAUDIT" scan --format json "$R"
expect_json "$T/stdout" '[f["path"].split("models--org--name/")[1] for f in j["files"]]' \
    '["snapshots/abc123/model-00001-of-00002.safetensors", "snapshots/abc123/model-00002-of-00002.safetensors", "snapshots/abc123/model.safetensors.index.json", "blobs/orphan"]'
expect_json "$T/stdout" 'j["summary"]["nan"]' '2'
mkdir -p lake/blobs lake/snapshots/v1
cp s2.safetensors lake/blobs/data.safetensors
cp s1.safetensors lake/snapshots/v1/m.safetensors
expect_exit 1 "$NANAUDIT" scan --format json lake
expect_json "$T/stdout" '[f["path"] for f in j["files"]]' '["lake/blobs/data.safetensors", "lake/snapshots/v1/m.safetensors"]'
expect_json "$T/stdout" 'j["skipped"]' '[]'
# a folder that only has a blobs/ directory is walked as any other
mkdir -p other/blobs
cp s2.safetensors other/blobs/x.safetensors
expect_exit 1 "$NANAUDIT" scan -q other
expect_stdout_contains "other/blobs/x.safetensors"
pass
