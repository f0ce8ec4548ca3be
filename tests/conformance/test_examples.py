#!/usr/bin/env python3
"""examples/: the committed sample files are what examples/make_examples.py
writes (byte for byte, with the official safetensors writer), and nanaudit
reports them as examples/README.md says: clean.safetensors exit 0 with no
failing finding; nan.safetensors exit 1 with the NaN at [3, 5] and the +Inf
at [10, 0] of layer1.weight; both compared with numpy like every other file.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_examples.py
"""
import filecmp
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402

SRC = os.environ.get("NA_SRC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EX = os.path.join(SRC, "examples")


def check_regenerated():
    with tempfile.TemporaryDirectory(prefix="nanaudit-ex-") as tmp:
        subprocess.run([sys.executable, os.path.join(EX, "make_examples.py"), tmp],
                       check=True, capture_output=True)
        for name in ("clean.safetensors", "nan.safetensors"):
            if not filecmp.cmp(os.path.join(tmp, name), os.path.join(EX, name), shallow=False):
                raise Mismatch(f"examples/{name} differs from what make_examples.py writes")
            print(f"ok examples/{name} is byte-identical to make_examples.py's output")


def check_scan(name, want_rc, want_nan, want_inf):
    path = os.path.join(EX, name)
    rc, doc = nacheck.scan([path])
    if rc != want_rc:
        raise Mismatch(f"examples/{name}: exit {rc}, expected {want_rc}")
    got = {t["name"]: t for t in doc["files"][0]["tensors"]}
    for tname, dtype, arr in nacheck.read_reference(path):
        exp = nacheck.reference_stats(arr, 6.0, 5)
        nacheck.compare_tensor(got[tname], dtype, exp, 6.0, f"examples/{name}: {tname}")
    w = got["layer1.weight"]
    if (w["nan_locations"], w["inf_locations"]) != (want_nan, want_inf):
        raise Mismatch(f"examples/{name}: layer1.weight NaN at {w['nan_locations']}, Inf at "
                       f"{w['inf_locations']}; expected {want_nan}, {want_inf}")
    print(f"ok examples/{name}: exit {rc}, NaN at {want_nan}, Inf at {want_inf}, "
          f"{len(got)} tensors match numpy")


def body():
    check_regenerated()
    check_scan("clean.safetensors", 0, [], [])
    check_scan("nan.safetensors", 1, [[3, 5]], [[10, 0]])


if __name__ == "__main__":
    nacheck.run_main(body)
