#!/bin/bash
# --baseline old.json (issue 5, part 5): a finding fails only when its
# (file path as given, tensor, kind) is absent from the baseline or its
# count grew; a bad baseline is exit 2 before any input is opened.
. "$(dirname "$0")/helpers.sh"

cd "$T" || fail "cd"
make_st a.safetensors '{"tensors": [
  {"name": "w", "dtype": "F32", "shape": [4], "values": [1, "nan", 2, 3]},
  {"name": "v", "dtype": "F32", "shape": [2], "values": [1, "inf"]}]}'
expect_exit 1 "$NANAUDIT" scan --report old.json a.safetensors

# same findings: nothing new, exit 0; counts carried in "baseline"
expect_exit 0 "$NANAUDIT" scan --baseline old.json --report same.json a.safetensors
expect_json same.json '[(f["kind"], f["fails"], f["baseline"]) for t in j["files"][0]["tensors"] for f in t["findings"]]' '[["nan", false, 1], ["pos_inf", false, 1]]'
expect_json same.json 'j["files"][0]["tensors"][0]["findings"][0]["message"]' '"1 NaN value (first at [1]) (baseline: 1)"'
# a count that grew, and a new kind: those fail, the rest does not
make_st a.safetensors '{"tensors": [
  {"name": "w", "dtype": "F32", "shape": [4], "values": ["nan", "nan", 2, 3]},
  {"name": "v", "dtype": "F32", "shape": [2], "values": ["-inf", "inf"]}]}'
expect_exit 1 "$NANAUDIT" scan --baseline old.json --report grew.json a.safetensors
expect_json grew.json '[(f["kind"], f["count"], f["fails"], f.get("baseline")) for t in j["files"][0]["tensors"] for f in t["findings"]]' '[["nan", 2, true, 1], ["pos_inf", 1, false, 1], ["neg_inf", 1, true, null]]'
# fewer: passes
make_st a.safetensors '{"tensors": [{"name": "w", "dtype": "F32", "shape": [4], "values": [1, 1, 2, 3]},
  {"name": "v", "dtype": "F32", "shape": [2], "values": [1, "inf"]}]}'
expect_exit 0 "$NANAUDIT" scan --baseline old.json a.safetensors
# the key is the path as given, without "." components and repeated
# slashes (fifth fresh-user round: a baseline made with a.safetensors
# failed every finding of a CI job that scans ./a.safetensors); a path
# through another directory is another key
expect_exit 0 "$NANAUDIT" scan --baseline old.json ./a.safetensors
expect_exit 0 "$NANAUDIT" scan --baseline old.json .//./a.safetensors
mkdir sub
expect_exit 1 "$NANAUDIT" scan --baseline old.json sub/../a.safetensors
mkdir -p d && cp a.safetensors d/ && expect_exit 1 "$NANAUDIT" scan --report dold.json d/a.safetensors
expect_exit 0 "$NANAUDIT" scan --baseline dold.json ./d//a.safetensors
# an absolute path under the working directory is compared relative to
# it, on either side (README round 24: a job scanning "$PWD/d" had every
# finding new); from another directory it is another path
W=$(pwd -P)
expect_exit 0 "$NANAUDIT" scan --baseline dold.json "$W/d/a.safetensors"
expect_exit 1 "$NANAUDIT" scan --report aold.json "$W//d/./a.safetensors"
expect_json aold.json 'j["files"][0]["path"]' "\"$W//d/./a.safetensors\""
expect_exit 0 "$NANAUDIT" scan --baseline aold.json d/a.safetensors
expect_exit 0 "$NANAUDIT" scan --baseline aold.json "$W/d/a.safetensors"
(cd sub && expect_exit 1 "$NANAUDIT" scan --baseline ../dold.json "$W/d/a.safetensors") || exit 1
(cd sub && expect_exit 1 "$NANAUDIT" scan --baseline ../dold.json ../d/a.safetensors) || exit 1
(cd d && expect_exit 0 "$NANAUDIT" scan --baseline ../aold.json "$W/d/a.safetensors") || exit 1
(cd d && expect_exit 0 "$NANAUDIT" scan --baseline ../aold.json a.safetensors) || exit 1
(cd / && expect_exit 0 "$NANAUDIT" scan --baseline "$W/aold.json" "$W/d/a.safetensors") || exit 1
# a working directory reached through a symbolic link: scripts pass the
# shell's "$PWD/..." (round 26: it was another path than getcwd's)
ln -s "$W" "$T/wlink"
(cd "$T/wlink" && expect_exit 0 "$NANAUDIT" scan --baseline old.json "$PWD/a.safetensors" &&
    expect_exit 1 "$NANAUDIT" scan --baseline old.json "$PWD/d/a.safetensors") || exit 1
# inside a Hugging Face hub cache: the revision is starred before a path
# is made relative, from any directory of the cache (round 26: from
# models--org--name/ or snapshots/ the revision was compared as given)
R1=$(printf '1%.0s' $(seq 40)); R2=$(printf '2%.0s' $(seq 40))
H="$W/hub/models--org--name/snapshots"
mkdir -p "$H/$R1" "$H/$R2"
cp a.safetensors "$H/$R1/m.safetensors" && cp a.safetensors "$H/$R2/m.safetensors"
expect_exit 1 "$NANAUDIT" scan --report habs.json "$H/$R1/m.safetensors"
for dir in "$W" "$W/hub/models--org--name" "$H" "$H/$R1" "$H/$R2"; do
    (cd "$dir" && expect_exit 0 "$NANAUDIT" scan --baseline "$W/habs.json" "$H/$R2/m.safetensors") ||
        fail "from $dir"
done
(cd "$H" && expect_exit 0 "$NANAUDIT" scan --baseline "$W/habs.json" "$R2/m.safetensors" &&
    cd "$R1" && expect_exit 1 "$NANAUDIT" scan --report "$W/hrel.json" m.safetensors &&
    expect_exit 0 "$NANAUDIT" scan --baseline "$W/hrel.json" "$PWD/m.safetensors" &&
    expect_exit 0 "$NANAUDIT" scan --baseline "$W/hrel.json" "$H/$R2/m.safetensors") || exit 1
# another tensor name with the same finding is new
make_st b.safetensors '{"tensors": [{"name": "w2", "dtype": "F32", "shape": [1], "values": ["nan"]}]}'
cp b.safetensors a.safetensors
expect_exit 1 "$NANAUDIT" scan --baseline old.json a.safetensors

# bad baselines: exit 2, nothing opened
badb() { # MESSAGE <<< content
    cat >bad.json
    expect_exit 2 "$NANAUDIT" scan --baseline bad.json does-not-exist.safetensors
    expect_stderr_contains "nanaudit: --baseline: bad.json$1"
    expect_stderr_lacks "does-not-exist"
}
printf '{"files": [\n  1,\n' | badb ":3: not valid JSON:"
printf '{"a": 1, "a": 2}' | badb ":1: not valid JSON: duplicate object key"
printf '[]' | badb ': not a nanaudit JSON report (needs "schema_version" and "files")'
printf '{"schema_version": 2, "files": []}' | badb ": schema_version 2 is not 1"
printf '{"schema_version": 1, "files": [{"tensors": []}]}' | badb ': files[0] lacks a "path" string or a "tensors" list'
printf '{"schema_version": 1, "files": [{"path": "x", "tensors": [{}]}]}' | badb ': files[0].tensors[0] lacks a "name" string'
printf '{"schema_version": 1, "files": [{"path": "x", "tensors": [{"name": "w", "findings": 3}]}]}' | badb ': files[0].tensors[0].findings is not a list'
printf '{"schema_version": 1, "files": [{"path": "x", "tensors": [{"name": "w", "findings": [{"kind": "boom", "count": 1}]}]}]}' | badb ': files[0].tensors[0].findings[0] needs a known "kind" and a "count" >= 0'
printf '{"schema_version": 1, "files": [{"path": "x", "tensors": [{"name": "w", "findings": [{"kind": "nan", "count": -1}]}]}]}' | badb ': files[0].tensors[0].findings[0] needs a known "kind" and a "count" >= 0'
expect_exit 2 "$NANAUDIT" scan --baseline missing.json a.safetensors
expect_stderr_contains "nanaudit: --baseline: cannot read 'missing.json': No such file or directory"
# an empty report is a valid baseline: everything is new
printf '{"schema_version": 1, "files": []}' >empty.json
expect_exit 1 "$NANAUDIT" scan --baseline empty.json a.safetensors

# a path that is not UTF-8 is \xHH text in the reports: a report of it
# used as the baseline matched nothing, so its findings failed on every
# run (fifteenth fresh-user round); the baseline now compares that form
mkdir bl
"$NA_PYTHON" - <<'PY' || fail "making bl/"
import numpy as np
from safetensors.numpy import save_file
x = np.array([1.0, np.nan], np.float32)
save_file({"w": x}, b"bl/bad\xffname.safetensors".decode("utf-8", "surrogateescape"))
save_file({"w": x}, "bl/ok.safetensors")
PY
expect_exit 1 "$NANAUDIT" scan -q --report bl.json bl
expect_exit 0 "$NANAUDIT" scan --format json --baseline bl.json bl
expect_json "$T/stdout" '[(f["path"], f["tensors"][0]["findings"][0]["fails"], f["tensors"][0]["findings"][0]["baseline"]) for f in j["files"]]' \
    '[["bl/bad\\xffname.safetensors", false, 1], ["bl/ok.safetensors", false, 1]]'
pass
