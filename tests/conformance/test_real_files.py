#!/usr/bin/env python3
"""Real files: every *.safetensors file anywhere under tests/data/real/ (written by
other people's software; origins in tests/data/real/SOURCES.md) audited by
nanaudit and compared tensor by tensor with numpy.

The reference loader decides validity (DESIGN.md: "a safetensors file is
valid when the reference loader accepts it"): safetensors.deserialize reads
the file without torch; BF16 and F8 are viewed with ml_dtypes. For a valid
file: exit 1 if numpy finds NaN/Inf (default --fail-on nan,inf), else 0;
every tensor present, in storage (data_offsets) order, with the values of
nacheck.compare_tensor (counts, min/max exact; mean/std to
1e-12*(|mean|+std); outlier count and locations at the default K = 6 unless
a value lies within 1e-9 std of the threshold, which is then reported and
skipped). A file the reference refuses must give exit 3 and a file error.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_real_files.py
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402

K_DEFAULT = 6.0
N_DEFAULT = 5
DATA = os.environ.get("NA_TEST_DATA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "data")
# The files this test was written for (others may add more under real/).
EXPECTED = ["burn-mnist", "burn-multi_layer", "candle-jfk-codes", "candle-voices",
            "fluxml-model.numpy", "fluxml-model", "fluxml-model.with_metadata",
            "mlverse-hello", "modelaudit-malicious_import", "modelaudit-safe_model",
            "swiftst-data", "syoyo-model"]


def reference_valid(path):
    try:
        return nacheck.read_reference(path), None
    except Mismatch:
        raise
    except Exception as e:  # the reference loader's refusal
        return None, str(e)


def check_valid(path, ref):
    exps = [nacheck.reference_stats(arr, K_DEFAULT, N_DEFAULT) for _, _, arr in ref]
    rc, doc = nacheck.scan([path])
    want_rc = 1 if any(e["nan"] or e["pos_inf"] or e["neg_inf"] for e in exps) else 0
    if rc != want_rc:
        raise Mismatch(f"{path}: exit {rc}, expected {want_rc}")
    f = doc["files"][0]
    if f.get("status") != "ok" or f.get("format") != "safetensors":
        raise Mismatch(f"{path}: file status {f.get('status')!r} format {f.get('format')!r}:"
                       f" {f.get('error')}")
    got_names = [t["name"] for t in f["tensors"]]
    order = nacheck.header_order(path)
    if got_names != order:
        raise Mismatch(f"{path}: tensors {got_names}, expected storage order {order}")
    got = {t["name"]: t for t in f["tensors"]}
    for (name, dtype, _), exp in zip(ref, exps):
        stable = exp["margin"] >= nacheck.BORDERLINE
        nacheck.compare_tensor(got[name], dtype, exp, K_DEFAULT,
                               f"{os.path.basename(path)}: {name}", check_outliers=stable)
        note = "" if stable else " (outlier count not compared: value at the threshold)"
        print(f"  ok {nacheck.describe(name, dtype, exp)}{note}")
    print(f"ok {os.path.relpath(path, DATA)}: {len(ref)} tensors, exit {rc}")


def check_invalid(path, why):
    rc, doc = nacheck.scan([path])
    f = doc["files"][0]
    if rc != 3 or f.get("status") != "error" or not f.get("error"):
        raise Mismatch(f"{path}: reference refuses it ({why}) but nanaudit gave exit {rc},"
                       f" status {f.get('status')!r}")
    print(f"ok {os.path.relpath(path, DATA)}: refused by reference and nanaudit (exit 3):"
          f" {f['error']}")


def body():
    real = os.path.join(DATA, "real")
    for stem in EXPECTED:
        if not os.path.exists(os.path.join(real, "safetensors", stem + ".safetensors")):
            raise Mismatch(f"missing test file safetensors/{stem}.safetensors under {real}")
    paths = sorted(glob.glob(os.path.join(real, "**", "*.safetensors"), recursive=True))
    for path in paths:
        ref, why = reference_valid(path)
        if ref is None:
            check_invalid(path, why)
        else:
            check_valid(path, ref)
    print(f"checked {len(paths)} real safetensors files")


if __name__ == "__main__":
    nacheck.run_main(body)
