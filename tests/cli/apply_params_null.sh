#!/bin/bash
# Regression (issue 4, fresh-user report): --apply-params took a null
# where --save-params writes a number (jq '.tensors.data.n_mean[0]=null')
# and wrote every value of feature 0 as NaN (exit 1). A null is what
# --save-params writes for a statistic the run does not use (center and
# scale without --zscore/--mad, nf_fill with --nonfinite drop, meanad with
# --zscore) and for a passthrough feature (no finite value): those still
# apply. Anywhere else it is exit 2, one line naming the file, tensor,
# key, feature and the option that uses it, before any output.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" -c '
import numpy as np
np.arange(1, 11, dtype="<f8").tofile("a.f64")       # 5 samples x 2 features
x = np.arange(1, 11, dtype="<f8").reshape(5, 2)
x[:, 1] = np.nan                                     # feature 1: no finite value
x.tofile("p.f64")
' || fail "making inputs"
R=(--dtype F64 --shape 5x2)
NZ=(--normalize zscore)
"$N" clean "${R[@]}" a.f64 -o z.out "${NZ[@]}" --save-params z.json >/dev/null || fail "save zscore"
M=(--mad 3 --outliers clip --nonfinite zero)
"$N" clean "${R[@]}" a.f64 -o m.out "${M[@]}" --save-params m.json >/dev/null || fail "save mad"

# set KEY[J] of tensor data in SRC to null, into bad.json
null_at() {
    "$NA_PYTHON" - "$@" <<'PY' || fail "edit $*"
import json, sys
src, key, j = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(src))
d["tensors"]["data"][key][j] = None
json.dump(d, open("bad.json", "w"))
PY
}
# refused SRC KEY J MESSAGE OPTS...: exit 2, one line, no output
refused() {
    local src="$1" key="$2" j="$3" msg="$4"
    shift 4
    null_at "$src" "$key" "$j"
    expect_exit 2 "$N" clean "${R[@]}" a.f64 -o o --apply-params bad.json "$@"
    expect_stderr_contains "bad.json: bad --apply-params file: tensor 'data': $msg"
    [ "$(wc -l <"$T/stderr")" = 1 ] || fail "not one line"
    [ ! -e o ] || fail "output written"
}
refused z.json n_mean 0 '"n_mean"[0] is null, but feature 0 is not passthrough and --normalize zscore uses it' "${NZ[@]}"
refused z.json n_std 1 '"n_std"[1] is null, but feature 1 is not passthrough and --normalize zscore uses it' "${NZ[@]}"
"$N" clean "${R[@]}" a.f64 -o mm.out --normalize minmax --save-params mm.json >/dev/null ||
    fail "save minmax"
refused mm.json n_max 1 '"n_max"[1] is null, but feature 1 is not passthrough and --normalize minmax uses it' --normalize minmax
refused mm.json n_min 0 '"n_min"[0] is null, but feature 0 is not passthrough and --normalize minmax uses it' --normalize minmax
# zscore reads n_mean and n_std, not n_max: the file applies, same bytes
null_at z.json n_max 1
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o z3.out --apply-params bad.json "${NZ[@]}"
cmp -s z.out z3.out || fail "zscore with n_max null differs"
refused m.json center 0 '"center"[0] is null, but feature 0 is not passthrough and --mad 3 uses it' "${M[@]}"
refused m.json meanad 1 '"meanad"[1] is null, but feature 1 is not passthrough and --mad 3 uses it' "${M[@]}"
refused m.json nf_fill 0 '"nf_fill"[0] is null, but feature 0 is not passthrough and --nonfinite zero uses it' "${M[@]}"

# legitimate nulls: no outlier step (center..fill2 null) and
# --nonfinite drop (nf_fill null) - the file applies, same bytes
expect_json z.json 'j["tensors"]["data"]["center"]' '[null, null]'
expect_json z.json 'j["tensors"]["data"]["nf_fill"]' '[null, null]'
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o z2.out --apply-params z.json "${NZ[@]}"
cmp -s z.out z2.out || fail "zscore round trip differs"
expect_json m.json 'j["tensors"]["data"]["n_mean"]' '[null, null]'
# steps the run does not have are null (round 41b): fill2 is --outliers
# mean's, n_mean_lo step 3's
expect_json m.json '[j["tensors"]["data"][k] for k in ("fill2", "n_mean_lo")]' '[[null, null], [null, null]]'
expect_json m.json 'j["tensors"]["data"]["lo_bound"][0] is not None' 'true'
expect_exit 0 "$N" clean "${R[@]}" a.f64 -o m2.out --apply-params m.json "${M[@]}"
cmp -s m.out m2.out || fail "mad round trip differs"

# a passthrough feature: every statistic of feature 1 is null, and the
# file applies (exit 1: its NaN remain, as in the fit)
expect_exit 1 "$N" clean "${R[@]}" p.f64 -o p.out "${NZ[@]}" --save-params p.json
expect_json p.json 'j["tensors"]["data"]["passthrough"]' '[false, true]'
expect_json p.json 'j["tensors"]["data"]["n_min"]' '[1.0, null]'
expect_exit 1 "$N" clean "${R[@]}" p.f64 -o p2.out --apply-params p.json "${NZ[@]}"
expect_stdout_contains "warning: 1 feature(s) without any finite value passed through unchanged"
cmp -s p.out p2.out || fail "passthrough round trip differs"
# ... but not the null of feature 0 beside it
"$NA_PYTHON" -c '
import json; d = json.load(open("p.json")); d["tensors"]["data"]["n_mean"][0] = None
json.dump(d, open("bad.json", "w"))' || fail "edit p.json"
expect_exit 2 "$N" clean "${R[@]}" p.f64 -o o --apply-params bad.json "${NZ[@]}"
expect_stderr_contains "bad.json: bad --apply-params file: tensor 'data': \"n_mean\"[0] is null, but feature 0 is not passthrough and --normalize zscore uses it"
# a feature without finite values when fitted (passthrough) that has some
# here: no parameters for it, exit 2 (it was written raw beside
# normalized ones, with a false "passed through" warning)
"$NA_PYTHON" -c "
import numpy as np
tr = np.random.default_rng(0).normal(size=(100, 3)); tr[:, 0] = np.nan; np.save('ptr.npy', tr)
np.save('pte.npy', np.random.default_rng(1).normal(size=(50, 3)))" || fail "making ptr/pte"
expect_exit 1 "$NANAUDIT" clean --nonfinite keep --normalize zscore --save-params ptp.json ptr.npy -o ptro.npy
expect_exit 2 "$NANAUDIT" clean --nonfinite keep --normalize zscore --apply-params ptp.json pte.npy -o pteo.npy
expect_stderr_contains "nanaudit: pte.npy: data: feature 0 had no finite value when the parameters were fitted, and has 50 here: they cannot clean it (fit again, or --exclude it)"
[ ! -e pteo.npy ] || fail "pteo.npy written"
# ... but with --nonfinite drop only its finite values in samples step 1
# keeps count: one in a sample that goes for another feature's NaN needs
# no parameter (round 39a: refused, "has 1 here"); one in a kept sample is
"$NA_PYTHON" -c "
import numpy as np
a = np.arange(20, dtype='f4').reshape(10, 2); a[:, 1] = np.nan; np.save('pf.npy', a)
d = a.copy(); d[0, 1] = 5.0; d[0, 0] = np.nan; np.save('pd.npy', d)
k = a.copy(); k[0, 1] = 5.0; k[1, 0] = np.nan; np.save('pk.npy', k)" || fail "making pf/pd/pk"
expect_exit 1 "$NANAUDIT" clean --normalize minmax --save-params pp.json pf.npy -o pfo.npy
expect_exit 1 "$NANAUDIT" clean --normalize minmax --apply-params pp.json pd.npy -o pdo.npy
expect_stdout_contains "warning: 1 feature(s) without any finite value passed through unchanged"
"$NA_PYTHON" -c "
import numpy as np
y = np.load('pdo.npy'); x = np.arange(2, 20, 2, dtype=np.float64) / 18
assert y.shape == (9, 2) and np.isnan(y[:, 1]).all() and np.allclose(y[:, 0], x, atol=1e-7), y" ||
    fail "pdo.npy"
expect_exit 2 "$NANAUDIT" clean --normalize minmax --apply-params pp.json pk.npy -o pko.npy
expect_stderr_contains "pk.npy: data: feature 1 had no finite value when the parameters were fitted, and has 1 here"
# minmax reads n_min and n_max only: values whose variance overflows
# (1e200) or underflows (1e-300) save n_std null, and the file applies to
# the same data with the same output (it was refused: "minmax uses it",
# round 36b)
for s in 1e200 1e-300; do
    "$NA_PYTHON" -c "import numpy as np; np.save('v.npy', np.array([1, 2, 3, 1.5]) * $s)" ||
        fail "v.npy"
    expect_exit 0 "$NANAUDIT" clean --normalize minmax --save-params v.json v.npy -o v1.npy --force
    expect_json v.json 'j["tensors"]["data"]["n_std"]' '[null]'
    expect_exit 0 "$NANAUDIT" clean --normalize minmax --apply-params v.json v.npy -o v2.npy --force
    cmp -s v1.npy v2.npy || fail "minmax round trip at $s differs"
    "$NA_PYTHON" -c "
import numpy as np
x = np.load('v.npy')
want = (x - x.min()) / (x.max() - x.min())
assert np.allclose(np.load('v2.npy'), want, rtol=1e-12, atol=1e-12), np.load('v2.npy')" ||
        fail "v2.npy at $s"
done
# a fit that dropped every row (--global with an all-NaN feature: each
# row holds a NaN) saves nulls for the later steps; the same data drops
# every row again, so nothing takes them: the file applies, same bytes
# (round 36b: refused, "300 sample(s) here", counted before step 1). Data
# whose rows are kept would take them: refused, naming the rows kept.
"$NA_PYTHON" -c "
import numpy as np
x = np.random.default_rng(2).normal(size=(300, 4)); x[:, 2] = np.nan; np.save('g.npy', x)
np.save('gk.npy', np.random.default_rng(3).normal(size=(40, 4)))" || fail "g.npy"
G=(--global --mad 2.5 --outliers clip --normalize zscore --max-drop-fraction 1)
expect_exit 0 "$NANAUDIT" clean "${G[@]}" --save-params g.json g.npy -o g1.npy
expect_json g.json 'j["tensors"]["data"]["center"]' '[null]'
expect_exit 0 "$NANAUDIT" clean "${G[@]}" --apply-params g.json g.npy -o g2.npy
cmp -s g1.npy g2.npy || fail "the all-dropped round trip differs"
expect_exit 0 "$NA_PYTHON" -c 'import numpy as np; assert np.load("g2.npy").shape == (0, 4)'
expect_exit 2 "$NANAUDIT" clean "${G[@]}" --apply-params g.json gk.npy -o gk.npy.out
expect_stderr_contains "g.json: bad --apply-params file: tensor 'data': \"center\"[0] is null, but feature 0 is not passthrough and --mad 2.5 uses it (40 sample(s) kept here; null: the fit had no value of the feature at that step)"
[ ! -e gk.npy.out ] || fail "gk.npy.out written"
pass
