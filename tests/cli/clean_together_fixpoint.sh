#!/bin/bash
# clean_together_fixpoint.sh - a --together group drops the union of its
# members' own drops, each member fitted without the samples its partners
# drop (man page, --together). Eleventh fresh-user round: y's first fit,
# with x's rows still in its statistics, flagged sample 39 (z = 3.0055);
# fitted without x's drops it does not (z = 2.9943), yet 39 stayed
# dropped, counted as "together" in both members: a drop no member made.
# The union is now recomputed from the members' own drops until it
# settles. Checked against numpy.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making the input"
import numpy as np
rng = np.random.default_rng(5); N = 200
x = rng.normal(size=(N, 3)); x[7, 1] = np.nan; x[50, 0] = 40.0
y = rng.normal(size=N).astype(np.float32)
np.savez("tg.npz", x=x, y=y)
PY
expect_exit 0 "$NANAUDIT" clean tg.npz --zscore 3 --together x,y -o out.npz --format json
cp "$T/stdout" r.json
"$NA_PYTHON" - <<'PY' || fail "numpy reference"
import json
import numpy as np
f = np.load("tg.npz"); x, y = f["x"], f["y"].astype(np.float64)
N = len(y)
def own_x(gone):  # x's own drops with the rows `gone` left out before step 1
    keep = ~gone
    nf = ~np.isfinite(x).all(axis=1) & keep
    k = keep & ~nf
    z = np.abs(x - x[k].mean(axis=0)) > 3 * x[k].std(axis=0)
    return nf | (z.any(axis=1) & k)
def own_y(gone):
    k = ~gone & np.isfinite(y)
    return (np.abs(y - y[k].mean()) > 3 * y[k].std()) & k
# each member fitted alone, then again without the rows the others drop
# (the rows it dropped itself left to its own steps), until every
# member's drops (own and joint) are the union of the own drops
fit = [own_x, own_y]
own = [f(np.zeros(N, bool)) for f in fit]
joint = [np.zeros(N, bool) for f in fit]
for _ in range(20):
    u = own[0] | own[1]
    if all(((own[i] | joint[i]) == u).all() for i in range(2)):
        break
    for i in range(2):
        if not ((own[i] | joint[i]) == u).all():
            joint[i] = u & ~own[i]
            own[i] = fit[i](joint[i])
assert sorted(np.flatnonzero(u)) == [7, 50, 167], np.flatnonzero(u)
j = json.load(open("r.json"))
d = {t["name"]: t["samples_dropped"] for t in j["tensors"]}
assert d["x"] == {"nonfinite": 1, "outliers": 2, "together": 0, "total": 3, "first": [7, 50, 167]}, d
assert d["y"] == {"nonfinite": 0, "outliers": 0, "together": 3, "total": 3, "first": [7, 50, 167]}, d
o = np.load("out.npz")
assert np.array_equal(o["x"], x[~u]) and np.array_equal(o["y"], f["y"][~u])
PY
pass
