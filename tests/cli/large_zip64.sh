#!/bin/bash
# large_zip64.sh - zip members of 4 GiB or more, and members whose local
# header lies past 4 GiB (issue 7: offsets and counts past 2^32 are right).
# Debian's minizip 1.1 never takes these values from the zip64 extra field
# on a 64-bit machine (formats/zip.c, "zip64 values minizip 1.1 misreads"):
# it reports the big member's sizes as 4294967295, and before the fix the
# member after it failed with "bad zip structure (-103)".
#  - an .npz written by Python's zipfile (stored, force_zip64, the .npy
#    header from numpy's own writer): big.npy is an F32 array of 2^30 + 1024
#    elements (2^32 + 4096 bytes of data), zero but for 5.0 at index 7, a
#    NaN at 2^30 + 512 (byte 2^32 + 2048 of the data) and 7.0 at the end;
#    small.npy ([1, inf, 3]) comes after it, past 4 GiB;
#  - the same data as a torch.save-style zip (tests/tools/make_pt.py's
#    pickle), storage data/0 of 4 GiB + 4 KiB, data/1 after it.
# All-zero writes become holes, so each file takes ~16 MB of disk; ~10 s
# each to write (Python's CRC-32 over 4 GiB), ~3 s to scan. Label "large":
# normal build only.
. "$(dirname "$0")/helpers.sh"

N=$(((1 << 30) + 1024))
NAN_AT=$(((1 << 30) + 512))

# zip64_file KIND OUT: KIND npz or pt, as described above.
zip64_file() {
    "$NA_PYTHON" - "$1" "$2" "$NA_SRC/tests/tools" <<'PY' || fail "writing $2"
import io, struct, sys, zipfile
import numpy as np
kind, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
N = (1 << 30) + 1024
SETS = {7: 5.0, (1 << 30) + 512: float("nan"), N - 1: 7.0}

class Sparse(io.FileIO):
    """All-zero writes become holes (zipfile only writes and seeks)."""
    def write(self, b):
        if len(b) and b.count(0) == len(b):
            self.seek(len(b), io.SEEK_CUR)
            return len(b)
        return super().write(b)

def big_member(z, name, head):
    with z.open(name, "w", force_zip64=True) as m:
        m.write(head)
        step = 1 << 24
        for at in range(0, 4 * N, step):
            chunk = bytearray(min(step, 4 * N - at))
            for i, v in SETS.items():
                if at <= 4 * i < at + len(chunk):
                    struct.pack_into("<f", chunk, 4 * i - at, v)
            m.write(bytes(chunk))

small = np.array([1, np.inf, 3], np.float32)
with Sparse(out, "w+") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
    if kind == "npz":
        h = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            h, {"descr": "<f4", "fortran_order": False, "shape": (N,)})
        big_member(z, "big.npy", h.getvalue())
        b = io.BytesIO()
        np.save(b, small)
        z.writestr("small.npy", b.getvalue())
    else:
        import make_pt
        class Big:  # the storage's numel and dtype, for the pickle only
            size, dtype = N, np.dtype(np.float32)
        big, sm = make_pt.Storage(np.zeros(1, np.float32)), make_pt.Storage(small)
        big.data = Big()
        pkl, _ = make_pt._dump({"big": make_pt.Tensor(big, 0, (N,), (1,)),
                                "small": make_pt.Tensor(sm, 0, (3,), (1,))}, False, 2)
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        big_member(z, "archive/data/0", b"")
        z.writestr("archive/data/1", small.tobytes())
        z.writestr("archive/version", "3\n")
PY
}

# check_report JSON: the counts and locations of both tensors, exact.
check_report() {
    local B='j["files"][0]["tensors"][0]' S='j["files"][0]["tensors"][1]'
    expect_json "$1" "[t[\"name\"] for t in j[\"files\"][0][\"tensors\"]]" '["big", "small"]'
    expect_json "$1" "[$B[\"status\"], $B[\"elements\"], $B[\"nan\"], $B[\"zeros\"]]" \
        "[\"ok\", $N, 1, $((N - 3))]"
    expect_json "$1" "$B[\"nan_locations\"]" "[[$NAN_AT]]"
    expect_json "$1" "[$B[\"min\"], $B[\"max\"], $B[\"pos_inf\"]]" '[0.0, 7.0, 0]'
    expect_json "$1" "$B[\"outliers\"][\"locations\"]" "[[7], [$((N - 1))]]"
    # mean over the N - 1 finite values, against numpy's formula
    expect_json "$1" "abs($B[\"mean\"] - 12 / ($N - 1)) <= 1e-12 * 12 / $N" 'true'
    expect_json "$1" "[$S[\"elements\"], $S[\"pos_inf\"], $S[\"inf_locations\"], $S[\"max\"]]" \
        '[3, 1, [[1]], 3.0]'
    expect_json "$1" 'j["summary"]["errors"]' 0
}

for kind in npz pt; do
    zip64_file "$kind" "$T/big.$kind"
    size=$(stat -c %s "$T/big.$kind")
    [ "$size" -gt 4294971392 ] || fail "big.$kind is $size bytes"
    expect_exit 1 "$NANAUDIT" scan --format json --threads 2 "$T/big.$kind"
    cp "$T/stdout" "$T/$kind.2.json"
    check_report "$T/$kind.2.json"
    expect_exit 1 "$NANAUDIT" scan --format json --threads 1 "$T/big.$kind"
    cmp -s "$T/stdout" "$T/$kind.2.json" || fail "$kind: --threads 1 and 2 reports differ"
    rm -f "$T/big.$kind"
done
pass
