#!/usr/bin/env python3
"""Regression test for issue 4 (new-user test): `nanaudit clean` on F64
values near the largest double (1.8e308), against numpy.

  - --normalize minmax when max - min overflows (numpy's own
    (x - min) / (max - min) gives NaN there): the quotient is taken on
    halves, (x/2 - min/2) / (max/2 - min/2), exact to 1e-12 of numpy's
    float64 value of the same halved formula; 1-D and per feature (2-D,
    one huge and one ordinary column), F64 and F32 output, and a
    --feature-range whose HI - LO overflows too; no NaN or Inf, exit 0;
  - minmax where max - min fits keeps numpy's (x - min) / (max - min)
    exactly (1e-12), also at 1e308;
  - a statistic that overflows a double (numpy overflows to inf as well:
    np.mean and np.std of these arrays are inf): --normalize zscore,
    --zscore K, --mad K and --nonfinite mean are refused for that tensor,
    one line naming the file, the tensor, the feature and the statistic,
    exit 3 (it cannot be audited, DESIGN.md), nothing written, and
    --dry-run says the same;
  - with no step that needs a statistic the values are written unchanged
    and verified, although their mean is NaN (+Inf and -Inf partial sums).
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_clean_huge.py
"""
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_clean as tc  # noqa: E402  (EXE, TMP, check)

EXE, TMP, check = tc.EXE, tc.TMP, tc.check
B = np.array([-1e308, 1e308, 0.0, 5e307])        # max - min overflows
C = np.array([1e308, 1.5e308, 1.7e308, 1.6e308])  # sums overflow, max - min fits


def clean(tag, x, opts, dry=False):
    src = os.path.join(TMP, f"{tag}.npy")
    out = os.path.join(TMP, f"{tag}.out.npy")
    np.save(src, x)
    args = [EXE, "clean", src] + (["--dry-run"] if dry else ["-o", out]) + opts
    p = subprocess.run(args, capture_output=True, text=True)
    return p, src, out


def minmax_halves(x, lo=0.0, hi=1.0):
    """numpy float64, per column: the overflow-safe form nanaudit takes
    only when max - min overflows; LO + q*(HI - LO) likewise on halves."""
    mn, mx = x.min(axis=0), x.max(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        wide = np.isinf(mx - mn)
        q = np.where(wide, (x / 2 - mn / 2) / (mx / 2 - mn / 2), (x - mn) / (mx - mn))
        if lo == 0.0 and hi == 1.0:
            return q
        if np.isinf(hi - lo):
            t = q * (hi / 2 - lo / 2)
            return (lo + t) + t
        return lo + q * (hi - lo)


def expect_values(tag, x, opts, want, dtype=np.float64):
    p, _, out = clean(tag, x, opts)
    check(tag + " exit", p.returncode == 0, f"{p.returncode} {p.stderr}")
    if p.returncode != 0:
        return
    got = np.load(out)
    check(tag + " dtype", got.dtype == dtype, str(got.dtype))
    check(tag + " finite", np.isfinite(got).all(), str(got))
    want = want.astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 0.0  # F32: one rounding of the F64 value
    err = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
    check(tag + " values", err <= tol * max(1.0, np.max(np.abs(want))), f"{got} != {want}")


def test_minmax():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        naive = (B - B.min()) / (B.max() - B.min())
    check("numpy's naive minmax is NaN here", np.isnan(naive).any(), str(naive))
    expect_values("mm_1d", B, ["--normalize", "minmax"], minmax_halves(B))
    check("halves", minmax_halves(B).tolist() == [0.0, 1.0, 0.5, 0.75], str(minmax_halves(B)))
    expect_values("mm_fits", C, ["--normalize", "minmax"], (C - C.min()) / (C.max() - C.min()))
    x2 = np.stack([B, np.array([1.0, 2.0, 3.0, 4.0])], axis=1)
    expect_values("mm_2d", x2, ["--normalize", "minmax"], minmax_halves(x2))
    expect_values("mm_f32", B, ["--normalize", "minmax", "--out-dtype", "F32"],
                  minmax_halves(B), np.float32)
    expect_values("mm_range", B, ["--normalize", "minmax", "--feature-range", "-1e308:1.5e308"],
                  minmax_halves(B, -1e308, 1.5e308))
    expect_values("mm_range_f32", B, ["--normalize", "minmax", "--feature-range", "-1:1",
                                      "--out-dtype", "F32"], minmax_halves(B, -1.0, 1.0),
                  np.float32)


def expect_refused(tag, x, opts, stat):
    with np.errstate(over="ignore", invalid="ignore"):
        check(tag + " numpy overflows too", not np.isfinite(np.nanstd(x) + np.nanmean(x)), "")
    for dry in (False, True):
        p, src, out = clean(tag + ("_dry" if dry else ""), x, opts, dry)
        what = f"{tag}{' --dry-run' if dry else ''}"
        check(what + " exit", p.returncode == 3, f"{p.returncode} {p.stdout} {p.stderr}")
        lines = p.stderr.strip().splitlines()
        want = f"nanaudit: {src}: data: feature 0: the {stat} overflows a double"
        check(what + " message", len(lines) == 1 and lines[0].startswith(want),
              f"{lines} lacks {want!r}")
        check(what + " hint", "--exclude 'data' copies the tensor unchanged" in p.stderr,
              p.stderr)
        check(what + " nothing written", not os.path.exists(out), out)
    left = [f for f in os.listdir(TMP) if "nanaudit-tmp" in f]
    check(tag + " no temporary file", not left, str(left))


def test_refused():
    expect_refused("z_b", B, ["--normalize", "zscore"], "standard deviation (--normalize zscore)")
    expect_refused("z_c", C, ["--normalize", "zscore"], "mean (--normalize zscore)")
    expect_refused("k_b", B, ["--zscore", "1"], "standard deviation (--zscore)")
    expect_refused("k_c", C, ["--zscore", "3"], "mean (--zscore)")
    Cn = np.array([1e308, 1.5e308, np.nan, 1.7e308, 1.6e308])
    expect_refused("nf_mean", Cn, ["--nonfinite", "mean"], "mean (--nonfinite mean)")
    M = np.array([-1.7e308, 1.7e308, 1.7e308, 1.7e308, -1.7e308])
    expect_refused("mad", M, ["--mad", "3"], "mean absolute deviation (--mad)")


def test_no_step_copies():
    # no step uses a statistic: the values are written as they are, and the
    # verification (whose mean is NaN here too: +Inf and -Inf partial sums)
    # accepts them
    M = np.array([-1.7e308, 1.7e308, 1.7e308, 1.7e308, -1.7e308])
    expect_values("plain", M, [], M)
    expect_values("mm_m", M, ["--normalize", "minmax"], minmax_halves(M))


def test_ordinary_unchanged():
    # the refusal is only for overflow: 1e150 spreads still work
    x = np.array([1e150, -2e150, 3e150, 0.5e150])
    expect_values("z_ok", x, ["--normalize", "zscore"], (x - x.mean()) / x.std())


def main():
    try:
        for t in (test_minmax, test_refused, test_no_step_copies, test_ordinary_unchanged):
            try:
                t()
            except Exception as e:  # noqa: BLE001 - any error is a failure
                check(t.__name__, False, str(e))
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if tc.FAILS:
        print(f"{len(tc.FAILS)} failure(s)")
        return 1
    print("PASS test_clean_huge")
    return 0


if __name__ == "__main__":
    sys.exit(main())
