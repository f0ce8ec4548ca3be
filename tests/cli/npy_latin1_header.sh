#!/bin/bash
# A .npy 1.0/2.0 header is latin-1 (numpy.lib.format; np.load decodes it
# so), a 3.0 header UTF-8. Found by the sixth fresh-user round: a
# structured array with a field named 'ü', which np.save writes as 1.0
# with the byte 0xFC, was listed as 'data.\xfc' (not UTF-8, escaped), so
# --include 'data.ü' matched nothing and JSON reports named another
# field. The name is now 'data.ü' for 1.0, 2.0 and 3.0 headers, in .npy
# files and .npz members, in text and JSON, and --exclude names it.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" -c "
import numpy as np, numpy.lib.format as F
a = np.zeros(4, dtype=[('ü', '<f4'), ('b', '<f8')])
a['ü'][1] = np.nan
np.save('v1.npy', a)
assert open('v1.npy', 'rb').read()[6] == 1 and b\"'\\xfc'\" in open('v1.npy', 'rb').read(128)
for v in (2, 3):
    with open('v%d.npy' % v, 'wb') as f:
        F.write_array(f, a, version=(v, 0))
np.savez('a.npz', r=a)
c = np.zeros((3, 2), dtype=np.float32)
np.savez('b.npz', **{'ü': c})
" || fail "making inputs"

for v in 1 2 3; do
    expect_exit 1 "$N" scan --format json "v$v.npy"
    expect_json "$T/stdout" '[t["name"] for t in j["files"][0]["tensors"]]' '["data.\u00fc", "data.b"]'
    expect_exit 1 "$N" scan "v$v.npy"
    expect_stdout_contains "FAIL data.ü: 1 NaN value (first at [1])"
done
expect_exit 1 "$N" scan a.npz
expect_stdout_contains "FAIL r.ü: 1 NaN value (first at [1])"
# a member name (the zip's, not the header's) was UTF-8 already
expect_exit 0 "$N" scan b.npz
expect_stdout_contains "ü "

# a 3.0 header must be UTF-8, which numpy decodes strictly (round 37b:
# one holding 0xff 0xfe was read); one line, exit 3
"$NA_PYTHON" -c '
import struct
h = b"{\x27descr\x27: [(\x27\xff\xfe\x27, \x27<f4\x27)], \x27fortran_order\x27: False, \x27shape\x27: (2,), }"
h += b" " * ((64 - (12 + len(h) + 1) % 64) % 64) + b"\n"
open("bad3.npy", "wb").write(b"\x93NUMPY\x03\x00" + struct.pack("<I", len(h)) + h + bytes(8))' ||
    fail "bad3.npy"
expect_exit 3 "$N" scan bad3.npy
expect_stderr_contains "nanaudit: bad3.npy: format 3.0 header is not valid UTF-8 (byte 13 of the header: 0xff)"
"$NA_PYTHON" -c 'import numpy as np; np.load("bad3.npy")' 2> /dev/null && fail "numpy reads bad3.npy"

# --exclude names the field: its NaN is no longer counted as copied
mkdir out
expect_exit 0 "$N" clean --exclude 'data.ü' -o out/v1.npy v1.npy
expect_stderr_lacks "matches no tensor"
cmp -s v1.npy out/v1.npy || fail "the structured .npy is not copied byte for byte"
pass
