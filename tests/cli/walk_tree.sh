#!/bin/bash
# walk_tree.sh - directories (issue 2, section 3): an HF cache snapshot
# (symlinks into blobs/), a sharded checkpoint with its index, hidden
# entries, README/config.json skipped and listed, a file reached twice
# audited once, a symlink loop (skipped), and the errors: a Git LFS pointer
# named model.safetensors, a dangling symlink; a FIFO is skipped (no hang); a
# directory with nothing to audit is exit 3.
. "$(dirname "$0")/helpers.sh"
cd "$T" || fail "cd"

H=hub/models--org--m
mkdir -p $H/blobs $H/refs $H/snapshots/abc $H/.no_exist
make_st $H/blobs/1111 '{"tensors":[{"name":"w","dtype":"F32","shape":[3],"values":[1,2,3]}]}'
echo '{"hidden_size": 8}' > $H/blobs/2222
echo abc > $H/refs/main
ln -s ../../blobs/1111 $H/snapshots/abc/model.safetensors
ln -s ../../blobs/2222 $H/snapshots/abc/config.json
make_st $H/.no_exist/nan.safetensors '{"tensors":[{"name":"n","dtype":"F32","shape":[1],"values":["nan"]}]}'
echo "# model card" > $H/snapshots/abc/README.md

# the snapshot: audited through its symlink, config and README skipped
expect_exit 0 "$NANAUDIT" scan --format json $H/snapshots/abc
cp "$T/stdout" snap.json
expect_json snap.json '[(f["path"], f["format"], f["status"]) for f in j["files"]]' \
    "[[\"$H/snapshots/abc/model.safetensors\", \"safetensors\", \"ok\"]]"
expect_json snap.json '[s["path"] for s in j["skipped"]]' \
    "[\"$H/snapshots/abc/README.md\", \"$H/snapshots/abc/config.json\"]"
expect_json snap.json 'j["summary"]["elements"]' '3'

# the whole cache dir: blobs/ is skipped (a folder with blobs/ and
# snapshots/ is a cache repository: tester round 22b), the files are
# audited through snapshots/ under their own names (blobs/ is walked last,
# for blobs no snapshot reached: none here); the hidden .no_exist/
# (holding a NaN) is not walked, and listed as skipped (round 29a)
expect_exit 0 "$NANAUDIT" scan --format json hub
cp "$T/stdout" hub.json
expect_json hub.json '[f["path"] for f in j["files"]]' "[\"$H/snapshots/abc/model.safetensors\"]"
expect_json hub.json '[s["path"] for s in j["skipped"]]' \
    "[\"$H/.no_exist\", \"$H/refs\", \"$H/snapshots/abc/README.md\", \"$H/snapshots/abc/config.json\", \"$H/blobs\"]"
expect_json hub.json '[j["skipped"][0]["reason"], j["skipped"][4]["reason"]]' "[\"hidden: not walked; give its path to audit it\", \"Hugging Face cache blobs: audited through snapshots/, under their file names\"]"
expect_json hub.json 'j["summary"]["nan"]' '0'
# the text report lists the skipped files too, the Markdown summary counts
# them (round 29a: it did not say)
expect_exit 0 "$NANAUDIT" scan hub --report hub.md
expect_stdout_contains "$H/refs"
grep -qx "5 paths skipped as not data, hidden or audited under another name (the text and JSON reports list each)." hub.md ||
    fail "hub.md: $(cat hub.md)"

# a sharded checkpoint: shards (found before the index) and the index
mkdir sh
make_st sh/model-00001-of-00002.safetensors '{"tensors":[{"name":"a","dtype":"F32","shape":[1],"values":[1]}]}'
make_st sh/model-00002-of-00002.safetensors '{"tensors":[{"name":"b","dtype":"F32","shape":[2],"values":[2,"inf"]}]}'
echo '{"metadata": {"total_size": 12}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}' \
    > sh/model.safetensors.index.json
expect_exit 1 "$NANAUDIT" scan --format json sh
cp "$T/stdout" sh.json
expect_json sh.json '[(f["path"], f["status"]) for f in j["files"]]' \
    '[["sh/model-00001-of-00002.safetensors", "ok"], ["sh/model-00002-of-00002.safetensors", "ok"], ["sh/model.safetensors.index.json", "ok"]]'
expect_json sh.json 'j["summary"]["pos_inf"]' '1'
# the index named twice (as itself and through its directory): once
expect_exit 1 "$NANAUDIT" scan --format json sh/model.safetensors.index.json sh
cp "$T/stdout" sh2.json
expect_json sh2.json 'j["summary"]["files"]' '3'
expect_json sh2.json 'j["summary"]["tensors"]' '2'

# errors in a walk: each is exit 3 with its one-line message
mkdir -p bad/lfs
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 4400000000\n' > bad/lfs/model.safetensors
echo "not data" > bad/notes.txt
cp "$NA_TEST_DATA/detect/zip-other.safetensors" bad/pytorch_model.bin
expect_exit 3 "$NANAUDIT" scan bad
expect_stderr_contains "bad/lfs/model.safetensors: Git LFS pointer: the real file (4400000000 bytes) was not downloaded"
expect_stderr_contains "bad/pytorch_model.bin: zip archive that is neither a PyTorch checkpoint (no DIR/data.pkl) nor a NumPy .npz (no .npy member)"
expect_stderr_lacks "notes.txt"
mkdir loop && ln -s ../loop loop/back
make_st loop/ok.safetensors '{"tensors":[{"name":"a","dtype":"F32","shape":[1],"values":[1]}]}'
# a link to an ancestor is walked once: skipped, not an error (round 29a:
# a harmless latest -> . was exit 3)
expect_exit 0 "$NANAUDIT" scan loop
expect_stdout_contains "skipped: loop/back (symlink loop: directory already being walked as loop)"
mkdir dang && ln -s nowhere dang/x.safetensors
expect_exit 3 "$NANAUDIT" scan dang
expect_stderr_contains "dang/x.safetensors: No such file or directory"
mkdir fifo && mkfifo fifo/p
expect_exit 3 timeout 20 "$NANAUDIT" scan fifo
expect_stderr_contains "fifo: nothing to audit: no supported data file"
expect_stdout_contains "skipped: fifo/p (not a regular file (FIFO))"

# --dtype: every (non-hidden) regular file of the directory is raw data
mkdir rawdir
"$NA_PYTHON" -c 'import numpy as np; np.arange(6, dtype="<f4").tofile("rawdir/a.f32"); np.ones(4, "<f4").tofile("rawdir/.h.f32"); np.array([1, np.nan], "<f4").tofile("rawdir/b.f32")'
expect_exit 1 "$NANAUDIT" scan --format json --dtype F32 rawdir
cp "$T/stdout" raw.json
expect_json raw.json '[(f["path"], f["format"], f["tensors"][0]["elements"]) for f in j["files"]]' \
    '[["rawdir/a.f32", "raw", 6], ["rawdir/b.f32", "raw", 2]]'
expect_json raw.json 'j["summary"]["nan"]' '1'
expect_json raw.json '[(s["path"], s["reason"]) for s in j["skipped"]]' \
    '[["rawdir/.h.f32", "hidden: not walked; give its path to audit it"]]'
expect_exit 0 "$NANAUDIT" scan -q --dtype F32 rawdir/.h.f32

# nothing to audit: an empty directory, a directory of README files
mkdir empty docs && echo hi > docs/README.md
expect_exit 3 "$NANAUDIT" scan empty
expect_exit 3 "$NANAUDIT" scan docs

# a tree 1400 directories deep crashed the walk (SIGSEGV, no report;
# fifteenth fresh-user round): below 256 levels it is an error of its
# own, exit 3, and the files above are audited and reported
mkdir -p "deep/$(printf 'd/%.0s' $(seq 1400))"
cp "$NA_SRC/examples/nan.safetensors" deep/d/d/w.safetensors
expect_exit 3 timeout 60 "$NANAUDIT" scan --report deep.json deep
expect_stderr_contains "d/d/d: directories nested more than 256 deep: not walked"
expect_json deep.json '[j["summary"]["exit_code"], j["summary"]["errors"], [f["path"] for f in j["files"] if f["path"].endswith(".safetensors")]]' \
    '[3, 1, ["deep/d/d/w.safetensors"]]'
pass
