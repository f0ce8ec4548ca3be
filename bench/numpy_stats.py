"""Compute nanaudit's per-tensor statistics with numpy on an np.memmap of
a one-tensor safetensors file, timed; the (b) baseline of run_scan.sh.

    python numpy_stats.py FILE [K]

Same definitions as DESIGN.md: counts of NaN, +Inf, -Inf, zeros,
subnormals (in the stored dtype); min, max, mean, std (ddof=0) of the
finite values in float64; outliers |x - mean| > K*std; first 5 NaN
locations. Prints one line "numpy seconds=S mean=M std=D outliers=N".
"""
import json
import struct
import sys
import time

import ml_dtypes
import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16}


def main():
    path = sys.argv[1]
    k = float(sys.argv[2]) if len(sys.argv) > 2 else 6.0
    with open(path, "rb") as f:
        hlen = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(hlen))
    (name, info), = [(n, v) for n, v in hdr.items() if n != "__metadata__"]
    dt = DTYPES[info["dtype"]]
    x = np.memmap(path, dtype=dt, mode="r", offset=8 + hlen, shape=tuple(info["shape"]))
    t0 = time.perf_counter()
    tiny = float(ml_dtypes.finfo(dt).smallest_normal)
    xf = x.astype(np.float64)  # bf16 ufuncs are slow in numpy; widen once
    nan = int(np.isnan(xf).sum())
    pinf = int(np.isposinf(xf).sum())
    ninf = int(np.isneginf(xf).sum())
    zeros = int((xf == 0).sum())
    sub = int(((xf != 0) & (np.abs(xf) < tiny)).sum())
    v = xf[np.isfinite(xf)]
    mn, mx = v.min(), v.max()
    mean = v.mean()
    std = v.std()
    outliers = int((np.abs(v - mean) > k * std).sum())
    nan_locs = np.flatnonzero(np.isnan(xf))[:5]
    dt_s = time.perf_counter() - t0
    print(f"numpy seconds={dt_s:.4f} mean={mean!r} std={std!r} outliers={outliers} "
          f"nan={nan} pos_inf={pinf} neg_inf={ninf} zeros={zeros} subnormal={sub} "
          f"min={mn!r} max={mx!r} nan_locs={list(map(int, nan_locs))}")


if __name__ == "__main__":
    main()
