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
# Under a sanitizer, its allocator may catch libhdf5's bad pointer and
# end the child with exit status 1 instead of a signal: real builds only.
if { ldd "$NANAUDIT"; nm "$NANAUDIT"; } 2>/dev/null | grep -qE 'lib(a|t)san|__(a|t)san_init'; then
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
