"""together_ref.py - numpy reference of `nanaudit clean --together` (man page):
a group is cleaned as one dataset holding its members' columns would be.

Step 1 (--nonfinite drop) drops the samples with a non-finite value in a
feature that has finite values somewhere (a feature without any passes
through); --nonfinite mean fills with the feature's mean over all samples.
Step 2 (--zscore K: |x - mean| > K std, ddof 0; --mad K: the modified
z-score 0.6745 (x - median) / MAD > K, with MeanAD * 1.253314 when the MAD
is 0, DESIGN.md) takes each feature's statistics over the samples no member
dropped in step 1, and drops every sample with a flagged value. --global:
one statistic per member over all its features. Used by
tests/cli/clean_together_joint.sh.
"""
import numpy as np


def together_ref(members, nonfinite="drop", method="zscore", k=3.0, glob=False):
    """members: arrays sharing axis 0 (N samples). Returns (u1, own, u):
    boolean arrays over the N samples - the group's step 1 drops, each
    member's own step 2 drops (a list), and every sample the group drops."""
    N = len(members[0])
    ms = [np.asarray(m, np.float64).reshape(N, -1) for m in members]
    u1 = np.zeros(N, bool)
    filled = []
    for m in ms:
        cols = [m.ravel()] if glob else [m[:, f] for f in range(m.shape[1])]
        fin = [np.isfinite(c) for c in cols]
        pas = [not f.any() and nonfinite not in ("zero", "value") for f in fin]
        if nonfinite == "drop":
            bad = np.zeros(N, bool)
            for f in range(m.shape[1]):
                p = pas[0] if glob else pas[f]
                if not p:
                    bad |= ~np.isfinite(m[:, f])
            u1 |= bad
            filled.append((m.copy(), pas))
        else:  # mean
            mm = m.copy()
            if glob:
                if not pas[0]:
                    mm[~np.isfinite(mm)] = m[np.isfinite(m)].mean()
            else:
                for f in range(m.shape[1]):
                    if not pas[f]:
                        c = mm[:, f]; c[~np.isfinite(c)] = m[np.isfinite(m[:, f]), f].mean()
            filled.append((mm, pas))
    own2 = []
    keep = ~u1
    for mm, pas in filled:
        flag = np.zeros(N, bool)
        groups = [list(range(mm.shape[1]))] if glob else [[f] for f in range(mm.shape[1])]
        for gi, fs in enumerate(groups):
            if pas[gi]:
                continue
            v = mm[keep][:, fs].ravel(); v = v[np.isfinite(v)]
            if method == "zscore":
                mu, sd = v.mean(), v.std()
                test = lambda x: np.abs(x - mu) > k * sd
            else:
                med = np.median(v); mad = np.median(np.abs(v - med)); mad0 = np.abs(v - med).mean()
                if mad > 0:
                    test = lambda x: np.abs(0.6745 * (x - med) / mad) > k
                elif mad0 > 0:
                    test = lambda x: np.abs((x - med) / (1.253314 * mad0)) > k
                else:
                    test = lambda x: np.zeros(x.shape, bool)
            x = mm[:, fs]
            with np.errstate(invalid="ignore"):
                t = test(x) & np.isfinite(x)
            flag |= t.any(axis=1) & keep
        own2.append(flag)
    u = u1.copy()
    for f in own2:
        u |= f
    return u1, own2, u
