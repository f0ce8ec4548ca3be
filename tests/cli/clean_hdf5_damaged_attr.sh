#!/bin/bash
# One damaged heap index of a variable-length string attribute (/g@s)
# makes libhdf5 1.10 crash while the writer copies it: the line said
# "out.h5: libhdf5 crashed while writing the copy: SIGSEGV", exit 4
# ("internal or environment"), naming neither the input nor the object
# (tester round 21a). The writer now tells the parent which input object
# libhdf5 is reading: the crash is the input's, exit 3, named.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
mkdir -p out
"$NA_PYTHON" - <<'PY' || fail "making min_bad.h5"
import struct
import h5py
with h5py.File("min.h5", "w") as f:
    g = f.create_group("g")
    g.attrs["s"] = "x"
    f.create_dataset("d", data=[1.0, 2.0])
b = bytearray(open("min.h5", "rb").read())
gcol = b.find(b"GCOL")
j = b.find(struct.pack("<IQI", 1, gcol, 1))  # length 1, collection, index 1
assert gcol > 0 and j > 0
b[j + 15] = 0x92  # object index 1 -> 0x92000001
open("min_bad.h5", "wb").write(b)
PY
"$NANAUDIT" clean min.h5 -o out/good.h5 -q >/dev/null 2>&1 || fail "the undamaged file"

# A global heap whose object size is damaged (the 16-byte sequence of
# /vlen, shared with the root's string attributes) makes libhdf5 loop
# while the writer copies /@root_s: after --hdf5-timeout the line named
# the output, exit 4 (tester round 22a); now the input object, exit 3.
"$NA_PYTHON" - <<'PY' || fail "making hang.h5"
import struct
import h5py
import numpy as np
with h5py.File("heap.h5", "w") as f:
    f.attrs["root_s"] = "hello root"
    v = f.create_dataset("vlen", shape=(2,), dtype=h5py.vlen_dtype(np.float64))
    v[0] = np.array([1.0, 2.0])
    v[1] = np.array([3.0])
    f.create_dataset("d", data=np.array([1.0, 2.0]))
b = bytearray(open("heap.h5", "rb").read())
g = b.find(b"GCOL")
p = g + 16
while True:  # heap objects: index, refcount, reserved, size, data (8-aligned)
    idx, _, _, size = struct.unpack("<HHIQ", b[p:p + 16])
    assert idx != 0, "no 16-byte object"
    if size == 16:
        b[p + 9] = 1  # size 16 -> 272
        break
    p += 16 + (size + 7) // 8 * 8
open("hang.h5", "wb").write(b)
PY
expect_exit 3 "$NANAUDIT" clean hang.h5 -o out/h.h5 -q --nonfinite zero --exclude /vlen --hdf5-timeout 3
expect_stderr_contains "nanaudit: hang.h5: /@root_s: libhdf5 did not answer within 3 s reading it (--hdf5-timeout; a damaged object?): writer stopped; nothing written"
[ "$(ls -A out)" = good.h5 ] || fail "left in out/: $(ls -A out)"
# Under a sanitizer, its allocator may catch libhdf5's bad pointer and
# end the child with exit status 1 instead of a signal: real builds only.
if is_sanitized; then
    pass
    exit 0
fi
for i in 1 2 3; do
    case $i in
    1) args=() ;;
    2) args=(--exclude '*') ;;
    3) args=(--dry-run) ;;
    esac
    expect_exit 3 "$NANAUDIT" clean min_bad.h5 -o out/o.h5 "${args[@]}"
    expect_stderr_contains "nanaudit: min_bad.h5: /g@s: libhdf5 crashed reading it: SIGSEGV (a damaged object?); nothing written"
    assert_eq "$(wc -l <"$T/stderr")" "1" "one line of error (${args[*]})"
    [ ! -e out/o.h5 ] || fail "output after a crash (${args[*]})"
    [ "$(ls -A out)" = good.h5 ] || fail "left in out/: $(ls -A out)"
done
pass
