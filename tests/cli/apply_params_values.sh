#!/bin/bash
# Regression (issue 4, fresh-user report): --apply-params accepted values
# no --save-params writes and exited 0 (a std of -1, n_std 0 for a
# feature that is not constant, lo_bound > hi_bound, 1e999). Each is now
# exit 2 "bad --apply-params file: tensor 'T': "KEY"[J] = V ..." before any
# output; a constant feature's own saved file (std 0, MAD 0) still applies.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" -c '
import numpy as np
np.arange(1, 11, dtype="<f8").tofile("a.f64")       # 5 samples x 2 features
np.full(10, 7.0).tofile("c.f64")                     # constant features
' || fail "making inputs"
R=(--dtype F64 --shape 5x2)
"$N" clean "${R[@]}" a.f64 -o z.out --zscore 1 --outliers clip --normalize zscore --save-params z.json >/dev/null ||
    fail "save-params zscore"
"$N" clean "${R[@]}" a.f64 -o m.out --mad 3.5 --outliers clip --normalize minmax --save-params m.json >/dev/null ||
    fail "save-params mad"

# edit KEY[0] of tensor data to VALUE (raw JSON text) into bad.json
edit() {
    "$NA_PYTHON" - "$1" "$2" "$3" <<'PY' || fail "edit $*"
import json, sys
src, key, val = sys.argv[1:]
j = json.load(open(src))
j["tensors"]["data"][key][0] = "@@"
open("bad.json", "w").write(json.dumps(j).replace('"@@"', val))
PY
}
# bad FILE KEY VALUE OPTS... MESSAGE: exit 2, the message, no output
bad() {
    local src="$1" key="$2" val="$3" msg="${*: -1}"
    edit "$src" "$key" "$val"
    expect_exit 2 "$N" clean "${R[@]}" a.f64 -o o --apply-params bad.json "${@:4:$#-4}"
    expect_stderr_contains "bad.json: bad --apply-params file: tensor 'data': $msg"
    [ "$(wc -l <"$T/stderr")" = 1 ] || fail "not one line"
    [ ! -e o ] || fail "output written"
}
Z=(--zscore 1 --outliers clip --normalize zscore)
bad z.json scale -1 "${Z[@]}" '"scale"[0] = -1 is negative (a standard deviation or MAD is >= 0)'
bad z.json n_std -2.5 "${Z[@]}" '"n_std"[0] = -2.5 is negative (a standard deviation or MAD is >= 0)'
bad z.json n_std 0 "${Z[@]}" '"n_std"[0] = 0 is 0 while n_min < n_max (only a constant feature has std 0)'
bad z.json hi_bound -100 "${Z[@]}" '"hi_bound"[0] = -100 is below lo_bound'
# n_mean_lo is the mean's rounding error: n_mean + n_mean_lo rounds to n_mean
bad z.json n_mean_lo 0.5 "${Z[@]}" '"n_mean_lo"[0] = 0.5 is not a rounding error of n_mean (n_mean + n_mean_lo must round to n_mean)'
# non-finite numbers: jansson refuses them while parsing
edit z.json n_mean 1e999
expect_exit 2 "$N" clean "${R[@]}" a.f64 -o o --apply-params bad.json "${Z[@]}"
expect_stderr_contains "bad.json: bad --apply-params file: real number overflow near '1e999' (line 1)"
MM=(--mad 3.5 --outliers clip --normalize minmax)
bad m.json scale -0.5 "${MM[@]}" '"scale"[0] = -0.5 is negative (a standard deviation or MAD is >= 0)'
bad m.json meanad -1 "${MM[@]}" '"meanad"[0] = -1 is negative (a standard deviation or MAD is >= 0)'
bad m.json n_max -50 "${MM[@]}" '"n_max"[0] = -50 is below n_min'
bad m.json hi_bound -1e300 "${MM[@]}" '"hi_bound"[0] = -1.0000000000000001e+300 is below lo_bound'
# (eighteenth fresh-user round) numbers a fit computes from others must be
# what those give: --outliers clip moved flagged values to a lo_bound
# lowered by 100 (exit 0, "verified"); a scale of 0 or 1e308 with the
# bounds apart switched the outlier step off; a --nonfinite value=X fill
# other than X was written; an n_mean of 1e300 made every value -Inf
REST='(no --save-params writes that: an edited or damaged file)'
bad z.json lo_bound -100 "${Z[@]}" "\"lo_bound\"[0] = -100, but center, scale and k 1 give 2.1715728752538097 $REST"
bad z.json scale 0 "${Z[@]}" "\"lo_bound\"[0] = 2.1715728752538097, but center, scale and k 1 give 5 $REST"
bad z.json scale 1e308 "${Z[@]}" "\"lo_bound\"[0] = 2.1715728752538097, but center, scale and k 1 give -1e+308 $REST"
bad z.json n_mean 1e300 "${Z[@]}" "\"n_mean\"[0] = 1.0000000000000001e+300, but a mean lies within n_min .. n_max, here up to 7.8284271247461898 $REST"
bad m.json lo_bound 0 "${MM[@]}" "\"lo_bound\"[0] = 0, but center, scale, meanad and k 3.5 give -5.3780578206078573 $REST"
"$N" clean "${R[@]}" a.f64 -o v.out --nonfinite value=2.5 --save-params v.json >/dev/null ||
    fail "save-params value"
bad v.json nf_fill 99 --nonfinite value=2.5 "\"nf_fill\"[0] = 99, but --nonfinite value=2.5 fills with 2.5 $REST"
# (tenth fresh-user round) a passthrough that is not a boolean was read as
# false, and keys no --save-params writes were ignored
bad z.json passthrough 1 "${Z[@]}" '"passthrough" must be 2 booleans'
bad z.json passthrough null "${Z[@]}" '"passthrough" must be 2 booleans'
"$NA_PYTHON" -c '
import json; j = json.load(open("z.json")); j["tensors"]["data"]["centre"] = [0, 0]
json.dump(j, open("bad.json", "w"))' || fail "edit centre"
expect_exit 2 "$N" clean "${R[@]}" a.f64 -o o --apply-params bad.json "${Z[@]}"
expect_stderr_contains "bad.json: bad --apply-params file: tensor 'data': unknown key \"centre\""
[ ! -e o ] || fail "output written"

# the untouched files still apply, with the same output bytes
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o z2.out --apply-params z.json "${Z[@]}"
cmp -s z.out z2.out || fail "apply-params zscore output differs"
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o m2.out --apply-params m.json "${MM[@]}"
cmp -s m.out m2.out || fail "apply-params mad output differs"

# constant features: std, MAD and MeanAD 0 are what --save-params writes
expect_exit 0 "$N" clean "${R[@]}" c.f64 -o c.out "${Z[@]}" --save-params c.json
expect_stdout_contains "warning: 2 constant feature(s) (std 0) mapped to 0"
expect_json c.json 'j["tensors"]["data"]["n_std"]' '[0.0, 0.0]'
expect_exit 0 "$N" clean "${R[@]}" c.f64 -o c2.out --apply-params c.json "${Z[@]}"
cmp -s c.out c2.out || fail "constant feature round trip differs"
# applied to data that varies, the warning says whose constant it is (it
# read "constant feature(s)", as if this data were: eighteenth round)
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o c3.out --apply-params c.json "${Z[@]}"
expect_stdout_contains "warning: 2 feature(s) constant in the fitted parameters (n_std 0) mapped to 0, whatever their values here"
pass
