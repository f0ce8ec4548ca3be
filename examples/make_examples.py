#!/usr/bin/env python3
"""Write the two sample checkpoints in examples/ with the official writer.

    .venv/bin/python examples/make_examples.py        # rewrites both files
    .venv/bin/python examples/make_examples.py DIR    # writes them into DIR

clean.safetensors  a tiny "model": F32, BF16 and I64 tensors, no NaN/Inf,
                   so `nanaudit scan examples/clean.safetensors` exits 0.
nan.safetensors    the same layout after a bad step: one NaN and one +Inf
                   in the F32 weight, so the scan exits 1 (default
                   --fail-on nan,inf).

Both are written by safetensors.numpy.save_file (the reference
implementation, https://github.com/huggingface/safetensors); BF16 comes from
ml_dtypes.bfloat16, which safetensors maps to "BF16". A fixed seed makes the
output byte-identical on every run, so the committed files can be checked
against this script (tests/conformance/test_examples.py does).
"""
import os
import sys

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def model(rng):
    """The clean tensors: a 2-layer MLP's weights plus a step counter."""
    return {
        "layer1.weight": (rng.standard_normal((16, 8)) * 0.1).astype(np.float32),
        "layer1.bias": np.zeros(16, dtype=np.float32),
        "layer2.weight": (rng.standard_normal((4, 16)) * 0.1).astype(ml_dtypes.bfloat16),
        "layer2.bias": np.linspace(-0.5, 0.5, 4).astype(ml_dtypes.bfloat16),
        "step": np.array(1000, dtype=np.int64),  # a scalar, shape []
    }


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(20261129)
    clean = model(rng)
    # One key only: the writer stores __metadata__ in hash-map order, so
    # several keys would make the bytes differ from run to run.
    meta = {"note": "nanaudit example, see examples/README.md"}
    save_file(clean, os.path.join(out_dir, "clean.safetensors"), metadata=meta)

    bad = {k: v.copy() for k, v in clean.items()}
    w = bad["layer1.weight"]
    w[3, 5] = np.nan   # flat index 29
    w[10, 0] = np.inf  # flat index 80
    save_file(bad, os.path.join(out_dir, "nan.safetensors"), metadata=meta)
    for name in ("clean.safetensors", "nan.safetensors"):
        path = os.path.join(out_dir, name)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else HERE))
