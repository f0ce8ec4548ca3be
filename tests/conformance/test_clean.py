#!/usr/bin/env python3
"""Conformance of `nanaudit clean` (issue 4) against a numpy reference.

The reference below implements the issue's "Semantics" directly in numpy
float64: steps non-finite -> outliers -> normalization, each on the
previous step's output over finite values only; per feature over axis 0
with samples (one statistic with --global, rank-1 data one statistic),
one statistic per tensor for weights; z-scores with ddof=0
(scipy.stats.zscore, which gives NaN for constant input where we give 0);
the modified z-score of Iglewicz & Hoaglin with numpy's exact median and
the MeanAD fallback; min-max as the quotient (x - min) / (max - min).
Output values must equal the reference rounded to the output dtype, to
1e-12 * scale for F64 and one F32 ulp for F32; dropped-sample counts and
indices exactly.

Cases: every option on 1-D and 2-D F32/F64 raw data and on safetensors
weights; the -Inf feature; the raw F32 band with a -2147483648 sentinel;
the five F64 values with --normalize zscore; the seed example; the
safetensors round trip through the official package (metadata, order);
an all-NaN feature; --max-drop-fraction; --dry-run; save/apply params.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_clean.py
"""
import atexit
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import scipy.stats
from safetensors import safe_open
from safetensors.numpy import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402

EXE = nacheck.nanaudit_path()
TMP = tempfile.mkdtemp(prefix="naclean.")
# Also removed when another test imports this module for its helpers (their
# files land here too).
atexit.register(shutil.rmtree, TMP, True)
FAILS = []


def run(args, expect=0):
    p = subprocess.run([EXE, "clean"] + args, capture_output=True, text=True)
    if p.returncode != expect:
        raise AssertionError(f"exit {p.returncode} (want {expect}) for {args}:\n{p.stdout}\n{p.stderr}")
    return p


def check(name, cond, msg=""):
    if not cond:
        FAILS.append(f"{name}: {msg}")
        print(f"FAIL {name}: {msg}")


# ---------------------------------------------------------------------------
# The numpy reference
# ---------------------------------------------------------------------------
def reference(x, samples, glob=False, nonfinite=None, value=0.0, method=None, k=0.0,
              action=None, normalize=None, lo=0.0, hi=1.0):
    """Return (output rows as float64 2-D, dropped row indices)."""
    x = np.asarray(x, dtype=np.float64)
    if samples and x.ndim >= 1:
        X = x.reshape(x.shape[0], -1).copy()
    else:
        X = x.reshape(-1, 1).copy()
    nf = nonfinite or ("drop" if samples else "keep")
    act = action or ("drop" if samples else None)
    per_feat = samples and not glob and X.shape[1] > 1
    cols = [np.arange(X.shape[1])] if not per_feat else [np.array([j]) for j in range(X.shape[1])]
    keep = np.ones(X.shape[0], bool)
    passthrough = [not np.isfinite(X[:, c]).any() for c in cols]

    def finite_vals(A, c):
        v = A[keep][:, c].ravel()
        return v[np.isfinite(v)]

    # step 1
    if nf == "drop":
        bad = np.zeros(X.shape[0], bool)
        for c, pt in zip(cols, passthrough):
            if not pt:
                bad |= (~np.isfinite(X[:, c])).any(axis=1)
        keep &= ~bad
    elif nf in ("zero", "mean", "value"):
        for c, pt in zip(cols, passthrough):
            if pt:
                continue
            fill = 0.0 if nf == "zero" else value if nf == "value" else finite_vals(X, c).mean()
            sub = X[:, c]
            sub[~np.isfinite(sub)] = fill
            X[:, c] = sub
    dropped_nf = np.flatnonzero(~keep)
    # step 2
    if method:
        flag_rows = np.zeros(X.shape[0], bool)
        for c, pt in zip(cols, passthrough):
            if pt:
                continue
            v = finite_vals(X, c)
            sub = X[:, c]
            fin = np.isfinite(sub) & keep[:, None]
            if method == "zscore":
                center, scale = v.mean(), v.std()
                flag = fin & (np.abs(sub - center) > k * scale) if scale > 0 else np.zeros_like(fin)
                lob, hib = center - k * scale, center + k * scale
            else:
                center = np.median(v)
                mad = np.median(np.abs(v - center))
                meanad = np.mean(np.abs(v - center))
                if mad > 0:
                    flag = fin & (np.abs(0.6745 * (sub - center) / mad) > k)
                    lob, hib = center - k * mad / 0.6745, center + k * mad / 0.6745
                elif meanad > 0:
                    flag = fin & (np.abs((sub - center) / (1.253314 * meanad)) > k)
                    lob, hib = center - k * 1.253314 * meanad, center + k * 1.253314 * meanad
                else:
                    flag = np.zeros_like(fin)
                    lob = hib = center
            if act == "drop":
                flag_rows |= flag.any(axis=1)
            elif act == "clip":
                sub = np.where(flag, np.where(sub < center, lob, hib), sub)
            elif act == "nan":
                sub = np.where(flag, np.nan, sub)
            elif act == "mean":
                sub = np.where(flag, v.mean(), sub)
            X[:, c] = sub
        keep &= ~flag_rows
    # step 3
    if normalize:
        for c, pt in zip(cols, passthrough):
            if pt:
                continue
            v = finite_vals(X, c)
            sub = X[:, c]
            if normalize == "minmax":
                mn, mx = v.min(), v.max()
                if mx == mn:
                    q = np.where(np.isfinite(sub), lo, sub)
                else:
                    q = (sub - mn) / (mx - mn)
                    if (lo, hi) != (0.0, 1.0):
                        q = lo + q * (hi - lo)
            else:
                m, s = v.mean(), v.std()
                q = np.where(np.isfinite(sub), 0.0, sub) if v.max() == v.min() else (sub - m) / s
            X[:, c] = q
    return X[keep], np.flatnonzero(~keep), dropped_nf


def close(got, want, dt, what):
    got = np.asarray(got, np.float64).ravel()
    want = np.asarray(want, np.float64).ravel()
    if got.shape != want.shape:
        check(what, False, f"shape {got.shape} != {want.shape}")
        return
    same_nan = np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    if dt == np.float32:
        w32 = want[fin].astype(np.float32).astype(np.float64)
        ulp = np.spacing(np.abs(w32).astype(np.float32)).astype(np.float64)
        ok = np.all(np.abs(got[fin] - w32) <= ulp)
    else:
        scale = np.max(np.abs(want[fin])) if fin.any() else 1.0
        ok = np.all(np.abs(got[fin] - want[fin]) <= 1e-12 * max(scale, 1.0))
    check(what, same_nan and ok and np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)]),
          f"max diff {np.nanmax(np.abs(got - want)) if got.size else 0}")


def path(name):
    return os.path.join(TMP, name)


def raw_case(tag, x, dt, opts, **ref):
    src = path(f"{tag}.in")
    out = path(f"{tag}.out")
    x.astype(dt).tofile(src)
    dname = "F32" if dt == np.float32 else "F64"
    shape = "x".join(str(s) for s in x.shape)
    rep = path(f"{tag}.json")
    args = ["--dtype", dname, "--shape", shape, src, "-o", out, "--report", rep,
            "--max-drop-fraction", "1"] + opts
    p = subprocess.run([EXE, "clean"] + args, capture_output=True, text=True)
    want, dropped, _ = reference(x.astype(dt), True, **ref)
    left_nan = np.isnan(want).any() or np.isinf(want).any()
    check(tag + " exit", p.returncode == (1 if left_nan else 0), f"{p.returncode} {p.stderr}")
    if not os.path.exists(out):
        check(tag, False, "no output")
        return
    got = np.fromfile(out, dtype=dt).reshape(want.shape)
    close(got, want, dt, tag)
    j = json.load(open(rep))
    t = j["tensors"][0]
    check(tag + " dropped", t["samples_dropped"]["total"] == len(dropped),
          f'{t["samples_dropped"]["total"]} != {len(dropped)}')
    check(tag + " first", t["samples_dropped"]["first"] == [int(i) for i in dropped[:5]],
          f'{t["samples_dropped"]["first"]} != {dropped[:5]}')
    check(tag + " out_shape", t["out_shape"] == list(want.shape) if x.ndim == 2 else
          t["out_shape"] == [want.shape[0]], str(t["out_shape"]))


def test_options_raw():
    rng = np.random.default_rng(42)
    one = rng.normal(3.0, 2.0, 2000)
    one[[7, 300, 1999]] = [40.0, -35.0, 50.0]
    one[[11, 500]] = [np.nan, np.inf]
    two = rng.normal(0, 1, (600, 4)) * [1, 10, 0.1, 5] + [0, 100, -3, 7]
    two[[5, 70, 300], [0, 1, 3]] = [30.0, 300.0, 100.0]
    two[[9, 99], [2, 3]] = [np.nan, -np.inf]
    cases = [
        ([], {}),
        (["--nonfinite", "zero"], dict(nonfinite="zero")),
        (["--nonfinite", "mean"], dict(nonfinite="mean")),
        (["--nonfinite", "value=-1.5"], dict(nonfinite="value", value=-1.5)),
        (["--nonfinite", "keep"], dict(nonfinite="keep")),
        (["--zscore", "3"], dict(method="zscore", k=3.0)),
        (["--zscore", "2.5", "--outliers", "clip"], dict(method="zscore", k=2.5, action="clip")),
        (["--zscore", "3", "--outliers", "nan"], dict(method="zscore", k=3.0, action="nan")),
        (["--zscore", "3", "--outliers", "mean", "--nonfinite", "zero"],
         dict(method="zscore", k=3.0, action="mean", nonfinite="zero")),
        (["--mad", "3.5"], dict(method="mad", k=3.5)),
        (["--mad", "3", "--outliers", "clip"], dict(method="mad", k=3.0, action="clip")),
        (["--normalize", "minmax"], dict(normalize="minmax")),
        (["--normalize", "minmax", "--feature-range", "-1:1"], dict(normalize="minmax", lo=-1.0, hi=1.0)),
        (["--normalize", "zscore"], dict(normalize="zscore")),
        (["--zscore", "3", "--normalize", "minmax"], dict(method="zscore", k=3.0, normalize="minmax")),
        (["--mad", "3.5", "--outliers", "nan", "--normalize", "zscore"],
         dict(method="mad", k=3.5, action="nan", normalize="zscore")),
        (["--global", "--zscore", "3", "--normalize", "zscore"],
         dict(glob=True, method="zscore", k=3.0, normalize="zscore")),
    ]
    for dt in (np.float64, np.float32):
        for data, dim in ((one, "1d"), (two, "2d")):
            for i, (opts, ref) in enumerate(cases):
                raw_case(f"{dim}-{np.dtype(dt).name}-{i}", data, dt, opts, **ref)


def test_scipy_zscore():
    """--normalize zscore equals scipy.stats.zscore (ddof=0) per column."""
    rng = np.random.default_rng(3)
    x = rng.normal(5, 3, (200, 3))
    x.tofile(path("sz.in"))
    run(["--dtype", "F64", "--shape", "200x3", path("sz.in"), "-o", path("sz.out"),
         "--normalize", "zscore"])
    got = np.fromfile(path("sz.out")).reshape(200, 3)
    close(got, scipy.stats.zscore(x, axis=0), np.float64, "scipy zscore")


def test_weights_safetensors():
    rng = np.random.default_rng(7)
    w = rng.normal(0, 0.02, (64, 32)).astype(np.float32)
    w[3, 4] = np.nan
    w[10, 10] = 5.0
    b = rng.normal(0, 1, 64)
    b[[1, 2]] = [np.inf, 40.0]
    other = np.arange(6, dtype=np.int32)
    src = path("w.safetensors")
    save_file({"layer.weight": w, "layer.bias": b, "steps": other}, src,
              metadata={"format": "np", "note": "x"})
    cases = [
        (["--nonfinite", "zero", "--zscore", "4", "--outliers", "clip"],
         dict(nonfinite="zero", method="zscore", k=4.0, action="clip")),
        (["--nonfinite", "mean", "--mad", "3.5", "--outliers", "mean", "--normalize", "minmax"],
         dict(nonfinite="mean", method="mad", k=3.5, action="mean", normalize="minmax")),
        (["--zscore", "3", "--outliers", "nan"], dict(method="zscore", k=3.0, action="nan")),
    ]
    for i, (opts, ref) in enumerate(cases):
        out = path(f"w{i}.safetensors")
        p = subprocess.run([EXE, "clean", src, "-o", out, "--include", "layer.*"] + opts,
                           capture_output=True, text=True)
        with safe_open(out, "numpy") as f:
            md = f.metadata()
            for name, arr in (("layer.weight", w), ("layer.bias", b)):
                want, _, _ = reference(arr, False, **ref)
                close(f.get_tensor(name), want.reshape(arr.shape), arr.dtype.type, f"w{i} {name}")
            check(f"w{i} copied", np.array_equal(f.get_tensor("steps"), other), "int tensor changed")
        left = any(np.isnan(reference(a, False, **ref)[0]).any() for a in (w, b))
        check(f"w{i} exit", p.returncode == (1 if left else 0), f"{p.returncode} {p.stderr}")
        check(f"w{i} metadata", md.get("format") == "np" and md.get("note") == "x", str(md))
        prov = json.loads(md["nanaudit"])
        import hashlib
        check(f"w{i} sha", prov["input_sha256"] == hashlib.sha256(open(src, "rb").read()).hexdigest(),
              prov["input_sha256"])
        check(f"w{i} version", prov["version"] == "0.1.0" and "clean" in prov["command"], str(prov))
        # tensor order: data_offsets order equal to the input's
        check(f"w{i} order", storage_order(out) == storage_order(src), str(storage_order(out)))
    # a copy cleaned again: its nanaudit entry is replaced by one that
    # describes the new copy (the input it was made from is w0)
    again = path("w0b.safetensors")
    subprocess.run([EXE, "clean", path("w0.safetensors"), "-o", again, "--nonfinite", "zero"],
                   capture_output=True, text=True)
    with safe_open(again, "numpy") as f:
        md = f.metadata()
    prov = json.loads(md["nanaudit"])
    import hashlib
    check("re-clean sha", prov["input_sha256"] ==
          hashlib.sha256(open(path("w0.safetensors"), "rb").read()).hexdigest(), str(prov))
    check("re-clean metadata", md.get("format") == "np" and md.get("note") == "x", str(md))


def test_nan_bits_kept():
    """A NaN that stays (--nonfinite keep, the weights' default) keeps its
    sign and payload in F16, BF16 and F32 as numpy's astype keeps them;
    F16 and BF16 NaN were all written 0x7E00 / 0x7FC0 (eighteenth
    fresh-user round). A signaling NaN comes back quiet, its payload kept
    (the widening to double makes it quiet, as on every IEEE machine)."""
    def raw_st(p, ts):  # safetensors.numpy cannot write BF16
        hdr, off, blobs = {}, 0, []
        for k, (dt, a) in ts.items():
            b = a.tobytes()
            hdr[k] = {"dtype": dt, "shape": [a.size], "data_offsets": [off, off + len(b)]}
            off += len(b)
            blobs.append(b)
        h = json.dumps(hdr).encode()
        h += b" " * (-len(h) % 8)
        with open(p, "wb") as fh:
            fh.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

    def bits(p, k, w):
        with open(p, "rb") as fh:
            d = fh.read()
        n = struct.unpack("<Q", d[:8])[0]
        a, b = json.loads(d[8:8 + n])[k]["data_offsets"]
        return np.frombuffer(d[8 + n + a:8 + n + b], {2: "<u2", 4: "<u4"}[w]).tolist()

    h = [0xFE00, 0x7E01, 0x7C01, 0xFC00, 0x3C00, 0x4000, 0x4200]  # -NaN, payload, sNaN, -Inf
    b = [0xFFC0, 0x7FC1, 0x7F81, 0x3F80, 0x4000, 0x4040, 0x4080]
    f = [0xFFC00000, 0x7FC00001, 0x7F800001, 0x3F800000, 0x40000000]
    src, out = path("nanbits.safetensors"), path("nanbits.c.safetensors")
    raw_st(src, {"h": ("F16", np.array(h, "<u2")), "b": ("BF16", np.array(b, "<u2")),
                 "f": ("F32", np.array(f, "<u4"))})
    run([src, "-o", out, "--zscore", "3", "--outliers", "clip"], expect=1)
    check("F16 NaN bits", bits(out, "h", 2) == [0xFE00, 0x7E01, 0x7E01] + h[3:],
          [hex(v) for v in bits(out, "h", 2)])
    check("BF16 NaN bits", bits(out, "b", 2) == [0xFFC0, 0x7FC1, 0x7FC1] + b[3:],
          [hex(v) for v in bits(out, "b", 2)])
    check("F32 NaN bits", bits(out, "f", 4) == [0xFFC00000, 0x7FC00001, 0x7FC00001] + f[3:],
          [hex(v) for v in bits(out, "f", 4)])
    # big-endian F16 (a '>f2' .npy) likewise (nineteenth fresh-user round:
    # canonical 0x7E00); the copy is little-endian
    src2, out2 = path("nanbits_be.npy"), path("nanbits_be.c.npy")
    np.save(src2, np.array(h, "<u2").view("<f2").astype(">f2"))
    run([src2, "-o", out2, "--nonfinite", "keep"], expect=1)
    got = np.load(out2)
    check("big-endian F16 NaN bits", got.dtype.str == "<f2" and
          got.view("<u2").tolist() == [0xFE00, 0x7E01, 0x7E01] + h[3:],
          f"{got.dtype.str} {[hex(v) for v in got.view(got.dtype.str[0] + 'u2').tolist()]}")
    # numpy's astype keeps the sign and payload of a quiet NaN the same way
    check("numpy -NaN F16", int(np.array([-np.nan]).astype(np.float16).view("<u2")[0]) == 0xFE00)


def storage_order(p):
    with open(p, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        h = json.loads(fh.read(n))
    h.pop("__metadata__", None)
    return sorted(h, key=lambda k: h[k]["data_offsets"][0])


def test_neg_inf_feature():
    x = np.array([[1.0, 10.0], [2.0, -np.inf], [3.0, 30.0], [4.0, 40.0]])
    x.tofile(path("ninf.in"))
    run(["--dtype", "F64", "--shape", "4x2", path("ninf.in"), "-o", path("ninf.out"),
         "--nonfinite", "mean", "--normalize", "zscore"])
    got = np.fromfile(path("ninf.out")).reshape(4, 2)
    want, _, _ = reference(x, True, nonfinite="mean", normalize="zscore")
    check("-inf feature", np.isfinite(got).all(), str(got))
    close(got, want, np.float64, "-inf feature values")
    # statistics from finite values only: the fill is mean(10, 30, 40)
    run(["--dtype", "F64", "--shape", "4x2", path("ninf.in"), "-o", path("ninf2.out"),
         "--nonfinite", "mean"])
    check("-inf fill", np.fromfile(path("ninf2.out")).reshape(4, 2)[1, 1] == np.mean([10.0, 30, 40]), "")


def test_band_sentinel():
    band = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, -2147483648.0], np.float32)
    band.tofile(path("band.f32"))
    rep = path("band.json")
    run(["--dtype", "F32", path("band.f32"), "-o", path("band.out"), "--zscore", "3",
         "--normalize", "minmax", "--report", rep])
    got = np.fromfile(path("band.out"), np.float32)
    j = json.load(open(rep))["tensors"][0]
    check("band outliers", j["samples_dropped"]["outliers"] == 1 and j["samples_dropped"]["first"] == [10],
          str(j["samples_dropped"]))
    check("band minmax", got.size == 10 and got[0] == 0.0 and got[9] == 1.0, str(got))


def test_five_values():
    x = np.array([3.60667, 9.199679, 5.830196, 2.658734, 4.492885])
    x.tofile(path("five.f64"))
    rep = path("five.json")
    run(["--dtype", "F64", path("five.f64"), "-o", path("five.out"), "--normalize", "zscore",
         "--report", rep])
    got = np.fromfile(path("five.out"))
    want = (x - 5.1576328) / 2.2751857
    check("five values", np.max(np.abs(got - (x - x.mean()) / x.std())) <= 1e-9, str(got))
    check("five values (issue numbers)", np.max(np.abs(got - want)) <= 1e-6, str(got - want))
    b = json.load(open(rep))["tensors"][0]["before"]
    check("five mean/std", abs(b["mean"] - 5.1576328) < 1e-7 and abs(b["std"] - 2.2751857) < 1e-7, str(b))


def test_seed_example():
    rng = np.random.default_rng(2024)
    x = rng.normal(10, 2, 5000)
    x[[17, 2000, 4000]] = [60.0, -40.0, 45.0]
    x.tofile(path("seed.f64"))
    run(["--dtype", "F64", path("seed.f64"), "-o", path("seed.out"), "--zscore", "3",
         "--normalize", "minmax"])
    got = np.fromfile(path("seed.out"))
    y = x[np.abs(x - x.mean()) <= 3 * x.std()]
    y = (y - y.min()) / (y.max() - y.min())
    check("seed example", got.shape == y.shape and np.max(np.abs(got - y)) <= 1e-12,
          f"{got.shape} {y.shape}")


def test_all_nan_feature():
    x = np.random.default_rng(5).normal(0, 1, (50, 3))
    x[:, 1] = np.nan
    x[4, 0] = np.inf
    x.tofile(path("allnan.in"))
    rep = path("allnan.json")
    p = run(["--dtype", "F64", "--shape", "50x3", path("allnan.in"), "-o", path("allnan.out"),
             "--normalize", "minmax", "--report", rep], expect=1)
    got = np.fromfile(path("allnan.out")).reshape(-1, 3)
    want, dropped, _ = reference(x, True, normalize="minmax")
    check("all-NaN rows", got.shape == (49, 3) and list(dropped) == [4], str(got.shape))
    check("all-NaN passes", np.isnan(got[:, 1]).all(), "")
    close(got, want, np.float64, "all-NaN others")
    j = json.load(open(rep))["tensors"][0]
    check("all-NaN warning", any("without any finite value" in w for w in j["warnings"]),
          str(j["warnings"]) + p.stdout)


def test_max_drop_fraction():
    x = np.random.default_rng(9).normal(0, 1, (400, 300))
    x.tofile(path("gauss.in"))
    rep = path("gauss.json")
    out = path("gauss.out")
    p = run(["--dtype", "F64", "--shape", "400x300", path("gauss.in"), "-o", out, "--zscore", "3",
             "--report", rep], expect=1)
    j = json.load(open(rep))
    check("max-drop refused", not os.path.exists(out) and not j["written"] and
          "max-drop-fraction" in (j["refused"] or ""), str(j["refused"]))
    check("max-drop message", "nothing written" in p.stderr, p.stderr)


def test_dry_run():
    x = np.arange(10, dtype=np.float64)
    x.tofile(path("dry.in"))
    before = set(os.listdir(TMP))
    p = run(["--dtype", "F64", path("dry.in"), "--dry-run", "--normalize", "minmax",
             "--format", "json"])
    j = json.loads(p.stdout)
    check("dry-run writes nothing", set(os.listdir(TMP)) == before and not j["written"], "")


def test_params_round_trip():
    rng = np.random.default_rng(11)
    train = rng.normal(5, 2, (300, 2))
    test = rng.normal(6, 3, (100, 2))
    train.tofile(path("train.in"))
    test.tofile(path("test.in"))
    pj = path("params.json")
    run(["--dtype", "F64", "--shape", "300x2", path("train.in"), "-o", path("train.out"),
         "--normalize", "zscore", "--save-params", pj])
    run(["--dtype", "F64", "--shape", "100x2", path("test.in"), "-o", path("test.out"),
         "--normalize", "zscore", "--apply-params", pj])
    got = np.fromfile(path("test.out")).reshape(100, 2)
    want = (test - train.mean(axis=0)) / train.std(axis=0)
    close(got, want, np.float64, "apply-params")
    again = path("train2.out")
    run(["--dtype", "F64", "--shape", "300x2", path("train.in"), "-o", again,
         "--normalize", "zscore", "--apply-params", pj])
    check("params round trip", np.array_equal(np.fromfile(again), np.fromfile(path("train.out"))), "")


def test_offset_tiny_spread():
    """1e9 + N(0, 1e-3) per feature: the fitted mean is the double nearest
    the exact one and the std that of the noise x - 1e9 (exact, Sterbenz)
    to 1e-12 relative. Block means merged as plain doubles were 8e-7 off
    (an ulp of 1e9 is 1.2e-7); numpy's own x.std(0) is ~4e-6 off here, so
    the reference is the noise's std."""
    rng = np.random.default_rng(21)
    x = 1e9 + rng.normal(0, 1e-3, (200003, 3))
    x.tofile(path("offset.in"))
    pj = path("offset.json")
    run(["--dtype", "F64", "--shape", "200003x3", path("offset.in"), "--dry-run",
         "--normalize", "zscore", "--save-params", pj, "-q"])
    p = json.load(open(pj))["tensors"]["data"]
    z = x - 1e9
    mean, std = np.array(p["n_mean"]), np.array(p["n_std"])
    check("offset: std", np.all(np.abs(std / z.std(axis=0) - 1) < 1e-12),
          f"{std.tolist()} vs {z.std(axis=0).tolist()}")
    exact = [1e9 + float(np.mean(z[:, j], dtype=np.longdouble)) for j in range(3)]
    check("offset: mean", np.all(np.abs(mean - exact) <= 0.5 * 2.0 ** -23 * 1.0000001),
          f"{mean.tolist()} vs {exact}")
    # --normalize zscore subtracts the mean itself (n_mean + n_mean_lo), not
    # the double nearest it: an ulp of 1e9 is 1.2e-4 of the std, so the
    # output was up to 6e-5 off; now ~1e-13 (numpy's own (x - x.mean(0)) /
    # x.std(0) is ~3e-3 off here)
    zm = np.array([np.mean(z[:, j], dtype=np.longdouble) for j in range(3)])
    lo = np.array(p["n_mean_lo"])
    check("offset: n_mean + n_mean_lo",
          np.all(np.abs((mean - 1e9 - zm) + lo) < 1e-15), f"{(mean - 1e9 - zm + lo).tolist()}")
    out = path("offset.out")
    run(["--dtype", "F64", "--shape", "200003x3", path("offset.in"), "--normalize", "zscore",
         "-o", out, "-q"])
    y = np.fromfile(out, dtype=np.float64).reshape(-1, 3)
    ref = ((z.astype(np.longdouble) - zm) / std).astype(np.float64)
    err = float(np.abs(y - ref).max())
    check("offset: z-scores", err < 1e-9, f"max error {err}")
    # the same through --apply-params: the same bytes; a file without
    # n_mean_lo (an older nanaudit) applies with the rounded mean
    out2 = path("offset.out2")
    run(["--dtype", "F64", "--shape", "200003x3", path("offset.in"), "--normalize", "zscore",
         "--apply-params", pj, "-o", out2, "-q"])
    check("offset: applied params give the same bytes",
          open(out, "rb").read() == open(out2, "rb").read())
    q = json.load(open(pj))
    del q["tensors"]["data"]["n_mean_lo"]
    pj_old = path("offset_old.json")
    json.dump(q, open(pj_old, "w"))
    run(["--dtype", "F64", "--shape", "200003x3", path("offset.in"), "--normalize", "zscore",
         "--apply-params", pj_old, "-o", out2, "-q", "--force"])
    y2 = np.fromfile(out2, dtype=np.float64).reshape(-1, 3)
    want = (x - mean) / std
    check("offset: a file without n_mean_lo subtracts n_mean", np.array_equal(y2, want),
          f"max diff {float(np.abs(y2 - want).max())}")


def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for t in tests:
        try:
            t()
        except Exception as e:  # noqa: BLE001 - any error is a failure
            FAILS.append(f"{t.__name__}: {e}")
            print(f"FAIL {t.__name__}: {e}")
    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        return 1
    print("PASS test_clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
