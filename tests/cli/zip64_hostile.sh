#!/bin/bash
# zip64_hostile.sh - zip64 fields are validated, not trusted (issue 7;
# formats/zip.c reads them itself because minizip 1.1 misreads them).
# The files are the zip fuzz seeds written by tests/tools/gen_zip64_bad.py
# (layouts described there): each lying one is exit 3 with its one-line
# message naming the file; zip64_valid.npz, whose sizes and offset are
# all in zip64 extra fields, is audited with exact values. Small files:
# this runs under the sanitizers too.
. "$(dirname "$0")/helpers.sh"

Z="$NA_SRC/tests/fuzz/corpus/zip"

# the committed seeds are what the generator writes
"$NA_PYTHON" "$NA_SRC/tests/tools/gen_zip64_bad.py" "$T/gen" || fail "gen_zip64_bad.py failed"
for f in "$T"/gen/*; do
    cmp -s "$f" "$Z/$(basename "$f")" || fail "$(basename "$f") differs from its generator"
done

# bad NAME FRAGMENT: exit 3, one stderr line "nanaudit: FILE: ...FRAGMENT"
bad() {
    expect_exit 3 timeout 10 "$NANAUDIT" scan "$Z/$1"
    assert_eq "$(wc -l <"$T/stderr")" 1 "$1: stderr lines"
    grep -F -- "nanaudit: $Z/$1: " "$T/stderr" | grep -qF -- "$2" ||
        fail "$1: stderr lacks: $2"
}
bad zip64_size_past_eof.npz \
    "zip: member 'a.npy' (1099511627776 bytes at offset 55) runs past the end of the file (292 bytes)"
bad zip64_offset_past_eof.npz \
    "zip: member 'a.npy': local header (30 bytes at offset 8589934592) is past the end of the file (284 bytes)"
bad zip64_extra_short.npz \
    "zip: member 'a.npy': central zip64 extra field has 8 bytes, too few for the 16 its 0xFFFFFFFF fields call for"
bad zip64_extra_overrun.npz \
    "zip: member 'a.npy': central extra block 0x0001 of 32 bytes runs past the end of its extra field (20 bytes)"
bad zip64_no_extra.npz \
    "zip: member 'a.npy': central header has a 0xFFFFFFFF size or offset but no zip64 extra field"
bad zip64_local_differs.npz \
    "zip: member 'a.npy': local header sizes 148/148 differ from the central directory's 144/144"
bad zip64_overlap.npz "zip: the member at offset 0 (199 bytes) overlaps the member at offset 0"
bad zip64_deflated_crc.npz "member 'a.npy': zip: a.npy: the data's CRC-32 differs from the one the archive records (damaged data)"
bad zip64_deflated_cut.npz "member 'a.npy': zip: member 'a.npy' ended after 38 bytes (truncated or corrupt)"

# sizes and local header offset only in zip64 extra fields: read right
A='j["files"][0]["tensors"][0]'
for f in zip64_valid.npz zip64_deflated.npz; do # stored; deflated (zip.c inflates it)
    expect_exit 1 "$NANAUDIT" scan --format json "$Z/$f"
    expect_json "$T/stdout" "[$A[\"name\"], $A[\"elements\"], $A[\"nan\"], $A[\"nan_locations\"]]" \
        '["a", 4, 1, [[1]]]'
    expect_json "$T/stdout" "[$A[\"min\"], $A[\"max\"], $A[\"mean\"]]" '[0.0, 3.0, 1.6666666666666667]'
done

# a deflated zip64 member of 4 MB (inflated by zip.c in many 64 KiB
# reads of the file, into npz.c's temporary file) against numpy
"$NA_PYTHON" - "$T/mid.npz" "$NA_SRC/tests/tools" <<'PY' || fail "writing mid.npz"
import io, sys, zlib
import numpy as np
sys.path.insert(0, sys.argv[2])
from gen_zip64_bad import FF, archive, central, local, z64
x = np.random.default_rng(3).normal(0, 1, 1 << 20).astype(np.float32)
x[[5, 700000]] = np.nan
x[999999] = 50.0
b = io.BytesIO()
np.save(b, x)
data = b.getvalue()
co = zlib.compressobj(6, zlib.DEFLATED, -15)
p = co.compress(data) + co.flush()
n, c, crc = len(data), len(p), zlib.crc32(data)
open(sys.argv[1], "wb").write(archive([local(b"x.npy", 8, crc, FF, FF, z64(n, c)) + p],
                                      [central(b"x.npy", 8, crc, FF, FF, FF, z64(n, c, 0))]))
f = x[np.isfinite(x)].astype(np.float64)
open(sys.argv[1] + ".ref", "w").write(repr([float(f.mean()), float(f.std())]))
PY
expect_exit 1 "$NANAUDIT" scan --format json --threads 2 "$T/mid.npz"
expect_json "$T/stdout" "[$A[\"elements\"], $A[\"nan\"], $A[\"nan_locations\"], $A[\"max\"]]" \
    '[1048576, 2, [[5], [700000]], 50.0]'
expect_json "$T/stdout" "[l[0] for l in $A[\"outliers\"][\"locations\"]]" '[999999]'
ref="$(cat "$T/mid.npz.ref")" # numpy float64 mean and std (ddof=0) of the finite values
expect_json "$T/stdout" "all(abs(a - b) <= 1e-12 * (abs($ref[0]) + $ref[1]) for a, b in zip([$A[\"mean\"], $A[\"std\"]], $ref))" 'true'
pass
