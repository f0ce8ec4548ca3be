#!/usr/bin/env python3
"""torch.save-format checkpoints written by tests/tools/make_pt.py (the
exact pickles and layouts torch writes, without needing torch), audited by
nanaudit and compared with numpy on the logical arrays of the views.

Cases: every storage type with a safetensors counterpart (F32 F64 F16 BF16
I64 I32 I16 I8 U8 BOOL, complex64 as NAME.real/.imag), nested dicts
flattened with dots (model.fc1.weight, optimizer.state.0.exp_avg) with
non-tensor entries as metadata, views with a storage offset, transposed
(non-contiguous) and Fortran-stride views, several tensors sharing one
storage, a Parameter (_rebuild_parameter), _rebuild_tensor_v3 with a dtype,
pickle protocols 2 and 4, a big-endian file, the zip layout with any folder
name, and the legacy (pre-1.6) layout. Locations must be the C-order
indices of the logical tensors. Numbers: nacheck.compare_tensor.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_torch_format.py
"""
import collections
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402
from make_pt import Storage, Tensor, save  # noqa: E402

K = 6.0
NAMES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
         "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
         "bool": "BOOL"}


def spiky(n, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(np.float64)
    if n >= 40:
        a[7], a[11], a[n - 3] = np.nan, np.inf, -np.inf
        a[n // 2] = 1e4
    return a.astype(dtype)


def build():
    """(object to save, [(name, dtype name, logical array)], metadata)"""
    exp = []
    sd = collections.OrderedDict()
    # every dtype, 2-D contiguous
    for i, (np_name, st) in enumerate(NAMES.items()):
        if np_name == "bfloat16":
            data = spiky(60, ml_dtypes.bfloat16, i)
        elif np_name == "bool":
            data = np.random.default_rng(i).integers(0, 2, 60).astype(bool)
        elif np_name.startswith(("int", "uint")):
            info = np.iinfo(np_name)
            data = np.random.default_rng(i).integers(max(info.min, -10**6),
                                                     min(info.max, 10**6), 60).astype(np_name)
        else:
            data = spiky(60, np_name, i)
        t = Tensor(Storage(data), 0, (6, 10), (10, 1))
        sd[f"dt.{np_name}"] = t
        exp.append((f"model.dt.{np_name}", st, t.array()))
    # complex64
    c = np.zeros(48, np.complex64)
    c.real, c.imag = spiky(48, np.float32, 20), spiky(48, np.float32, 21)
    t = Tensor(Storage(c), 0, (6, 8), (8, 1))
    sd["cplx"] = t
    exp.append(("model.cplx.real", "F32", t.array().real.copy()))
    exp.append(("model.cplx.imag", "F32", t.array().imag.copy()))
    # views of one shared storage: offset, transposed, Fortran strides, slice
    base = Storage(spiky(200, np.float32, 30))
    views = {
        "offset": Tensor(base, 17, (5, 6), (6, 1)),
        "transposed": Tensor(base, 0, (10, 20), (1, 10)),
        "fortran3d": Tensor(base, 3, (4, 5, 6), (1, 4, 20)),
        "every_other": Tensor(base, 1, (50,), (3,)),
        "broadcast": Tensor(base, 5, (3, 4), (0, 1)),
        "scalar": Tensor(base, 42, (), ()),
        "empty": Tensor(base, 0, (0, 4), (4, 1)),
    }
    for k, t in views.items():
        sd[f"view.{k}"] = t
        exp.append((f"model.view.{k}", "F32", t.array()))
    p = Tensor(Storage(spiky(12, np.float64, 40)), 0, (3, 4), (4, 1), parameter=True)
    sd["param"] = p
    exp.append(("model.param", "F64", p.array()))
    v3 = Tensor(Storage(spiky(9, np.float16, 41)), 0, (3, 3), (3, 1), v3_dtype="float16")
    sd["v3"] = v3
    exp.append(("model.v3", "F16", v3.array()))
    m = Tensor(Storage(spiky(100, np.float32, 50)), 0, (10, 10), (10, 1))
    ckpt = collections.OrderedDict()
    ckpt["model"] = sd
    ckpt["optimizer"] = {"state": {0: {"exp_avg": m, "step": 12}},
                         "param_groups": [{"lr": 0.001, "params": [0, 1, 2]}]}
    ckpt["epoch"] = 5
    exp.append(("optimizer.state.0.exp_avg", "F32", m.array()))
    meta = {"optimizer.state.0.step": "12", "optimizer.param_groups.0.lr": "0.001",
            "optimizer.param_groups.0.params": "[0, 1, 2]", "epoch": "5"}
    return ckpt, exp, meta


def check(path, exp, meta):
    code, doc = nacheck.scan([path])
    nan_inf = any(a.dtype.kind in "fV" and not np.isfinite(a.astype(np.float64)).all()
                  for _, _, a in exp)
    if code != (1 if nan_inf else 0):
        raise Mismatch(f"{path}: exit {code}")
    f = doc["files"][0]
    if f["format"] != "pytorch":
        raise Mismatch(f"{path}: format {f['format']!r}")
    names = [t["name"] for t in f["tensors"]]
    if names != [n for n, _, _ in exp]:
        raise Mismatch(f"{path}: tensors {names}\n expected {[n for n, _, _ in exp]}")
    for t, (name, dt, arr) in zip(f["tensors"], exp):
        e = nacheck.reference_stats(arr, K, 5)
        nacheck.compare_tensor(t, dt, e, K, f"{path}: {name}",
                               check_outliers=e["margin"] > nacheck.BORDERLINE)
    # non-tensor entries: `info` lists them as metadata
    out = subprocess.run([nacheck.nanaudit_path(), "info", path], capture_output=True,
                         text=True, timeout=60).stdout
    for k, v in meta.items():
        if f"metadata: {k} = {v}" not in out:
            raise Mismatch(f"{path}: info lacks 'metadata: {k} = {v}'")


def main():
    ckpt, exp, meta = build()
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("zip-p2.pt", {}), ("zip-p4.pt", {"protocol": 4}),
                 ("zip-folder.pth", {"folder": "my_model"}),
                 ("zip-big.pt", {"byteorder": "big"}),
                 ("legacy.pt", {"legacy": True}),
                 ("legacy-big.pt", {"legacy": True, "byteorder": "big"})]
        for name, kw in cases:
            p = os.path.join(tmp, name)
            save(ckpt, p, **kw)
            check(p, exp, meta)
            print(f"ok: {name}: {len(exp)} tensors ({', '.join(f'{k}={v}' for k, v in kw.items()) or 'zip, protocol 2'})")


if __name__ == "__main__":
    nacheck.run_main(main)
