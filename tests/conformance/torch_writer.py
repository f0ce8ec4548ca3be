#!/usr/bin/env python3
"""torch_writer.py OUTDIR - run by test_torch.py under Debian's
python3-torch (a venv from /usr/bin/python3 with --system-site-packages;
see scripts/test.sh). Writes checkpoints with the real torch.save and,
for each, the reference: torch.load(weights_only=True), flattened with
dots, every tensor as a numpy array in OUTDIR/NAME.ref.npz (BF16 as its
uint16 bits, complex as .real/.imag) plus the order and dtypes in
OUTDIR/NAME.ref.json. Not a test itself (ctest runs test_*.py only).
"""
import collections
import json
import os
import pickle
import sys

import numpy as np
import torch

OUT = sys.argv[1]
DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
          torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32", torch.int16: "I16",
          torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL", torch.complex64: "C64"}


def spiky(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    flat = x.view(-1)
    if flat.numel() >= 40:
        flat[7], flat[11], flat[-3] = float("nan"), float("inf"), float("-inf")
        flat[flat.numel() // 2] = 1e4
    return x.to(dtype)


def state_dict():
    sd = collections.OrderedDict()
    for i, dt in enumerate(DTYPES):
        if dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
            t = spiky((6, 10), dt, i)
        elif dt == torch.bool:
            t = torch.randint(0, 2, (6, 10), generator=torch.Generator().manual_seed(i)).bool()
        elif dt == torch.complex64:
            t = torch.complex(spiky((6, 10), torch.float32, i), spiky((6, 10), torch.float32, 99))
        else:
            hi = 100 if dt in (torch.int8, torch.uint8) else 10**4
            lo = 0 if dt == torch.uint8 else -hi
            t = torch.randint(lo, hi, (6, 10), generator=torch.Generator().manual_seed(i)).to(dt)
        sd[f"dt.{str(dt)[6:]}"] = t
    base = spiky((20, 10), torch.float32, 50)
    sd["view.base"] = base
    sd["view.transposed"] = base.t()                   # shares the storage, strides (1, 10)
    sd["view.rows"] = base[5:9]                         # storage offset 50
    sd["view.every_other"] = base[:, ::2]               # non-contiguous
    sd["view.fortran"] = spiky((4, 5, 6), torch.float64, 51).permute(2, 1, 0).contiguous().permute(2, 1, 0)
    sd["view.scalar"] = torch.tensor(3.5)
    sd["view.empty"] = torch.zeros(0, 4)
    sd["param"] = torch.nn.Parameter(spiky((3, 4), torch.float32, 52))
    return sd


def flatten(obj, prefix, out):
    if isinstance(obj, torch.Tensor):
        out.append((prefix, obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)) and any(isinstance(v, (torch.Tensor, dict)) for v in obj):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}.{i}" if prefix else str(i), out)


def reference(name, path):
    try:
        obj = torch.load(path, weights_only=True)
    except pickle.UnpicklingError:
        # torch 1.13's weights-only unpickler lacks BINFLOAT (the 'lr'
        # float); this file was written just above, so a full load is safe
        obj = torch.load(path, weights_only=False)
    items = []
    flatten(obj, "", items)
    arrays, order = {}, []
    for k, t in items:
        dt = DTYPES[t.dtype]
        t = t.detach().contiguous()
        if dt == "C64":
            for part, a in ((".real", t.real), (".imag", t.imag)):
                arrays[k + part] = a.contiguous().numpy()
                order.append([k + part, "F32"])
        elif dt == "BF16":
            arrays[k] = t.view(torch.int16).numpy().view(np.uint16)
            order.append([k, dt])
        else:
            arrays[k] = t.numpy()
            order.append([k, dt])
    np.savez(os.path.join(OUT, name + ".ref.npz"), **{f"a{i}": arrays[k] for i, (k, _) in enumerate(order)})
    with open(os.path.join(OUT, name + ".ref.json"), "w") as f:
        json.dump(order, f)


def main():
    sd = state_dict()
    ckpt = {"model": sd, "epoch": 5,
            "optimizer": {"state": {0: {"exp_avg": spiky((10, 10), torch.float32, 60), "step": 3}},
                          "param_groups": [{"lr": 0.001, "params": [0]}]}}
    files = {"state_dict.pt": (sd, {}), "checkpoint.pth": (ckpt, {}),
             "legacy.pt": (sd, {"_use_new_zipfile_serialization": False}),
             "legacy_ckpt.bin": (ckpt, {"_use_new_zipfile_serialization": False})}
    for name, (obj, kw) in files.items():
        path = os.path.join(OUT, name)
        torch.save(obj, path, **kw)
        reference(name, path)
    print("torch", torch.__version__, "wrote", " ".join(files))


if __name__ == "__main__":
    main()
