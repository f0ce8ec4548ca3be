#!/bin/bash
# Directory inputs: files that are plainly not data are listed under the
# top-level "skipped" (JSON) / "skipped:" lines (text), are not errors and
# do not count as files; a directory with nothing to audit is exit 3.
. "$(dirname "$0")/helpers.sh"

mkdir -p "$T/d/sub"
make_st "$T/d/sub/model.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[2],"values":[1,2]}]}'
echo '{"hidden_size": 8}' >"$T/d/config.json"
echo 'a model' >"$T/d/README.md"
expect_exit 0 "$NANAUDIT" scan --format json "$T/d"
cp "$T/stdout" "$T/d.json"
expect_json "$T/d.json" '[f["path"] for f in j["files"]]' "[\"$T/d/sub/model.safetensors\"]"
expect_json "$T/d.json" '[s["path"] for s in j["skipped"]]' "[\"$T/d/README.md\", \"$T/d/config.json\"]"
expect_json "$T/d.json" 'all(isinstance(s["reason"], str) and s["reason"] for s in j["skipped"])' 'true'
expect_json "$T/d.json" 'j["summary"]["files"]' '1'
expect_exit 0 "$NANAUDIT" scan "$T/d"
expect_stdout_contains "skipped: $T/d/config.json ("
expect_stdout_contains "1 file, 1 tensor, 2 elements"
expect_exit 0 "$NANAUDIT" scan -q "$T/d"
expect_stdout_lacks "skipped:"

# only non-data files: nothing audited -> 3, the skipped files still listed
rm "$T/d/sub/model.safetensors"
expect_exit 3 "$NANAUDIT" scan --format json "$T/d"
expect_stderr_contains "nanaudit: $T/d: nothing to audit: no supported data file"
cp "$T/stdout" "$T/none.json"
expect_json "$T/none.json" 'len(j["skipped"])' '2'
expect_json "$T/none.json" 'j["summary"]["exit_code"]' '3'
# a FIFO or socket in a folder is skipped, not an error (tenth fresh-user
# round), unless its name claims a checkpoint; named, it is an error
mkdir "$T/sp"
make_st "$T/sp/w.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[2],"values":[1,2]}]}'
mkfifo "$T/sp/fifo"
"$NA_PYTHON" -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$T/sp/sock" ||
    fail "making the socket"
expect_exit 0 "$NANAUDIT" scan --format json "$T/sp"
cp "$T/stdout" "$T/sp.json"
expect_json "$T/sp.json" '[(s["path"][-4:], s["reason"]) for s in j["skipped"]]' \
    '[["fifo", "not a regular file (FIFO)"], ["sock", "not a regular file (socket)"]]'
expect_exit 3 "$NANAUDIT" scan "$T/sp/fifo"
expect_stderr_contains "nanaudit: $T/sp/fifo: not a regular file (FIFO)"
mkfifo "$T/sp/x.safetensors"
expect_exit 3 "$NANAUDIT" scan "$T/sp"
expect_stderr_contains "nanaudit: $T/sp/x.safetensors: not a regular file (FIFO)"
# info names the input too (tenth fresh-user round: no path)
expect_exit 3 "$NANAUDIT" info "$T/d"
expect_stderr_contains "nanaudit: $T/d: nothing to show: no supported data file"
expect_exit 3 "$NANAUDIT" info "$T/d" "$T/d/sub"
expect_stderr_contains "nanaudit: nothing to show: no supported data file in the 2 inputs"
pass
