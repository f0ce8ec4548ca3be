"""The numpy baseline of bench/run_clean.sh: what `nanaudit clean
--samples --zscore 3 --normalize minmax` does to a one-tensor F32
safetensors file, in numpy (float64 arithmetic, as nanaudit's):

    x = x[np.isfinite(x)]                      # --nonfinite drop
    x = x[np.abs(x - x.mean()) <= 3 * x.std()] # --zscore 3 (drop)
    x = (x - x.min()) / (x.max() - x.min())    # --normalize minmax
    written as F32 with tofile (+ fsync unless --no-fsync)

    python numpy_clean.py IN OUT [--no-fsync]

Prints "numpy_clean seconds=S kept=N". Holds the data in memory (about
3x the file as float64 temporaries), unlike nanaudit.
"""
import json
import os
import struct
import sys
import time

import numpy as np


def main():
    src, dst = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    with open(src, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        json.loads(fh.read(n))
    x = np.memmap(src, dtype=np.float32, mode="r", offset=8 + n).astype(np.float64)
    x = x[np.isfinite(x)]
    x = x[np.abs(x - x.mean()) <= 3 * x.std()]
    x = (x - x.min()) / (x.max() - x.min())
    with open(dst, "wb") as fh:
        x.astype(np.float32).tofile(fh)
        if "--no-fsync" not in sys.argv:
            fh.flush()
            os.fsync(fh.fileno())
    print(f"numpy_clean seconds={time.perf_counter() - t0:.3f} kept={x.size}")


if __name__ == "__main__":
    main()
