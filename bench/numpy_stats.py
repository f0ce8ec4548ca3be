"""Compute nanaudit's per-tensor statistics with numpy on an np.memmap of
a one-tensor safetensors file, timed; the (b) baseline of run_scan.sh.

    python numpy_stats.py FILE [K] [CHUNK]

In chunks of CHUNK elements (default 2^24; 0: the whole array at once,
as the first version did), three passes as nanaudit makes them: counts,
min, max and the sum; the squared deviations; the outliers. Widening the
whole 1 GiB array to float64 at once took 6.3 GB and 5x the time of the
chunked passes (round 33b: the "113x numpy" figure compared with that).

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
    chunk = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 24
    x = np.memmap(path, dtype=dt, mode="r", offset=8 + hlen, shape=tuple(info["shape"]))
    x = x.reshape(-1)
    step = chunk if chunk > 0 else max(x.size, 1)
    t0 = time.perf_counter()
    tiny = float(ml_dtypes.finfo(dt).smallest_normal)

    def pieces():  # float64 pieces (bf16 ufuncs are slow in numpy) and offsets
        for a in range(0, x.size, step):
            yield a, x[a:a + step].astype(np.float64)

    nan = pinf = ninf = zeros = sub = n = 0
    mn, mx, total = np.inf, -np.inf, 0.0
    nan_locs = []
    for a, xf in pieces():
        isn = np.isnan(xf)
        nan += int(isn.sum())
        if len(nan_locs) < 5:
            nan_locs += list(a + np.flatnonzero(isn)[:5 - len(nan_locs)])
        pinf += int(np.isposinf(xf).sum())
        ninf += int(np.isneginf(xf).sum())
        zeros += int((xf == 0).sum())
        sub += int(((xf != 0) & (np.abs(xf) < tiny)).sum())
        v = xf[np.isfinite(xf)]
        if v.size:
            mn, mx = min(mn, v.min()), max(mx, v.max())
            total += v.sum()
            n += v.size
    mean = total / n
    m2 = 0.0
    for _, xf in pieces():
        v = xf[np.isfinite(xf)]
        m2 += float(np.square(v - mean).sum())
    std = (m2 / n) ** 0.5
    outliers = 0
    for _, xf in pieces():
        v = xf[np.isfinite(xf)]
        outliers += int((np.abs(v - mean) > k * std).sum())
    dt_s = time.perf_counter() - t0
    print(f"numpy seconds={dt_s:.4f} mean={mean!r} std={std!r} outliers={outliers} "
          f"nan={nan} pos_inf={pinf} neg_inf={ninf} zeros={zeros} subnormal={sub} "
          f"min={mn!r} max={mx!r} nan_locs={list(map(int, nan_locs))}")


if __name__ == "__main__":
    main()
