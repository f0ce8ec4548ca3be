#!/usr/bin/env python3
"""make_st.py - write a (possibly malformed) safetensors file for tests.

Usage: make_st.py OUT.safetensors 'JSON description'   (or '-' for stdin)

The file is written by hand, not by the safetensors package, so tests can
also build files the reference writer refuses (duplicate names, hostile
names, bad offsets). Layout (https://huggingface.co/docs/safetensors):
8-byte little-endian header length N, N bytes of JSON header, data.

Description (all keys optional except tensors):
  {"metadata": {"k": "v"} | null | <anything>,   # __metadata__ as given
   "tensors": [
     {"name": "w", "dtype": "F32", "shape": [2, 2],
      "values": [1, "nan", "inf", "-inf"],  # converted to dtype (numpy/ml_dtypes)
      "bits": [2143289344],                 # or raw integer codes (element-size ints)
      "hex": "0000c07f",                    # or raw data bytes
      "fill": 0.5,                          # or every element = fill
      "data_offsets": [0, 4]}],             # override computed offsets
   "header": "{...}",    # write this header text verbatim instead
   "pad": 0,             # spaces appended to the header (JSON whitespace)
   "trailing": "hex",    # extra bytes after the data
   "truncate": 3}        # drop this many bytes from the end
Values use numpy's astype, so F16 65519 -> 65504 (round to nearest even).
Names may hold any characters (JSON-escaped by json.dumps).
"""
import json
import struct
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # only the 8-bit floats and BF16 need it
    ml_dtypes = None

SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "U16": 2, "I16": 2, "U32": 4, "I32": 4,
         "U64": 8, "I64": 8, "F16": 2, "BF16": 2, "F32": 4, "F64": 8,
         "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "F8_E4M3FNUZ": 1,
         "F8_E5M2FNUZ": 1, "C64": 8}
UINT = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}


def np_dtype(name):
    simple = {"BOOL": np.bool_, "U8": "<u1", "I8": "<i1", "U16": "<u2",
              "I16": "<i2", "U32": "<u4", "I32": "<i4", "U64": "<u8",
              "I64": "<i8", "F16": "<f2", "F32": "<f4", "F64": "<f8",
              "C64": "<c8"}
    if name in simple:
        return np.dtype(simple[name])
    ml = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn",
          "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0fnu",
          "F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2FNUZ": "float8_e5m2fnuz"}
    return np.dtype(getattr(ml_dtypes, ml[name]))


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def tensor_bytes(t):
    dt = t.get("dtype", "F32")
    if "hex" in t:
        return bytes.fromhex(t["hex"])
    if "bits" in t:
        return np.array(t["bits"], dtype=np.uint64).astype(UINT[SIZES[dt]]).tobytes()
    n = count(t.get("shape", []))
    if "values" in t:
        vals = [float(v) if isinstance(v, str) else v for v in t["values"]]
        arr = np.array(vals, dtype=np.float64 if dt not in ("C64",) else np.complex128)
    else:
        arr = np.full(n, t.get("fill", 0.0), dtype=np.float64)
    return arr.astype(np_dtype(dt)).tobytes()


def build(desc):
    header, blobs, off = {}, [], 0
    items = []
    for t in desc.get("tensors", []):
        data = tensor_bytes(t)
        offs = t.get("data_offsets", [off, off + len(data)])
        items.append((t["name"], {"dtype": t.get("dtype", "F32"),
                                  "shape": t.get("shape", []),
                                  "data_offsets": offs}))
        blobs.append(data)
        off += len(data)
    if "metadata" in desc:
        items.insert(0, ("__metadata__", desc["metadata"]))
    if "header" in desc:
        text = desc["header"]
    else:
        # Built by hand so duplicate names survive (a dict would merge them).
        text = "{" + ",".join(json.dumps(k) + ":" + json.dumps(v) for k, v in items) + "}"
    hb = text.encode("utf-8") + b" " * desc.get("pad", 0)
    out = struct.pack("<Q", len(hb)) + hb + b"".join(blobs)
    out += bytes.fromhex(desc.get("trailing", ""))
    if desc.get("truncate"):
        out = out[:-desc["truncate"]]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_st.py OUT.safetensors 'JSON' | -")
    src = sys.stdin.read() if sys.argv[2] == "-" else sys.argv[2]
    with open(sys.argv[1], "wb") as fh:
        fh.write(build(json.loads(src)))


if __name__ == "__main__":
    main()
