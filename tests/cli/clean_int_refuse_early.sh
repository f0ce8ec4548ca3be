#!/bin/bash
# Regression test for issue 4: NaN or +-Inf bound for an integer
# --out-dtype is refused before anything is written. The count comes from
# the fit (na_clean_fit's statistics after steps 1 and 2), not from a
# write pass: the NANAUDIT_TEST_SIGNAL=KILL hook kills clean as soon as
# the first cleaned bytes reach the temporary file, so a refusal made
# after the write pass (as before) ends in SIGKILL (137) and leaves the
# temporary file. The counts are numpy's: NaN/Inf left in the rows kept
# by --nonfinite keep, by features without finite values, by
# --outliers nan, less the rows that step 2 or a --together partner drop;
# missing-value markers are written as markers and do not count. A dry
# run refuses with the same line and exit code.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir out
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
nan, inf = np.nan, np.inf
np.save("n.npy", np.array([1.5, nan, 2.5, -inf, 4], np.float32))
# feature 0: row 5 is the z-score outlier at K=2; feature 1 has NaN in
# rows 0, 2 and 5 - row 5 goes with --outliers drop
k2 = np.array([[1, nan], [1, 2], [1, nan], [1, 3], [1, 4], [100, nan]], np.float64)
np.save("k2.npy", k2)
np.save("o.npy", np.array([1, 1, 1, 1, 100], np.float32))
# feature 0 has no finite value; feature 1's NaN drops row 1
np.save("pt.npy", np.array([[nan, 1], [nan, nan], [nan, 2], [inf, 3]], np.float32))
np.savez("tg.npz", x=np.array([1, 1, 1, 1, 1, 100], np.float32),
         y=np.array([nan, 1, 2, nan, 3, nan], np.float32))
np.save("fit.npy", np.array([0.0, 1e-150]))
np.save("app.npy", np.array([0.0, 1e200, 5e-151, 1e300]))
PY

# numpy's count of NaN/Inf in the rows kept: python expression -> integer
np_count() {
    "$NA_PYTHON" -c "
import numpy as np
$1
print(int(np.count_nonzero(~np.isfinite(kept))))"
}

# refused FILE WANT ARGS...: a real run with the KILL hook and a dry run
# both refuse, exit 2, with the line WANT; no output, no temporary file
refused() {
    local in="$1" want="$2"
    shift 2
    expect_exit 2 env NANAUDIT_TEST_SIGNAL=KILL "$N" clean "$in" -o "out/o.${in##*.}" "$@"
    expect_stderr_contains "nanaudit: $in: $want"
    expect_stderr_contains "; nothing written"
    assert_eq "$(grep -c . "$T/stderr")" "1" "stderr lines"
    [ -e "out/o.${in##*.}" ] && fail "output written"
    assert_eq "$(ls -A out . | grep -c nanaudit-tmp)" "0" "temporary file made"
    local line
    line=$(cat "$T/stderr")
    expect_exit 2 "$N" clean "$in" --dry-run "$@"
    assert_eq "$(cat "$T/stderr")" "$line" "the dry run's line"
}
HINT="use --nonfinite zero|mean|value=X|drop, --outliers clip|mean|drop, a float --out-dtype, or --exclude"

# --nonfinite keep: the input's NaN and -Inf
want=$(np_count "kept = np.load('n.npy')")
assert_eq "$want" "2" "numpy count (keep)"
refused n.npy "data: $want NaN/Inf value(s) would be written as I16, which has no NaN or Inf; $HINT 'data'" \
    --nonfinite keep --out-dtype I16
# the report: an error with the line as reason, nothing written
expect_exit 2 "$N" clean n.npy -o out/o.npy --nonfinite keep --out-dtype I16 --report r.json
expect_json r.json 'j["tensors"][0]["status"]' '"error"'
expect_json r.json 'j["tensors"][0]["reason"].startswith("2 NaN/Inf value(s) would be written as I16")' 'true'
expect_json r.json 'j["written"]' 'false'

# keep, 2-D: the NaN of row 5 leaves with the row (--outliers drop)
want=$(np_count "
x = np.load('k2.npy'); f = x[:, 0]
kept = x[np.abs(f - f.mean()) <= 2 * f.std()]")
assert_eq "$want" "2" "numpy count (keep + drop)"
refused k2.npy "data: $want NaN/Inf value(s) would be written as I32" \
    --nonfinite keep --zscore 2 --max-drop-fraction 1 --out-dtype I32
# ... and --outliers nan adds the outlier made NaN, rows stay
want=$(np_count "
x = np.load('k2.npy').copy(); f = x[:, 0]
x[np.abs(f - f.mean()) > 2 * f.std(), 0] = np.nan
kept = x")
assert_eq "$want" "4" "numpy count (keep + nan)"
refused k2.npy "data: $want NaN/Inf value(s) would be written as I32" \
    --nonfinite keep --zscore 2 --outliers nan --out-dtype I32
# --outliers nan alone (1-D, the default --nonfinite drop)
refused o.npy "data: 1 NaN/Inf value(s) would be written as U8" \
    --zscore 1 --outliers nan --out-dtype U8

# a feature without finite values keeps its NaN/Inf in the rows kept
want=$(np_count "
x = np.load('pt.npy')
kept = x[np.isfinite(x[:, 1]), 0]")
assert_eq "$want" "3" "numpy count (passthrough)"
refused pt.npy "data: $want NaN/Inf value(s) would be written as I8, which has no NaN or Inf; 1 feature(s) have no finite value and keep theirs through every step: use a float --out-dtype, or --exclude 'data'" \
    --max-drop-fraction 1 --out-dtype I8

# --together: y loses row 5 (and its NaN) with x's outlier
want=$(np_count "
z = np.load('tg.npz'); x, y = z['x'], z['y']
kept = y[np.abs(x - x.mean()) <= 2 * x.std()]")
assert_eq "$want" "2" "numpy count (together)"
expect_exit 2 env NANAUDIT_TEST_SIGNAL=KILL "$N" clean tg.npz -o out/o.npz --nonfinite keep \
    --zscore 2 --together x,y --max-drop-fraction 1 --out-dtype I16
expect_stderr_contains "nanaudit: tg.npz: y: $want NaN/Inf value(s) would be written as I16"
assert_eq "$(grep -c . "$T/stderr")" "1" "stderr lines (together)"
assert_eq "$(ls -A out | grep -c .)" "0" "files in out/ (together)"

# --apply-params whose minmax maps values beyond a double: the fit cannot
# predict the count; a write pass into nothing counts it, still before the
# temporary file (1e200 / 1e-150 and 1e300 / 1e-150 are +Inf)
expect_exit 0 "$N" clean fit.npy --normalize minmax --dry-run --save-params p.json
refused app.npy "data: 2 NaN/Inf value(s) would be written as I16" \
    --apply-params p.json --normalize minmax --out-dtype I16

# not refused: drop, zero and clip leave no NaN; values as numpy's
# (np.rint: half to even), --max-drop-fraction 1 for the 6 rows
expect_exit 0 env NANAUDIT_TEST_SIGNAL= "$N" clean k2.npy -o d.npy --zscore 2 \
    --max-drop-fraction 1 --out-dtype I32
expect_exit 0 "$N" clean k2.npy -o z.npy --nonfinite zero --zscore 2 --outliers clip \
    --out-dtype I32
"$NA_PYTHON" -c "
import numpy as np
x = np.load('k2.npy')
keep = np.isfinite(x).all(axis=1)
d = x[keep]; f = d[:, 0]
d = d[np.abs(f - f.mean()) <= 2 * f.std()]
got = np.load('d.npy')
assert got.dtype == np.int32 and got.tolist() == np.rint(d).astype(np.int32).tolist(), got
z = np.where(np.isfinite(x), x, 0.0)
m, s = z.mean(axis=0), z.std(axis=0)
z = np.clip(z, m - 2 * s, m + 2 * s)
got = np.load('z.npy')
assert got.tolist() == np.rint(z).astype(np.int32).tolist(), (got, z)
" || fail "values of the runs not refused"

# missing-value markers are written as markers, not counted as NaN
skip_without_hdf5
"$NA_PYTHON" - <<'PY' || fail "making the HDF5 input"
import h5py, numpy as np
with h5py.File("m.h5", "w") as f:
    d = f.create_dataset("d", data=np.array([1, -9, np.nan, 2, -9, np.inf, 3], np.float32))
    d.attrs["_FillValue"] = np.float32(-9)
PY
refused m.h5 "/d: 2 NaN/Inf value(s) would be written as I16" --nonfinite keep --out-dtype I16
expect_exit 0 "$N" clean m.h5 -o out/m.h5 --nonfinite zero --out-dtype I16
"$NA_PYTHON" -c "
import h5py
with h5py.File('out/m.h5') as f:
    assert f['d'][:].tolist() == [1, -9, 0, 2, -9, 0, 3], f['d'][:]" || fail "HDF5 markers"
pass
