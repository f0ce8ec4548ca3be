#!/usr/bin/env python3
"""`nanaudit clean` on NumPy .npz input writes .npz (issue 4,
formats/npz_write.c), checked with np.load and zipfile against the numpy
reference of test_clean.py (same steps, same tolerances: 1e-12 relative for
F64, one F32 ulp):

  - --nonfinite drop, and --zscore 3 --normalize minmax, on np.savez and
    np.savez_compressed archives of three members (1-D F64, 2-D F32, and a
    1-D big-endian '>f8' one, written little-endian once cleaned): each
    member's values, dtype and shape; the member order and names (one
    with '/') of the input; every member stored (savez) or deflated
    (savez_compressed) as in the input; each cleaned member's .npy header
    is byte for byte the one np.save writes;
  - an excluded member is copied byte for byte (same bytes, same CRC-32,
    same compressed size: not re-compressed);
  - --together x,y across members: a sample dropped from one is dropped
    from the other (rows with a non-finite value in either).
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_clean_npz.py
"""
import io
import os
import subprocess
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_clean as tc  # noqa: E402  (its numpy reference and comparison)
from test_clean_npy import header_of  # noqa: E402

EXE = tc.EXE
TMP = tc.TMP


def clean(src, out, opts):
    p = subprocess.run([EXE, "clean", src, "-o", out, "--max-drop-fraction", "1"] + opts,
                       capture_output=True, text=True)
    return p


def inputs():
    rng = np.random.default_rng(11)
    a = rng.normal(3.0, 2.0, 1500)
    a[[7, 300, 1499]] = [40.0, -35.0, 50.0]
    a[[11, 500]] = [np.nan, np.inf]
    b = rng.normal(0, 1, (500, 4)) * [1, 10, 0.1, 5] + [0, 100, -3, 7]
    b[[5, 70, 300], [0, 1, 3]] = [30.0, 300.0, 100.0]
    b[[9, 99], [2, 3]] = [np.nan, -np.inf]
    c = rng.normal(-1.0, 0.5, 700)
    c[[3, 650]] = [9.0, np.nan]
    # names in an order that is not sorted, one with '/'
    return {"zeta": a, "grp/b": b.astype(np.float32), "alpha": c.astype(">f8")}


def check_members(tag, src, out, members, ref, excluded=()):
    za, zb = zipfile.ZipFile(src), zipfile.ZipFile(out)
    ia, ib = za.infolist(), zb.infolist()
    tc.check(tag + " order", [i.filename for i in ib] == [i.filename for i in ia],
             str([i.filename for i in ib]))
    tc.check(tag + " compression", [i.compress_type for i in ib] == [i.compress_type for i in ia],
             str([i.compress_type for i in ib]))
    tc.check(tag + " testzip", zb.testzip() is None, "bad CRC")
    got = np.load(out)
    tc.check(tag + " keys", list(got.keys()) == list(members), str(list(got.keys())))
    for name, x in members.items():
        y = got[name]
        if name in excluded:
            ma, mb = za.getinfo(name + ".npy"), zb.getinfo(name + ".npy")
            tc.check(f"{tag} {name} copied", za.read(ma) == zb.read(mb) and ma.CRC == mb.CRC and
                     ma.compress_size == mb.compress_size, "not byte for byte")
            tc.check(f"{tag} {name} dtype kept", y.dtype == x.dtype, str(y.dtype))
            continue
        dt = x.dtype.newbyteorder("<")
        tc.check(f"{tag} {name} dtype", y.dtype == dt, str(y.dtype))
        want, _, _ = tc.reference(x.astype(dt), True, **ref)
        want = want.reshape((want.shape[0],) + x.shape[1:])
        tc.check(f"{tag} {name} shape", y.shape == want.shape, f"{y.shape} != {want.shape}")
        tc.close(y, want, dt.type, f"{tag} {name}")
        buf = io.BytesIO()
        np.save(buf, y)
        tc.check(f"{tag} {name} header", header_of(zb.read(name + ".npy")) ==
                 header_of(buf.getvalue()), "not np.save's")
    print(f"ok {tag}")


def test_options():
    members = inputs()
    cases = [(["--nonfinite", "drop"], dict(nonfinite="drop")),
             (["--zscore", "3", "--normalize", "minmax"],
              dict(method="zscore", k=3.0, normalize="minmax"))]
    for save, kind in ((np.savez, "stored"), (np.savez_compressed, "deflated")):
        src = os.path.join(TMP, f"{kind}.npz")
        save(src, **members)
        for i, (opts, ref) in enumerate(cases):
            out = os.path.join(TMP, f"{kind}.{i}.out.npz")
            p = clean(src, out, opts)
            tc.check(f"{kind}-{i} exit", p.returncode == 0, f"{p.returncode} {p.stderr}")
            if p.returncode == 0:
                check_members(f"{kind}-{i}", src, out, members, ref)
        # an excluded member: its stored or deflated bytes as they were
        out = os.path.join(TMP, f"{kind}.ex.out.npz")
        p = clean(src, out, ["--nonfinite", "drop", "--exclude", "grp/*"])
        tc.check(f"{kind}-exclude exit", p.returncode == 0, f"{p.returncode} {p.stderr}")
        if p.returncode == 0:
            check_members(f"{kind}-exclude", src, out, members, dict(nonfinite="drop"),
                          excluded=("grp/b",))


def test_together():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 3)).astype(np.float32)
    x[[4, 40], [0, 2]] = [np.nan, np.inf]
    y = rng.normal(size=300)
    y[[40, 77, 200]] = [np.nan, -np.inf, np.nan]
    for save, kind in ((np.savez, "stored"), (np.savez_compressed, "deflated")):
        src = os.path.join(TMP, f"tog.{kind}.npz")
        out = os.path.join(TMP, f"tog.{kind}.out.npz")
        save(src, x=x, y=y)
        p = clean(src, out, ["--nonfinite", "drop", "--together", "x,y"])
        tc.check(f"together-{kind} exit", p.returncode == 0, f"{p.returncode} {p.stderr}")
        if p.returncode != 0:
            continue
        keep = np.isfinite(x).all(axis=1) & np.isfinite(y)
        got = np.load(out)
        tc.check(f"together-{kind} drops 4 rows", (~keep).sum() == 4, str(np.where(~keep)))
        tc.check(f"together-{kind} x", np.array_equal(got["x"], x[keep]), "rows differ")
        tc.check(f"together-{kind} y", np.array_equal(got["y"], y[keep]), "rows differ")
        tc.check(f"together-{kind} order", list(got.keys()) == ["x", "y"], str(list(got.keys())))
        print(f"ok together-{kind}")


def main():
    test_options()
    test_together()
    if tc.FAILS:
        print(f"{len(tc.FAILS)} failure(s)")
        return 1
    print("all clean .npz checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
