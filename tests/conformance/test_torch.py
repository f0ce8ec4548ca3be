#!/usr/bin/env python3
"""Checkpoints written by the real torch.save (Debian's python3-torch 1.13,
CPU) audited by nanaudit and compared with numpy on what
torch.load(weights_only=True) gives back.

torch runs in its own interpreter: $NA_TORCH_PYTHON (scripts/test.sh makes
.venv-torch from /usr/bin/python3 with --system-site-packages), else
$NA_SRC/.venv-torch/bin/python, else a venv made here the same way. Not
the main venv: torch 1.13 needs Debian's numpy 1.x, while the main venv
may hold numpy 2 from PyPI, and PyPI's torch wheel pulls gigabytes of CUDA
libraries. tests/conformance/torch_writer.py writes, per file, the
checkpoint and its reference arrays (.ref.npz, .ref.json); this script
compares (nacheck.compare_tensor: counts and min/max exact, mean/std to
1e-12*(|mean|+std), NaN/Inf/outlier locations exact).

Files: a state dict with every dtype torch 1.13 has that safetensors names
(F32 F64 F16 BF16 I64 I32 I16 I8 U8 BOOL, complex64 as .real/.imag), views
sharing one storage (transposed, sliced rows with a storage offset, every
other column, a Fortran-strided tensor), a 0-d and an empty tensor, an
nn.Parameter; a nested training checkpoint ({'model', 'optimizer',
'epoch'}); both again in the legacy format (_use_new_zipfile_serialization
=False).
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_torch.py
"""
import json
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402

K = 6.0


def torch_python(tmp):
    cand = os.environ.get("NA_TORCH_PYTHON") or os.path.join(
        os.environ.get("NA_SRC") or os.path.join(HERE, "..", ".."), ".venv-torch", "bin", "python")
    if not os.path.exists(cand):
        venv = os.path.join(tmp, "venv-torch")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages",
                        "--without-pip", venv], check=True)
        cand = os.path.join(venv, "bin", "python")
    p = subprocess.run([cand, "-c", "import torch"], capture_output=True, text=True)
    if p.returncode != 0:
        raise Mismatch(f"{cand} cannot import torch: install Debian's python3-torch "
                       f"(scripts/setup.sh --deps): {p.stderr.strip()[-200:]}")
    return cand


def main():
    with tempfile.TemporaryDirectory() as tmp:
        py = torch_python(tmp)
        out = os.path.join(tmp, "files")
        os.mkdir(out)
        p = subprocess.run([py, os.path.join(HERE, "torch_writer.py"), out],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise Mismatch(f"torch_writer.py failed: {p.stderr[-600:]}")
        print(p.stdout.strip())
        files = sorted(f for f in os.listdir(out) if not f.endswith((".npz", ".json")))
        for fn in files:
            path = os.path.join(out, fn)
            with open(path + ".ref.json") as f:
                order = json.load(f)
            ref = np.load(path + ".ref.npz")
            code, doc = nacheck.scan([path])
            got = doc["files"][0]["tensors"]
            if doc["files"][0]["format"] != "pytorch":
                raise Mismatch(f"{fn}: format {doc['files'][0]['format']!r}")
            if [t["name"] for t in got] != [n for n, _ in order]:
                raise Mismatch(f"{fn}: tensors {[t['name'] for t in got]}, torch "
                               f"{[n for n, _ in order]}")
            any_bad = False
            for i, (t, (name, dt)) in enumerate(zip(got, order)):
                arr = ref[f"a{i}"]
                if dt == "BF16":
                    arr = arr.view(ml_dtypes.bfloat16)
                if arr.dtype.kind in "fV":
                    any_bad |= not np.isfinite(arr.astype(np.float64)).all()
                exp = nacheck.reference_stats(arr, K, 5)
                nacheck.compare_tensor(t, dt, exp, K, f"{fn}: {name}",
                                       check_outliers=exp["margin"] > nacheck.BORDERLINE)
            if code != (1 if any_bad else 0):
                raise Mismatch(f"{fn}: exit {code}")
            print(f"ok: {fn}: {len(order)} tensors agree with torch.load + numpy")


if __name__ == "__main__":
    nacheck.run_main(main)
