#!/usr/bin/env python3
"""bench/hdf5_ref.py - files and h5py/numpy reference timings for
bench/run_hdf5.sh (issue 3, "Performance").

  hdf5_ref.py gen DIR SIZE_MB GZ_MB NSMALL   write the benchmark files:
      contig.h5        f4 [SIZE_MB MiB] contiguous, standard normal
      contig.safetensors  the same values (baseline for mmap_sum)
      gzip1.h5         f4 [GZ_MB MiB] chunked 1 MiB, gzip level 1, values
                       rounded to 1/256 so that deflate has work to undo
      small/f*.h5      NSMALL files of one f4 [256] dataset each
  hdf5_ref.py stats FILE DSET   h5py read + numpy statistics (nan, inf,
      finite min/max/mean/std), the work nanaudit does; prints seconds
  hdf5_ref.py read FILE DSET    h5py read alone; prints seconds
  hdf5_ref.py small DIR         h5py open + read + stats of every file
"""
import json
import os
import sys
import time

import h5py
import numpy as np


def gen(d, size_mb, gz_mb, nsmall):
    os.makedirs(os.path.join(d, "small"), exist_ok=True)
    rng = np.random.default_rng(1)
    n = size_mb * (1 << 20) // 4
    x = rng.standard_normal(n, dtype=np.float32)
    with h5py.File(os.path.join(d, "contig.h5"), "w") as f:
        f.create_dataset("x", data=x)
    hdr = json.dumps({"x": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    hdr += b" " * (-len(hdr) % 8)
    with open(os.path.join(d, "contig.safetensors"), "wb") as f:
        f.write(len(hdr).to_bytes(8, "little") + hdr)
        f.write(x.tobytes())
    del x
    m = gz_mb * (1 << 20) // 4
    y = np.round(rng.standard_normal(m, dtype=np.float32) * 256) / 256
    with h5py.File(os.path.join(d, "gzip1.h5"), "w") as f:
        f.create_dataset("y", data=y, chunks=(1 << 18,), compression="gzip",
                         compression_opts=1)
    for i in range(nsmall):
        with h5py.File(os.path.join(d, "small", f"f{i:05d}.h5"), "w") as f:
            f.create_dataset("v", data=rng.standard_normal(256, dtype=np.float32))


def stats(a):
    fin = np.isfinite(a)
    f = a[fin].astype(np.float64)
    return (int(np.isnan(a).sum()), int(np.isinf(a).sum()), f.min(), f.max(), f.mean(), f.std())


def main():
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return
    t0 = time.perf_counter()
    if cmd in ("stats", "read"):
        with h5py.File(sys.argv[2], "r") as f:
            a = f[sys.argv[3]][()]
        if cmd == "stats":
            stats(a)
    elif cmd == "small":
        d = sys.argv[2]
        for fn in sorted(os.listdir(d)):
            with h5py.File(os.path.join(d, fn), "r") as f:
                stats(f["v"][()])
    print(f"{time.perf_counter() - t0:.4f}")


if __name__ == "__main__":
    main()
