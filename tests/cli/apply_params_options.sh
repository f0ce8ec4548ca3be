#!/bin/bash
# Regression (issue 4, fresh-user report): the params file recorded no
# options, so a fit with --zscore 3 applied with --mad 3 took mean/std for
# median/MAD without a word. --save-params now writes "options"
# (schema_version 2); an --apply-params run whose outlier method or K,
# normalization, or non-finite fill differs from the fit is exit 2 with
# one line naming the option and what the file was fitted with. The
# --outliers action and --feature-range are applied from the command line
# and may differ. A schema_version 1 file (no options) still applies,
# with a warning that its options cannot be checked.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" -c '
import numpy as np
x = np.arange(1, 21, dtype="<f8").reshape(10, 2)
x[3, 0] = np.nan
x.tofile("a.f64")
' || fail "making inputs"
R=(--dtype F64 --shape 10x2)
F=(--zscore 3 --outliers clip --normalize minmax --nonfinite mean)
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o f.out "${F[@]}" --save-params f.json
expect_json f.json 'j["schema_version"]' '2'
expect_json f.json 'j["options"]' '{"samples": true, "global": false, "nonfinite": "mean", "nonfinite_value": null, "outlier_method": "zscore", "k": 3.0, "outliers": "clip", "normalize": "minmax", "feature_range": [0.0, 1.0]}'
"$N" clean "${R[@]}" a.f64 -o v.out --nonfinite value=2.5 --save-params v.json >/dev/null || fail "save value"
expect_json v.json 'j["options"]' '{"samples": true, "global": false, "nonfinite": "value", "nonfinite_value": 2.5, "outlier_method": null, "k": null, "outliers": null, "normalize": null, "feature_range": null}'

# differs OPTS... MESSAGE: exit 2 with one line, no output
differs() {
    local msg="${*: -1}"
    expect_exit 2 "$N" clean "${R[@]}" a.f64 -o o --apply-params "${@:1:$#-1}"
    expect_stderr_contains "$msg"
    [ "$(wc -l <"$T/stderr")" = 1 ] || fail "not one line"
    [ ! -e o ] || fail "output written"
}
WHY='(the sample axis and --global, the outlier method and K, --normalize and a --nonfinite fill must be those of the fit)'
differs f.json --mad 3 --outliers clip --normalize minmax --nonfinite mean \
    "f.json: --apply-params: the file was fitted with --zscore 3, this run has --mad 3 $WHY"
differs f.json --zscore 2.5 --outliers clip --normalize minmax --nonfinite mean \
    "f.json: --apply-params: the file was fitted with --zscore 3, this run has --zscore 2.5 $WHY"
# (no --outliers here: --outliers without --zscore/--mad is a usage error
# of its own, tests/cli/clean_idle_options.sh)
differs f.json --normalize minmax --nonfinite mean \
    "f.json: --apply-params: the file was fitted with --zscore 3, this run has no --zscore or --mad $WHY"
differs f.json --zscore 3 --outliers clip --normalize zscore --nonfinite mean \
    "f.json: --apply-params: the file was fitted with --normalize minmax, this run has --normalize zscore $WHY"
differs f.json --zscore 3 --outliers clip --nonfinite mean \
    "f.json: --apply-params: the file was fitted with --normalize minmax, this run has no --normalize $WHY"
differs f.json --zscore 3 --outliers clip --normalize minmax --nonfinite zero \
    "f.json: --apply-params: the file was fitted with --nonfinite mean, this run has --nonfinite zero $WHY"
differs f.json --zscore 3 --outliers clip --normalize minmax \
    "f.json: --apply-params: the file was fitted with --nonfinite mean, this run has --nonfinite drop $WHY"
differs v.json --nonfinite value=3 \
    "v.json: --apply-params: the file was fitted with --nonfinite value=2.5, this run has --nonfinite value=3 $WHY"
# the sample axis and --global give the numbers their meaning too: a 1-D
# fit's one statistic applied with --global scaled every column of a
# (200, 4) tensor, exit 0 (eighteenth fresh-user round)
differs f.json "${F[@]}" --global \
    "f.json: --apply-params: the file was fitted with --samples, this run has --samples --global $WHY"
differs f.json --zscore 3 --outliers clip --normalize minmax --nonfinite zero --no-samples \
    "f.json: --apply-params: the file was fitted with --samples, this run has --no-samples $WHY"

# same options: the same bytes; another --outliers action and
# --feature-range are the run's choice
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o f2.out --apply-params f.json "${F[@]}"
cmp -s f.out f2.out || fail "round trip differs"
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o f3.out --apply-params f.json \
    --zscore 3 --outliers nan --normalize minmax --nonfinite mean --feature-range -1:1
"$NA_PYTHON" -c '
import numpy as np, sys
a = np.fromfile("f.out"); b = np.fromfile("f3.out")
sys.exit(not np.allclose(b, 2 * a - 1, rtol=0, atol=1e-15))' || fail "--feature-range -1:1 not applied"

# a malformed "options" object
"$NA_PYTHON" -c '
import json; d = json.load(open("f.json")); d["options"]["outlier_method"] = "iqr"
json.dump(d, open("bad.json", "w"))' || fail "edit"
expect_exit 2 "$N" clean "${R[@]}" a.f64 -o o --apply-params bad.json "${F[@]}"
expect_stderr_contains 'bad.json: bad --apply-params file: "options": "outlier_method" must be "zscore", "mad" or null'

# every option is read strictly: a value of the wrong type or an unknown
# key (they were taken, exit 0)
for edit in 'o["samples"] = "yes"' 'o["global"] = 3' 'o["outliers"] = 5' 'o["outliers"] = "zap"' \
            'o["feature_range"] = "abc"' 'o["feature_range"] = [1, 0]' 'o["colour"] = 1'; do
    "$NA_PYTHON" -c "
import json; d = json.load(open('f.json')); o = d['options']; $edit
json.dump(d, open('bad.json', 'w'))" || fail "edit"
    expect_exit 2 "$N" clean "${R[@]}" a.f64 -o o --apply-params bad.json "${F[@]}"
    case $edit in
    *samples*|*global*) want='"samples" and "global" must be true or false' ;;
    *outliers*) want='"outliers" must be "drop", "clip", "nan" or "mean" with an outlier method, else null' ;;
    *feature_range*) want='"feature_range" must be [LO, HI] with LO < HI with "normalize": "minmax", else null' ;;
    *) want='unknown key "colour"' ;;
    esac
    expect_stderr_contains "bad.json: bad --apply-params file: \"options\": $want"
    [ ! -e o ] || fail "output written ($edit)"
done

# schema_version 1 (before "options"): applies as before, with a warning
"$NA_PYTHON" -c '
import json; d = json.load(open("f.json")); del d["options"]; d["schema_version"] = 1
json.dump(d, open("old.json", "w"))' || fail "edit"
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o f4.out --apply-params old.json "${F[@]}"
expect_stderr_contains "warning: old.json: schema_version 1 records no options; the outlier method, K, --normalize and --nonfinite of this run are taken as the fit's"
cmp -s f.out f4.out || fail "schema_version 1 output differs"
pass
