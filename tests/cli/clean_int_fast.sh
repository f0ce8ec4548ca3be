#!/bin/bash
# clean_int_fast.sh - the vectorised integer output of clean's width-1
# emit (lib/clean.c, NA_INT_RUN: 8- to 32-bit integer output of a linear
# step 3) against numpy and against the general path. Before it, every
# value went through na_ce_put one call at a time: a 256 MiB I8 clean cost
# 6.0 CPU-s, 1.7x an F32 file of as many values. The same data cleaned
# 1-D (width 1: the fast loop) and as (N/2, 2) with --global (the general
# path, pass_emit) must give the same bytes and the same JSON counts, and
# both numpy's rint-then-saturate of the map (min-max to a range wider
# than most types, z-score, none): round half to even, -0.3 to 0 (not -0),
# values beyond the type to its bounds, counted as overflow. (NaN and Inf
# never reach an integer output: refused before the write,
# clean_int_nonfinite.sh.)
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "inputs"
import numpy as np
r = np.random.default_rng(7)
x = np.concatenate([r.uniform(-5e5, 5e5, 4000), [2.5, -7.5, 0.5, -0.3, 1e9, -1e9, 3.5, -2.5]])
np.save("a.npy", x)
np.save("b.npy", x.reshape(-1, 2))
PY
N="$NANAUDIT"
for dt in I8 U8 I16 U16 I32 U32; do
    for opts in "--normalize minmax --feature-range -300:70000" "--normalize zscore" ""; do
        expect_exit 0 "$N" clean a.npy --out-dtype $dt $opts -o "a.$dt.npy" --report a.json --force
        expect_exit 0 "$N" clean b.npy --out-dtype $dt $opts --global -o "b.$dt.npy" --report b.json --force
        "$NA_PYTHON" - "$dt" "$opts" <<'PY' || fail "$dt ($opts)"
import json, sys
import numpy as np
dt = {"I8": np.int8, "U8": np.uint8, "I16": np.int16, "U16": np.uint16, "I32": np.int32,
      "U32": np.uint32}[sys.argv[1]]
opts = sys.argv[2]
x = np.load("a.npy")
if "minmax" in opts:
    y = -300 + (x - x.min()) / (x.max() - x.min()) * (70000 - -300)
elif "zscore" in opts:
    y = (x - x.mean()) / x.std()
else:
    y = x
info = np.iinfo(dt)
r = np.rint(y)
want = np.where(r > info.max, info.max, np.where(r < info.min, info.min, r)).astype(dt)
a, b = np.load(f"a.{sys.argv[1]}.npy"), np.load(f"b.{sys.argv[1]}.npy").ravel()
assert a.dtype == dt and np.array_equal(a, want), (sys.argv[1], opts, a[:8], want[:8])
assert np.array_equal(a, b), "width-1 and general paths differ"
ja, jb = json.load(open("a.json"))["tensors"][0], json.load(open("b.json"))["tensors"][0]
over = int((r > info.max).sum() + (r < info.min).sum())
assert ja["overflow"] == jb["overflow"] == over, (ja["overflow"], jb["overflow"], over)
for k in ("min", "max", "mean", "finite"):
    assert ja["after"][k] == jb["after"][k], (k, ja["after"][k], jb["after"][k])
assert str(ja["after"]["min"]) != "-0.0"
PY
    done
done
# A clip bound in (-0.5, 0): its values round to the integer 0. In the
# vector loop gcc -O3 -fno-trapping-math folded the read-back into rint's
# -0.0, and the report said "min -0" (round 39a).
"$NA_PYTHON" -c "import numpy as np; np.save('neg.npy', np.array([-1, -2, 10, 11, 12], np.int8))"
expect_exit 0 "$N" clean neg.npy --zscore 1 --outliers clip -o neg.out.npy --report neg.json
expect_stdout_contains "after  finite 5  nan 0  inf 0  min 0  max 12 "
"$NA_PYTHON" - <<'PY' || fail "clip to -0"
import json, math
import numpy as np
y = np.load("neg.out.npy")
assert y.tolist() == [0, 0, 10, 11, 12], y.tolist()
a = json.load(open("neg.json"))["tensors"][0]["after"]
assert a["min"] == 0 and math.copysign(1, a["min"]) == 1, a["min"]
PY
pass
