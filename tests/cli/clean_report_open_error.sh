#!/bin/bash
# clean_report_open_error.sh - an input clean cannot open is exit 3 with
# one line on stderr, and the --report (and --format json, and the text
# report) still say it: "error" holds the line's text, tensors is empty,
# written false, exit_code 3 (round 36a: no report was written, though a
# CI job keeps it as its artifact). Nothing appears under OUT.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
json_str() { "$NA_PYTHON" -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
printf 'junk' > junk.safetensors
"$NA_PYTHON" -c '
import json, struct
h = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
open("short.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + b"\0" * 10)' ||
    fail "short.safetensors"
mkdir out
for f in junk.safetensors short.safetensors missing.safetensors \
    "$NA_TEST_DATA/real/netcdf/nc4py-ubyte-netcdf3.nc"; do
    expect_exit 3 "$NANAUDIT" clean "$f" -o out/o.safetensors --report r.json
    assert_eq "$(wc -l < stderr)" 1 "stderr lines for $f"
    line=$(cat stderr)
    msg=${line#"nanaudit: $f: "}
    [ "$msg" != "$line" ] || fail "the line does not name $f: $line"
    expect_json r.json 'j["error"]' "$(json_str "$msg")"
    expect_json r.json 'j["exit_code"]' 3
    expect_json r.json 'j["written"]' false
    expect_json r.json 'j["tensors"]' '[]'
    expect_json r.json 'j["input"]' "$(json_str "$f")"
    assert_eq "$(tail -1 stdout)" "error: $msg; nothing written" "text report of $f"
    expect_exit 3 "$NANAUDIT" clean "$f" -o out/o.safetensors --format json
    cp stdout s.json
    expect_json s.json 'j["error"]' "$(json_str "$msg")"
    assert_eq "$(ls -A out)" "" "files left for $f"
done
# not a guard rail's refusal
expect_json r.json 'j["refused"]' null
# the error of a good input is null
"$NA_PYTHON" -c '
import numpy as np
np.save("ok.npy", np.array([1.0, 2.0, 3.0]))' || fail "ok.npy"
expect_exit 0 "$NANAUDIT" clean ok.npy -o out/ok.npy --report ok.json
expect_json ok.json 'j["error"]' null
pass
