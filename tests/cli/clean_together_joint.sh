#!/bin/bash
# clean_together_joint.sh - a --together group is cleaned as one dataset
# holding its members' columns would be (man page, --together): numpy's
# np.hstack of the members, cleaned, keeps the same samples. A sample some
# member drops in step 1 leaves every member before step 2's statistics,
# one some member's step 2 drops leaves the others after theirs. Until
# round 38b each member was fitted without its partners' drops until that
# settled, which kept other samples: here the fixpoint kept sample 39 (y's
# z = 2.9943 without x's outliers 50 and 167), the concatenated dataset
# drops it (z = 3.0055). tests/tools/together_ref.py is the reference.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
REF="$NA_SRC/tests/tools"
"$NA_PYTHON" - <<'PY' || fail "making the input"
import numpy as np
rng = np.random.default_rng(5); N = 200
x = rng.normal(size=(N, 3)); x[7, 1] = np.nan; x[50, 0] = 40.0
y = rng.normal(size=N).astype(np.float32)
np.savez("tg.npz", x=x, y=y)
PY
expect_exit 0 "$NANAUDIT" clean tg.npz --zscore 3 --together x,y -o out.npz --format json
cp "$T/stdout" r.json
"$NA_PYTHON" - "$REF" <<'PY' || fail "numpy reference"
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from together_ref import together_ref
f = np.load("tg.npz"); x, y = f["x"], f["y"]
# the concatenated dataset, in numpy's own words
X = np.hstack([x, y.astype(np.float64)[:, None]])
k1 = np.isfinite(X).all(axis=1)
A = X[k1]
z = (np.abs(A - A.mean(axis=0)) > 3 * A.std(axis=0)).any(axis=1)
gone = np.ones(len(y), bool); gone[np.flatnonzero(k1)[~z]] = False
assert np.flatnonzero(gone).tolist() == [7, 39, 50, 167], np.flatnonzero(gone)
u1, own, u = together_ref([x, y], "drop", "zscore", 3.0)
assert (u == gone).all() and [o.sum() for o in own] == [2, 1]
j = json.load(open("r.json"))
d = {t["name"]: t["samples_dropped"] for t in j["tensors"]}
assert d["x"] == {"nonfinite": 1, "outliers": 2, "together": 1, "total": 4, "first": [7, 39, 50, 167]}, d
assert d["y"] == {"nonfinite": 0, "outliers": 1, "together": 3, "total": 4, "first": [7, 39, 50, 167]}, d
o = np.load("out.npz")
assert np.array_equal(o["x"], x[~gone]) and np.array_equal(o["y"], y[~gone])
PY

# Random groups (2 or 3 members of 1 to 3 columns, NaN, Inf and outliers;
# --nonfinite drop or mean, --zscore or --mad, per feature or --global,
# then --normalize minmax) against the reference: the same drops, the same
# own outlier counts, the same values.
"$NA_PYTHON" - "$REF" "$NANAUDIT" <<'PY' || fail "random groups against the reference"
import json, subprocess, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from together_ref import together_ref
for seed in range(24):
    r = np.random.default_rng(seed)
    n = int(r.integers(8, 60))
    ms = []
    for i in range(int(r.integers(2, 4))):
        s = [(n,), (n, 2), (n, 3)][int(r.integers(0, 3))]
        m = r.normal(size=s) * r.uniform(0.5, 3)
        for _ in range(int(r.integers(0, 4))):
            m[tuple(int(r.integers(0, d)) for d in s)] = r.choice([np.nan, np.inf, -np.inf, 15.0, -20.0])
        ms.append(m)
    nonfinite, method = ["drop", "mean"][seed % 2], ["zscore", "mad"][(seed // 2) % 2]
    k, glob = [1.5, 2.0, 3.0][seed % 3], seed % 5 == 0
    names = [f"m{i}" for i in range(len(ms))]
    np.savez("f.npz", **dict(zip(names, ms)))
    p = subprocess.run([sys.argv[2], "clean", "f.npz", "-o", "fo.npz", "--force", "--together",
                        ",".join(names), "--nonfinite", nonfinite, f"--{method}", str(k),
                        "--max-drop-fraction", "1", "--format", "json", "--normalize", "minmax"]
                       + (["--global"] if glob else []), capture_output=True, text=True)
    assert p.returncode in (0, 1), (seed, p.returncode, p.stderr)
    j = json.loads(p.stdout)
    u1, own, u = together_ref(ms, nonfinite, method, k, glob)
    o = np.load("fo.npz")
    for i, t in enumerate(j["tensors"]):
        d = t["samples_dropped"]
        assert (d["total"], d["outliers"]) == (int(u.sum()), int(own[i].sum())), (seed, i, d, np.flatnonzero(u))
        kept = ms[i][~u]
        assert o[names[i]].shape == kept.shape, (seed, i)
        if nonfinite == "drop" and kept.size:
            kk = kept.reshape(len(kept), -1)
            lo, hi = (kk.min(), kk.max()) if glob else (kk.min(axis=0), kk.max(axis=0))
            with np.errstate(invalid="ignore", divide="ignore"):
                want = np.where(hi > lo, (kk - lo) / (hi - lo), 0.0).reshape(kept.shape)
            assert np.allclose(o[names[i]], want, rtol=0, atol=1e-12), (seed, i)
PY

# Round 32a: a member whose finite rows only its partner drops still has
# finite values, so it is no feature "with no finite value at all" and its
# NaN rows still drop. Before, the refit took x for one: (1) x's NaN row 1
# was written (y drops 0 and 2); (2) x stopped dropping row 0, which then
# came back into y's statistics, the fit never settled and all 5 samples
# went, exit 0, each member reporting only "together" drops. Expected by
# the rule above: (1) every row; (2) x drops 0, y (fitted on 9 8 0 0)
# drops 1, 3 samples kept.
"$NA_PYTHON" - <<'PY' || fail "making the passthrough inputs"
import numpy as np
np.savez("p1.npz", x=np.array([[1.0], [np.nan], [1.0]]), y=np.array([8.0, 6.0, 5.0]))
np.savez("p2.npz", x=np.array([[np.nan], [1.0], [1.0], [1.0], [1.0]]),
         y=np.array([3.0, 9, 8, 0, 0]))
PY
expect_exit 0 "$NANAUDIT" clean p1.npz -o p1o.npz --zscore 0.5 --together x,y \
    --max-drop-fraction 1 --format json
cp "$T/stdout" p1.json
expect_exit 0 "$NANAUDIT" clean p2.npz -o p2o.npz --zscore 1 --together x,y \
    --max-drop-fraction 1 --format json
cp "$T/stdout" p2.json
"$NA_PYTHON" - <<'PY' || fail "a member whose finite rows its partner drops"
import json
import numpy as np
d = {t["name"]: t for t in json.load(open("p1.json"))["tensors"]}
assert d["x"]["samples_dropped"]["nonfinite"] == 1 and d["x"]["warnings"] == [], d["x"]
assert d["y"]["samples_dropped"]["outliers"] == 2, d["y"]
o = np.load("p1o.npz")
assert o["x"].shape == (0, 1) and o["y"].shape == (0,), (o["x"], o["y"])
d = {t["name"]: t["samples_dropped"] for t in json.load(open("p2.json"))["tensors"]}
assert d["x"] == {"nonfinite": 1, "outliers": 0, "together": 1, "total": 2, "first": [0, 1]}, d
assert d["y"] == {"nonfinite": 0, "outliers": 1, "together": 1, "total": 2, "first": [0, 1]}, d
o = np.load("p2o.npz")
assert o["x"].tolist() == [[1.0]] * 3 and o["y"].tolist() == [8.0, 0.0, 0.0], (o["x"], o["y"])
PY

# Round 33a: with --nonfinite mean, x's only finite value is in the sample
# y drops (9 at --zscore 1). As in one dataset, x's NaN are filled with
# its mean over all samples (5), and then the sample goes: exit 0 (under
# the fixpoint rule x had no mean left, passed through with a warning,
# exit 1; before that it was refused, exit 3).
"$NA_PYTHON" -c 'import numpy as np; np.savez("p3.npz", x=np.array([np.nan, 5, np.nan]), y=np.array([0.0, 9, 1]))' \
    || fail "making p3.npz"
expect_exit 0 "$NANAUDIT" clean p3.npz -o p3o.npz --together x,y --nonfinite mean --zscore 1 \
    --max-drop-fraction 1 --save-params p3.json
expect_stdout_lacks "passed through"
"$NA_PYTHON" -c '
import numpy as np
o = np.load("p3o.npz")
assert o["x"].tolist() == [5.0, 5.0] and o["y"].tolist() == [0.0, 1.0], dict(o)' \
    || fail "p3: x filled with its mean, y without its outlier"
# its parameters apply to the same file: the same bytes
expect_exit 0 "$NANAUDIT" clean p3.npz -o p3a.npz --together x,y --nonfinite mean --zscore 1 \
    --max-drop-fraction 1 --apply-params p3.json
cmp -s p3o.npz p3a.npz || fail "p3: --apply-params gave other bytes"

# Round 33a, from its random search (seed 535, reduced): a group whose
# fixpoint rounds left a member's features without finite values in one
# fit and not in another (--nonfinite mean, --mad, --global); it was
# refused, "the MAD (--mad) overflows a double". Now one fit of step 2
# over the group's samples, as the reference's.
"$NA_PYTHON" - <<'PY' || fail "making p4.npz"
import numpy as np
nan, inf = np.nan, np.inf
m0 = [-0.19278297088125007, nan, -1.4593369121941198, 20.501236263643996, -0.14756359388145604,
      -0.41493119151008034, -0.26154523250675277, 0.8808285410437016, 0.7961995008443914,
      -0.755817278839883]
m1 = [[-2.57321834564209, -2.270348310470581, nan], [-2.576819896697998, -1.7320306301116943, nan],
      [-4.139004707336426, -2.023808717727661, nan], [-4.280310153961182, -2.393375873565674, nan],
      [-4.669257164001465, -4.81289529800415, nan], [-1.4934707880020142, -2.1357407569885254, nan],
      [-4.14192533493042, -1.49714195728302, nan], [-3.716402053833008, -3.3796818256378174, nan],
      [-5.173050880432129, -4.157205581665039, nan], [-1.2996188402175903, -3.4110207557678223, nan]]
m2 = [[inf, -0.04606526076717466], [-2.865600843989103, nan], [-2.295444227169689, nan],
      [-2.6517387923865607, nan], [-3.9819795408136365, nan], [-2.7278328918529144, nan],
      [-1.9517698168678717, nan], [-2.562395285599511, 0.48063701833886824],
      [-2.6150616561358535, nan], [-2.0800229271345723, nan]]
m3 = [nan, -1.5777789756102527, inf, -2.901339222484503, -2.762952243492878, -3.5986564341801857,
      -2.0217791495960005, -3.384624843527345, -1.7636593472159223, -3.8640715286406264]
np.savez("p4.npz", m0=np.array(m0), m1=np.array(m1, np.float32), m2=np.array(m2), m3=np.array(m3))
PY
expect_exit 0 "$NANAUDIT" clean p4.npz -o p4o.npz --together m0,m1,m2,m3 --nonfinite mean \
    --mad 1.5 --normalize zscore --global --max-drop-fraction 1 --format json
cp "$T/stdout" p4.json
"$NA_PYTHON" - "$REF" <<'PY' || fail "p4: the group's drops"
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from together_ref import together_ref
f = np.load("p4.npz")
u1, own, u = together_ref([f[k] for k in ("m0", "m1", "m2", "m3")], "mean", "mad", 1.5, True)
assert np.flatnonzero(u).tolist() == [0, 1, 3, 4, 5, 6, 7, 8, 9] and not u1.any()
assert [int(o.sum()) for o in own] == [2, 5, 7, 0]
d = {t["name"]: t["samples_dropped"] for t in json.load(open("p4.json"))["tensors"]}
first = [0, 1, 3, 4, 5]
assert d["m0"] == {"nonfinite": 0, "outliers": 2, "together": 7, "total": 9, "first": first}, d
assert d["m1"] == {"nonfinite": 0, "outliers": 5, "together": 4, "total": 9, "first": first}, d
assert d["m2"] == {"nonfinite": 0, "outliers": 7, "together": 2, "total": 9, "first": first}, d
assert d["m3"] == {"nonfinite": 0, "outliers": 0, "together": 9, "total": 9, "first": first}, d
o = np.load("p4o.npz")
assert [o[k].shape[0] for k in ("m0", "m1", "m2", "m3")] == [1] * 4
PY
pass
