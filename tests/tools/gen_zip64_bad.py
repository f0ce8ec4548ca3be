#!/usr/bin/env python3
"""gen_zip64_bad.py - small .npz files whose zip64 fields lie (issue 7).

Zip records are laid out by hand here (PKWARE APPNOTE.TXT 4.3.7 local
file header, 4.3.12 central file header, 4.3.16 end of central directory
record, 4.5.3 zip64 extended information extra field), because no zip
writer produces these on purpose. Every file holds one or two members
named like .npy files, whose bytes are a valid np.save of
[0, nan, 2, 3] (F32), so the only thing wrong is the zip64 description.

  zip64_valid.npz           sizes and offset all 0xFFFFFFFF, real values in
                            the zip64 extra fields: audited (NaN at [1])
  zip64_size_past_eof.npz   zip64 sizes of 2^40 bytes in a tiny file
  zip64_offset_past_eof.npz zip64 local header offset 2^33
  zip64_extra_short.npz     zip64 block of 8 bytes where 16 are due
  zip64_extra_overrun.npz   an extra block longer than the extra field
  zip64_no_extra.npz        0xFFFFFFFF sizes, no extra field at all
  zip64_local_differs.npz   local zip64 sizes differ from the central ones
  zip64_overlap.npz         two members on the same local header
  zip64_deflated.npz        a deflated member described by zip64 fields:
                            audited (inflated by zip.c itself)
  zip64_deflated_crc.npz    the same with a wrong CRC-32
  zip64_deflated_cut.npz    the same cut to half its compressed bytes

The expected messages are in tests/cli/zip64_hostile.sh; the files are
also seeds of the zip fuzz target (tests/fuzz/corpus/zip).
Usage: gen_zip64_bad.py [OUTDIR]   (default: tests/fuzz/corpus/zip)
The output is deterministic; re-run and commit when a case is added.
"""
import io
import os
import struct
import sys
import zlib

import numpy as np

FF = 0xFFFFFFFF


def npy_bytes():
    b = io.BytesIO()
    np.save(b, np.array([0, np.nan, 2, 3], np.float32))
    return b.getvalue()


def z64(*vals, size=None):
    """Zip64 extended information extra field (header ID 0x0001)."""
    body = b"".join(struct.pack("<Q", v) for v in vals)
    return struct.pack("<HH", 1, len(body) if size is None else size) + body


def local(name, method, crc, csize, usize, extra=b""):
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0x21, crc, csize,
                       usize, len(name), len(extra)) + name + extra


def central(name, method, crc, csize, usize, loff, extra=b""):
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, method, 0, 0x21, crc,
                       csize, usize, len(name), len(extra), 0, 0, 0, 0, loff) + name + extra


def archive(locals_, centrals):
    body = b"".join(locals_)
    cd = b"".join(centrals)
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(centrals), len(centrals), len(cd),
                       len(body), 0)
    return body + cd + eocd


def cases():
    data = npy_bytes()
    n, crc, name = len(data), zlib.crc32(data), b"a.npy"
    loc64 = local(name, 0, crc, FF, FF, z64(n, n)) + data
    out = {}
    out["zip64_valid.npz"] = archive([loc64], [central(name, 0, crc, FF, FF, FF, z64(n, n, 0))])
    big = 1 << 40
    out["zip64_size_past_eof.npz"] = archive(
        [local(name, 0, crc, FF, FF, z64(big, big)) + data],
        [central(name, 0, crc, FF, FF, 0, z64(big, big))])
    out["zip64_offset_past_eof.npz"] = archive([loc64], [central(name, 0, crc, n, n, FF,
                                                                 z64(1 << 33))])
    out["zip64_extra_short.npz"] = archive([loc64], [central(name, 0, crc, FF, FF, 0, z64(n))])
    out["zip64_extra_overrun.npz"] = archive(
        [loc64], [central(name, 0, crc, FF, FF, 0, z64(n, n, size=32))])
    out["zip64_no_extra.npz"] = archive([loc64], [central(name, 0, crc, FF, FF, 0)])
    out["zip64_local_differs.npz"] = archive(
        [local(name, 0, crc, FF, FF, z64(n + 4, n + 4)) + data + bytes(4)],
        [central(name, 0, crc, FF, FF, 0, z64(n, n))])
    out["zip64_overlap.npz"] = archive([loc64], [central(name, 0, crc, FF, FF, FF, z64(n, n, 0)),
                                                 central(name, 0, crc, n, n, 0)])
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = co.compress(data) + co.flush()
    c = len(packed)
    out["zip64_deflated.npz"] = archive(
        [local(name, 8, crc, FF, FF, z64(n, c)) + packed],
        [central(name, 8, crc, FF, FF, FF, z64(n, c, 0))])
    out["zip64_deflated_crc.npz"] = archive(
        [local(name, 8, crc ^ 1, FF, FF, z64(n, c)) + packed],
        [central(name, 8, crc ^ 1, FF, FF, 0, z64(n, c))])
    cut = packed[: c // 2]
    out["zip64_deflated_cut.npz"] = archive(
        [local(name, 8, crc, FF, FF, z64(n, len(cut))) + cut],
        [central(name, 8, crc, FF, FF, 0, z64(n, len(cut)))])
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "fuzz", "corpus", "zip")
    os.makedirs(outdir, exist_ok=True)
    for fname, blob in sorted(cases().items()):
        with open(os.path.join(outdir, fname), "wb") as f:
            f.write(blob)


if __name__ == "__main__":
    main()
