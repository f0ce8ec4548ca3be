#!/bin/bash
# `nanaudit clean` gives the same bytes and the same JSON report for any
# thread count (issue 4, "Performance"; DESIGN.md: partial statistics
# merged in a fixed order). Covers both paths of lib/clean.c: width 1
# (rank-1 samples, weights: blocks decoded per thread, run_tiles) and
# wider rows (per-feature statistics on whole chunks, run_pass). The data
# span many 16 Ki-element blocks with a short last one, so block
# boundaries, drops inside blocks and the output offsets of each block are
# exercised. The first case is also checked against numpy.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
rng = np.random.default_rng(7)
x = rng.normal(size=300001).astype(np.float32)  # 18 full blocks + 5473
x[::7919] = np.nan
x[5], x[100000] = np.inf, -np.inf
x[3::10007] = 40.0                                 # outliers
x.tofile("a.f32")
h = (rng.normal(size=100000) * 100).astype(np.float16)
h[::4999] = np.nan
h[7::3001] = 6e4
h.tofile("h.f16")
m = rng.normal(size=(20000, 3))
m[::997, 1] = np.nan
m[11::1999, 2] = 1e3
m.tofile("m.f64")
PY
N="$NANAUDIT"

# same_for_threads RC NAME ARGS...: runs ARGS (exit RC) with 1, 2, 3 and 16 threads,
# each in its own folder (the report names the output) writing NAME and
# a JSON report; all must agree. Inputs are ../FILE.
same_for_threads() {
    local rc="$1" name="$2"; shift 2
    for th in 1 2 3 16; do
        mkdir -p "t$th"
        (cd "t$th" && OMP_NUM_THREADS=$th expect_exit "$rc" "$N" clean "$@" -o "$name" --format json) ||
            exit 1
        cp "$T/stdout" "t$th/$name.json"
    done
    for th in 2 3 16; do
        cmp -s "t1/$name" "t$th/$name" || fail "$name: output differs with $th threads"
        cmp -s "t1/$name.json" "t$th/$name.json" || fail "$name: report differs with $th threads"
    done
}

# Width 1: non-finite drop, 3-sigma drop, z-score normalization.
same_for_threads 0 a.out --dtype F32 ../a.f32 --zscore 3 --normalize zscore
# --threads N as OMP_NUM_THREADS=N: the same bytes and report
for th in 1 3; do
    (cd "t$th" && OMP_NUM_THREADS=2 expect_exit 0 "$N" clean --dtype F32 ../a.f32 --zscore 3 \
        --normalize zscore --threads "$th" -o thr.out --format json) || exit 1
    cp "$T/stdout" "t$th/thr.json"
done
cmp -s t1/a.out t1/thr.out && cmp -s t1/a.out t3/thr.out || fail "--threads: output differs"
cmp -s t1/thr.json t3/thr.json || fail "--threads: report differs"
expect_exit 2 "$N" clean --dtype F32 a.f32 --threads 0 -o z.out
expect_stderr_contains "--threads"
# OMP_NUM_THREADS beyond --threads' range is held to 4096 (libgomp crashed)
OMP_NUM_THREADS=100000 expect_exit 0 "$N" clean --dtype F32 a.f32 --dry-run --max-drop-fraction 1
expect_json t1/a.out.json 'j["tensors"][0]["samples_dropped"]["nonfinite"]' 40
"$NA_PYTHON" - <<'PY' || fail "a.out against numpy"
import json
import numpy as np
x = np.fromfile("a.f32", dtype=np.float32).astype(np.float64)
x = x[np.isfinite(x)]
x = x[np.abs(x - x.mean()) <= 3 * x.std()]
want = ((x - x.mean()) / x.std()).astype(np.float32)
got = np.fromfile("t1/a.out", dtype=np.float32)
assert got.shape == want.shape, (got.shape, want.shape)
ulp = np.spacing(np.abs(want))
assert np.all(np.abs(got.astype(np.float64) - want) <= ulp), np.max(np.abs(got - want))
t = json.load(open("t1/a.out.json"))["tensors"][0]
assert t["samples_dropped"]["outliers"] == 300001 - 40 - x.size, t["samples_dropped"]
assert abs(t["after"]["mean"]) <= 1e-6 and abs(t["after"]["std"] - 1) <= 1e-6, t["after"]
PY

# Width 1 without drops: mean fill, clipping, min-max to -1:1 (the steps
# of the write pass that replace values, and the scaled fast path).
same_for_threads 0 c.out --dtype F32 ../a.f32 --nonfinite mean --zscore 3 --outliers clip \
    --normalize minmax --feature-range -1:1
"$NA_PYTHON" - <<'PY' || fail "c.out against numpy"
import json
import numpy as np
x = np.fromfile("a.f32", dtype=np.float32).astype(np.float64)
bad = ~np.isfinite(x)
x[bad] = x[~bad].mean()
m, s = x.mean(), x.std()
hit = np.abs(x - m) > 3 * s
x = np.where(hit, np.where(x < m, m - 3 * s, m + 3 * s), x)
want = (-1 + (x - x.min()) / (x.max() - x.min()) * 2).astype(np.float32)
got = np.fromfile("t1/c.out", dtype=np.float32)
ulp = np.spacing(np.abs(want))
assert np.all(np.abs(got.astype(np.float64) - want) <= ulp), np.max(np.abs(got - want))
t = json.load(open("t1/c.out.json"))["tensors"][0]
assert (t["nonfinite_replaced"], t["clipped"]) == (40, int(hit.sum())), (t, hit.sum())
PY

# F16 (the element-by-element rounding path), outliers made NaN: exit 1,
# NaN remain.
same_for_threads 1 h.out --dtype F16 ../h.f16 --nonfinite keep --zscore 3 --outliers nan

# Rows of width 3: per-feature statistics on the general path.
same_for_threads 0 m.out --dtype F64 --shape 20000x3 ../m.f64 --zscore 3 --normalize minmax
"$NA_PYTHON" - <<'PY' || fail "m.out against numpy"
import numpy as np
x = np.fromfile("m.f64").reshape(20000, 3)
x = x[np.isfinite(x).all(axis=1)]
x = x[(np.abs(x - x.mean(axis=0)) <= 3 * x.std(axis=0)).all(axis=1)]
want = (x - x.min(axis=0)) / (x.max(axis=0) - x.min(axis=0))
got = np.fromfile("t1/m.out").reshape(-1, 3)
assert got.shape == want.shape, (got.shape, want.shape)
assert np.max(np.abs(got - want)) <= 1e-12, np.max(np.abs(got - want))
PY
pass
