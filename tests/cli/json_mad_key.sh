#!/bin/bash
# Issue 4, fresh-user report: docs/json-schema.md says the top-level `mad`
# key is present only with `scan --mad K` (an *extra key*, like
# `device_note`), and the tensor `outliers` object has median/mad/meanad
# only when its method is "mad". Checked in the JSON of every scan path
# that writes it (--format json and --report), with and without --mad.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
make_st m.safetensors '{"tensors":[{"name":"w","dtype":"F32","shape":[5],"values":[1,2,3,4,100]},{"name":"n","dtype":"F32","shape":[2],"values":["nan","nan"]}]}'
N="$NANAUDIT"

expect_exit 1 "$N" scan --format json --report r.json m.safetensors  # NaN: exit 1
cp "$T/stdout" s.json
for f in s.json r.json; do
    expect_json $f '"mad" in j' 'false'
    expect_json $f '[sorted(t["outliers"]) for t in j["files"][0]["tensors"]]' \
        '[["count", "locations", "method", "threshold"], ["count", "locations", "method", "threshold"]]'
done
expect_exit 1 "$N" scan --mad 3.5 --format json m.safetensors
cp "$T/stdout" m.json
expect_json m.json 'j["mad"]' '3.5'
# a tensor without finite values: the keys are there, null
expect_json m.json '[[t["outliers"]["median"], t["outliers"]["mad"]] for t in j["files"][0]["tensors"]]' \
    '[[3.0, 1.0], [null, null]]'
pass
