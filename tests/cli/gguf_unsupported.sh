#!/bin/bash
# A GGUF file (llama.cpp; magic "GGUF", https://github.com/ggml-org/ggml
# docs/gguf.md) is named as such and refused as not supported yet (exit
# 3), also inside a directory and under a name without .gguf. Found by the
# fourth fresh-user round: it was "unrecognised content ... give --dtype
# to read raw data", a hint that audits the header and the quantized
# blocks as one raw array of numbers. README: "a GGUF reader is planned".
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
MSG="GGUF model file (llama.cpp): not supported yet (a GGUF reader is planned); its tensors are not audited"
# GGUF v3 header: magic, u32 version, u64 tensor count, u64 metadata count
printf 'GGUF\003\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >v3.gguf
cp "$NA_TEST_DATA/real/gguf/malformed/llamacpp-fork-ggml-vocab-bert-bge-utf8mangled.gguf" vocab.gguf ||
    fail "copying the real file"

for f in v3.gguf vocab.gguf; do
    expect_exit 3 "$N" scan "$f"
    expect_stderr_contains "nanaudit: $f: $MSG"
    assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines for $f"
    expect_stderr_lacks "--dtype"
    expect_exit 3 "$N" info "$f"
    expect_stderr_contains "nanaudit: $f: $MSG"
done

# in a directory, named like a PyTorch file or not at all: an error, not
# a skip (a text file beside them is skipped)
mkdir d
cp v3.gguf d/model.bin
cp v3.gguf d/weights
printf 'not data\n' >d/notes.txt
expect_exit 3 "$N" scan --format json d
expect_json "$T/stdout" '[(f["path"], f["status"], f["error"]) for f in j["files"]]' \
    "[[\"d/model.bin\", \"error\", \"$MSG\"], [\"d/weights\", \"error\", \"$MSG\"]]"
pass
