#!/bin/bash
# --format json and --report: the keys of issue 2 section 6 with values
# checked against hand-computed references, nulls for tensors without
# finite values, --report overwrite, and byte-identical output for
# --threads 1 and --threads 2.
. "$(dirname "$0")/helpers.sh"

make_st "$T/a.safetensors" '{"metadata":{"format":"pt"},"tensors":[
 {"name":"w","dtype":"F32","shape":[2,3],"values":[1,2,3,4,5,"nan"]},
 {"name":"allnan","dtype":"F32","shape":[3],"bits":[2143289344,4290772992,2139095041]},
 {"name":"e","dtype":"F8_E4M3","shape":[2,0]},
 {"name":"s","dtype":"F64","shape":[],"values":[2.5]}]}'

expect_exit 1 "$NANAUDIT" scan --format json "$T/a.safetensors"
J="$T/a.json"; cp "$T/stdout" "$J"
expect_json "$J" 'j["schema_version"]' '1'
expect_json "$J" 'j["tool"]' '{"name": "nanaudit", "version": "0.1.0"}'
expect_json "$J" 'j["device"]' '"cpu"'
expect_json "$J" 'sorted(j["files"][0].keys())' '["error", "format", "notes", "path", "status", "tensors"]'
expect_json "$J" 'j["files"][0]["format"]' '"safetensors"'
expect_json "$J" '[t["name"] for t in j["files"][0]["tensors"]]' '["w", "allnan", "e", "s"]'
W='j["files"][0]["tensors"][0]'
expect_json "$J" "sorted($W.keys()) == sorted('name status dtype byte_order shape elements nan pos_inf neg_inf zeros subnormal finite min max abs_max mean std outliers nan_locations inf_locations findings'.split())" 'true'
expect_json "$J" "[$W[k] for k in ('dtype','byte_order','shape','elements','nan','finite','min','max','abs_max','mean')]" \
    '["F32", "little", [2, 3], 6, 1, 5, 1.0, 5.0, 5.0, 3.0]'
expect_json "$J" "abs($W['std'] - 2 ** 0.5) < 1e-15" 'true'
expect_json "$J" "$W['nan_locations']" '[[1, 2]]'
expect_json "$J" "$W['outliers']" '{"method": "zscore", "threshold": 6.0, "count": 0, "locations": []}'
expect_json "$J" "[(f['kind'], f['count'], f['fails']) for f in $W['findings']]" '[["nan", 1, true]]'
A='j["files"][0]["tensors"][1]'
expect_json "$J" "[$A[k] for k in ('nan','finite','min','max','abs_max','mean','std')]" \
    '[3, 0, null, null, null, null, null]'
expect_json "$J" "$A['nan_locations']" '[[0], [1], [2]]'
E='j["files"][0]["tensors"][2]'
expect_json "$J" "[$E[k] for k in ('shape','elements','min','std','nan_locations')]" '[[2, 0], 0, null, null, []]'
expect_json "$J" 'j["files"][0]["tensors"][3]["shape"]' '[]'
expect_json "$J" 'j["files"][0]["tensors"][3]["mean"]' '2.5'
expect_json "$J" 'j["files"][0]["tensors"][3]["std"]' '0.0'
expect_json "$J" 'j["summary"]' '{"files": 1, "tensors": 4, "skipped_tensors": 0, "elements": 10, "nan": 4, "pos_inf": 0, "neg_inf": 0, "outliers": 0, "errors": 0, "failed": true, "exit_code": 1}'
expect_json "$J" 'j["skipped"]' '[]'

# outliers: 99 zeros and 1000 -> mean 10, std 99.4987..., |990| > 6 std
vals="$(printf '0,%.0s' $(seq 99))1000"
make_st "$T/o.safetensors" "{\"tensors\":[{\"name\":\"o\",\"dtype\":\"F32\",\"shape\":[10,10],\"values\":[$vals]}]}"
expect_exit 0 "$NANAUDIT" scan --format json "$T/o.safetensors"
cp "$T/stdout" "$T/o.json"
expect_json "$T/o.json" 'j["files"][0]["tensors"][0]["outliers"]["count"]' '1'
expect_json "$T/o.json" 'j["files"][0]["tensors"][0]["outliers"]["locations"]' '[[9, 9]]'
expect_json "$T/o.json" 'j["files"][0]["tensors"][0]["findings"][0]["fails"]' 'false'
expect_json "$T/o.json" 'j["summary"]["outliers"]' '1'
expect_exit 1 "$NANAUDIT" scan --fail-on nan,inf,outliers "$T/o.safetensors"
# --zscore 0 disables the test; --zscore 20 finds nothing
expect_exit 0 "$NANAUDIT" scan --format json --zscore 0 "$T/o.safetensors"
cp "$T/stdout" "$T/z0.json"
expect_json "$T/z0.json" 'j["files"][0]["tensors"][0]["outliers"]' 'null'
expect_json "$T/z0.json" 'j["zscore"]' '0.0'
expect_exit 0 "$NANAUDIT" scan --format json --zscore 20 "$T/o.safetensors"
cp "$T/stdout" "$T/z20.json"
expect_json "$T/z20.json" 'j["files"][0]["tensors"][0]["outliers"]["count"]' '0'

# --max-locations N keeps the first N, row-major
make_st "$T/n.safetensors" '{"tensors":[{"name":"n","dtype":"F16","shape":[2,2],"values":["nan","nan",1,"nan"]}]}'
expect_exit 1 "$NANAUDIT" scan --format json --max-locations 2 "$T/n.safetensors"
cp "$T/stdout" "$T/n.json"
expect_json "$T/n.json" 'j["files"][0]["tensors"][0]["nan_locations"]' '[[0, 0], [0, 1]]'
expect_json "$T/n.json" 'j["max_locations"]' '2'
expect_exit 1 "$NANAUDIT" scan --format json --max-locations 0 "$T/n.safetensors"
cp "$T/stdout" "$T/n0.json"
expect_json "$T/n0.json" 'j["files"][0]["tensors"][0]["nan_locations"]' '[]'
expect_json "$T/n0.json" 'j["files"][0]["tensors"][0]["nan"]' '3'

# --report writes JSON (text stays on stdout) and overwrites an old file
printf 'old content that is much longer than nothing %0500d' 0 > "$T/r.json"
expect_exit 1 "$NANAUDIT" scan --report "$T/r.json" "$T/a.safetensors"
expect_stdout_contains "FAILED (exit 1)"
cmp -s "$T/r.json" "$J" || fail "--report differs from --format json"
expect_exit 0 "$NANAUDIT" scan --report="$T/r.json" "$T/o.safetensors"
cmp -s "$T/r.json" "$T/o.json" || fail "--report was not overwritten"

# identical JSON for any thread count
expect_exit 1 "$NANAUDIT" scan --format json --threads 1 "$T/a.safetensors" "$T/o.safetensors"
cp "$T/stdout" "$T/t1.json"
expect_exit 1 "$NANAUDIT" scan --format json --threads 2 "$T/a.safetensors" "$T/o.safetensors"
cmp -s "$T/stdout" "$T/t1.json" || fail "--threads 1 and --threads 2 differ"
pass
