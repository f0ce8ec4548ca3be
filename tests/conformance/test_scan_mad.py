#!/usr/bin/env python3
"""Conformance of `nanaudit scan --mad K` (issue 4) against numpy.

Reference (DESIGN.md "Definitions", Iglewicz & Hoaglin 1993), in float64
over the finite values f of a tensor x: median = np.median(f) (exact: the
mean of the two middle values of an even count), MAD =
np.median(abs(f - median)); a finite x is flagged when
abs(0.6745 * (x - median) / MAD) > K; when MAD == 0 the test is
abs((x - median) / (1.253314 * MeanAD)) > K with MeanAD =
sum(abs(f - median)) / n summed in element order (math.fsum is not the
reference: nanaudit adds in order, as `clean --mad` does); nothing is
flagged when MeanAD is 0 too. NaN and Inf never enter the median.

Checked exactly: median, MAD, the count and every location (row-major
multi-indices, --max-locations large enough for all) on F32/F64/BF16
1-D (odd count) and 2-D (even count) data with NaN/Inf; the MAD == 0
fallback; an all-equal tensor and an all-NaN one (nothing flagged);
identical JSON for --threads 1, 2, 3 and 16; `clean --mad` flags the same
values (its set_nan count with --outliers nan, its dropped samples with
--samples on 1-D data); usage errors (--zscore with --mad, --device cuda
with --mad, --mad 0) are exit 2 with their one-line message.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_scan_mad.py
"""
import atexit
import json
import os
import struct
import subprocess
import sys
import shutil
import tempfile

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402

EXE = nacheck.nanaudit_path()
TMP = tempfile.mkdtemp(prefix="nascanmad.")
atexit.register(shutil.rmtree, TMP, True)
FAILS = []
MAXLOC = 100000
ST_NAME = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64",
           np.dtype(ml_dtypes.bfloat16): "BF16"}


def check(name, cond, msg=""):
    if not cond:
        FAILS.append(f"{name}: {msg}")
        print(f"FAIL {name}: {msg}")


def write_st(path, tensors):
    """A safetensors file written by the format's rules (header length,
    JSON header, contiguous data in order); BF16 is not in
    safetensors.numpy, so the bytes are laid out here."""
    header, blobs, off = {}, [], 0
    for name, a in tensors:
        b = np.ascontiguousarray(a).tobytes()  # little-endian host (x86-64, arm64)
        header[name] = {"dtype": ST_NAME[a.dtype], "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def reference(x, k):
    v = x.astype(np.float64)
    fin = np.isfinite(v)
    f = v[fin]
    if f.size == 0:
        return None, None, 0, []
    med = np.median(f)
    mad = np.median(np.abs(f - med))
    with np.errstate(all="ignore"):
        if mad > 0:
            flag = fin & (np.abs(0.6745 * (v - med) / mad) > k)
        else:
            acc = 0.0
            for d in np.abs(f - med):  # element order, as nanaudit sums
                acc += float(d)
            meanad = acc / f.size
            flag = fin & (np.abs((v - med) / (1.253314 * meanad)) > k) if meanad > 0 \
                else np.zeros_like(fin)
    locs = [list(map(int, i)) for i in np.argwhere(flag)]
    return float(med), float(mad), int(flag.sum()), locs


def scan(path, *args, expect=None):
    p = subprocess.run([EXE, "scan", "--format", "json", "--fail-on", "none",
                        "--max-locations", str(MAXLOC), *args, path],
                       capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        raise AssertionError(f"exit {p.returncode} for {args} {path}: {p.stderr}")
    return p, (json.loads(p.stdout) if p.stdout.strip() else None)


def tensors_of(doc):
    return {t["name"]: t for f in doc["files"] for t in f["tensors"]}


def data(rng, shape, dt):
    x = rng.standard_normal(shape) * 2.0 + 1.0
    flat = x.reshape(-1)
    idx = rng.choice(flat.size, 40, replace=False)
    flat[idx[:30]] *= 25.0                     # outliers
    flat[idx[30:34]] = np.nan
    flat[idx[34:37]] = np.inf
    flat[idx[37:]] = -np.inf
    return x.astype(dt)


def test_exact():
    rng = np.random.default_rng(20260403)
    cases = []
    for dt in (np.float32, np.float64, ml_dtypes.bfloat16):
        for shape in ((20001,), (101, 200)):
            cases.append((f"{np.dtype(dt).name}_{len(shape)}d", data(rng, shape, dt)))
    zero = np.zeros(3000, np.float32)           # MAD == 0: 2/3 of the values equal
    zero[rng.choice(3000, 900, replace=False)] = rng.standard_normal(900) * 3
    zero[5] = 50.0
    cases.append(("mad_zero", zero))
    cases.append(("all_equal", np.full((40, 25), 2.5, np.float64)))
    allnan = np.full(64, np.nan, np.float32)
    cases.append(("all_nan", allnan))
    twoval = np.array([1.0] * 6 + [7.0] * 4 + [np.nan, -np.inf], np.float64)  # MeanAD > 0
    cases.append(("two_values", twoval))
    path = os.path.join(TMP, "mad.safetensors")
    write_st(path, cases)
    _, doc = scan(path, "--mad", "3.5", expect=0)
    got = tensors_of(doc)
    check("root", doc.get("mad") == 3.5 and doc.get("zscore") == 0.0, str(doc.get("mad")))
    for name, x in cases:
        med, mad, cnt, locs = reference(x, 3.5)
        o = got[name]["outliers"]
        check(name, o["method"] == "mad" and o["threshold"] == 3.5, str(o))
        check(name, o["median"] == med, f"median {o['median']} != {med}")
        check(name, o["mad"] == mad, f"mad {o['mad']} != {mad}")
        check(name, o["count"] == cnt, f"count {o['count']} != {cnt}")
        check(name, o["locations"] == locs, "locations differ")
        if mad == 0 and name != "all_nan":
            check(name, o["meanad"] is not None, "meanad missing with MAD 0")
        print(f"ok {name}: median {med} mad {mad} flagged {cnt}")
    check("mad_zero flags", reference(zero, 3.5)[2] > 0, "fallback case flags nothing")
    check("all_equal", got["all_equal"]["outliers"]["count"] == 0, "")

    # Identical JSON for any thread count.
    outs = set()
    for th in ("1", "2", "3", "16"):
        p, _ = scan(path, "--mad", "3.5", "--threads", th, expect=0)
        outs.add(p.stdout)
    check("threads", len(outs) == 1, f"{len(outs)} different outputs")

    # clean --mad flags the same values (weights: one statistic per tensor).
    for name, x in cases:
        if name == "all_nan":
            continue
        one = os.path.join(TMP, f"one_{name}.safetensors")
        write_st(one, [(name, x)])
        rep = os.path.join(TMP, f"clean_{name}.json")
        out = os.path.join(TMP, f"out_{name}.safetensors")
        p = subprocess.run([EXE, "clean", one, "--mad", "3.5", "--outliers", "nan",
                            "--nonfinite", "keep", "-o", out, "--force", "--report", rep],
                           capture_output=True, text=True)
        check(f"clean {name}", p.returncode in (0, 1), p.stderr)
        ct = json.load(open(rep))["tensors"][0]
        check(f"clean {name}", ct["set_nan"] == got[name]["outliers"]["count"],
              f"clean set_nan {ct['set_nan']} != scan {got[name]['outliers']['count']}")
        if x.ndim == 1:
            p = subprocess.run([EXE, "clean", one, "--samples", "--mad", "3.5", "--outliers",
                                "drop", "--nonfinite", "keep", "--max-drop-fraction", "1",
                                "--dry-run", "--max-locations", str(MAXLOC), "--report", rep],
                               capture_output=True, text=True)
            first = json.load(open(rep))["tensors"][0]["samples_dropped"]["first"]
            check(f"clean drop {name}", first == [l[0] for l in got[name]["outliers"]["locations"]],
                  "dropped samples differ from scan's locations")


def test_text_and_usage():
    path = os.path.join(TMP, "u.safetensors")
    write_st(path, [("x", np.array([1.0, 2.0, 3.0, 4.0, 100.0]))])
    p = subprocess.run([EXE, "scan", "--mad", "3.5", path], capture_output=True, text=True)
    check("text", "modified z-score" in p.stdout and "median, MAD" in p.stdout, p.stdout)
    check("text", "1 outlier with modified z-score |0.6745 (x - 3) / 1| > 3.5" in p.stdout,
          p.stdout)
    for args, msg in ((["--zscore", "3", "--mad", "3.5"], "give one of --zscore and --mad"),
                      (["--mad", "3.5", "--device", "cuda"], "--mad runs on the CPU only"),
                      (["--mad", "0"], "--mad: '0' is not a number > 0")):
        p = subprocess.run([EXE, "scan", *args, path], capture_output=True, text=True)
        check(f"usage {args}", p.returncode == 2 and msg in p.stderr and not p.stdout,
              f"exit {p.returncode}: {p.stderr}")
    # auto picks the CPU: the report says so.
    _, doc = scan(path, "--mad", "3.5", "--device", "auto", expect=0)
    check("auto", doc["device"] == "cpu", doc["device"])


def main():
    test_exact()
    test_text_and_usage()
    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        return 1
    print("all scan --mad checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
