"""Write the benchmark inputs of bench/run_scan.sh (one tensor each).

    python gen_files.py DIR [--big]

  f32.safetensors   1 GiB   F32  2^28 elements
  bf16.safetensors  512 MiB BF16 2^28 elements
  f16.safetensors   512 MiB F16  2^28 elements
  f32big.safetensors 4 GiB  F32  2^30 elements (only with --big)

Values: standard normal (seeded), then one value 50.0 every 10,000
elements so that every 16 Ki-element block holds a 6-sigma outlier (the
worst case for the outlier pass, which then has to look at every block),
plus 3 NaN, one +Inf and one -Inf near the end. The safetensors header is
written by hand (the format is 8-byte LE length + JSON + data, see
https://github.com/huggingface/safetensors#format) so that the data can be
streamed in chunks: memory stays small even for the 4 GiB file.
Existing files of the right size are kept.
"""
import json
import os
import struct
import sys

import ml_dtypes
import numpy as np

CHUNK = 1 << 24  # elements per write


def write(path, dtype_name, np_dtype, n, seed):
    itemsize = np.dtype(np_dtype).itemsize
    header = json.dumps({"x": {"dtype": dtype_name, "shape": [n],
                               "data_offsets": [0, n * itemsize]}}).encode()
    header += b" " * (-len(header) % 8)  # data 8-byte aligned, as the reference writer does
    total = 8 + len(header) + n * itemsize
    if os.path.exists(path) and os.path.getsize(path) == total:
        return
    rng = np.random.default_rng(seed)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        for lo in range(0, n, CHUNK):
            m = min(CHUNK, n - lo)
            x = rng.standard_normal(m, dtype=np.float32)
            first = (-lo) % 10000
            x[first::10000] = 50.0
            if lo + m == n:
                x[-10:-7] = np.nan
                x[-5] = np.inf
                x[-3] = -np.inf
            f.write(x.astype(np_dtype).tobytes())
    os.replace(path + ".tmp", path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "f32.safetensors"), "F32", np.float32, 1 << 28, 1)
    write(os.path.join(out, "bf16.safetensors"), "BF16", ml_dtypes.bfloat16, 1 << 28, 2)
    write(os.path.join(out, "f16.safetensors"), "F16", np.float16, 1 << 28, 3)
    if "--big" in sys.argv:
        write(os.path.join(out, "f32big.safetensors"), "F32", np.float32, 1 << 30, 4)


if __name__ == "__main__":
    main()
