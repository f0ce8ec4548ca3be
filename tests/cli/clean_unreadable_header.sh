#!/bin/bash
# A dataset whose header libhdf5 cannot read (tests/data/hdf5/
# h5py_broken_fill_compound.h5: an h5py write of a compound with a string
# member that failed halfway, leaving its fill value past the end of the
# file) has no dtype, and clean took it for an object array: copied,
# "written (verified)", exit 0, while scan says exit 3; with --together
# '/c*' it was called "a scalar". Now it fails closed as an unreadable
# numeric tensor does: exit 3, nothing written. And
# an untouched variable-length string dataset with a fill value whose
# rows are over 1 GiB (declared, never written) said "leave it out of
# --together" (exit 2) without --together: now exit 3 saying why.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
F="$NA_TEST_DATA/hdf5/h5py_broken_fill_compound.h5"
# (clean --exclude /c, which copies /c with H5Ocopy in the writer, makes
# libhdf5 take ~3.4 GB on this header: left out here)
expect_exit 3 "$NANAUDIT" clean "$F" -o o.h5
expect_stderr_contains "/c: cannot read the dataset's header: "
expect_stderr_contains "; clean cannot read it, nothing written (--exclude '/c' copies it unchanged)"
[ ! -e o.h5 ] || fail "o.h5 written"
# The reader's catalog may grow the address space by 2 GiB at most
# (hdf5_child.c, h5_header_cap): libhdf5 took ~3.4 GB reading this header,
# now the damaged size is an error of its own, and the peak resident size
# of the run and its children stays under 500 MB. A sanitizer reserves
# terabytes of address space, and the cap is off there.
if ! is_sanitized; then
    for cmd in scan info; do
        "$NA_PYTHON" - "$NANAUDIT" "$cmd" "$F" <<'PY' || fail "$cmd of the damaged header"
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest descendant
want = (f"nanaudit: {sys.argv[3]}: /c: cannot read the dataset's header: memory allocation "
        "failed for chunk (more than 2 GiB for an object header: a damaged size)\n")
assert r.returncode == 3, r.returncode
assert r.stderr == want, r.stderr
assert peak < 500_000, f"peak RSS {peak} KiB"
PY
    done
fi
expect_exit 3 "$NANAUDIT" clean "$F" -o o.h5 --together '/c*'
expect_stderr_lacks "scalar"
expect_stderr_contains "/c: cannot read the dataset's header"

"$NA_PYTHON" - <<'PY' || fail "making wide.h5"
import h5py
import numpy as np
with h5py.File("wide.h5", "w") as f:
    f["num"] = np.arange(10, dtype=np.float32)
    f.create_dataset("w", shape=(2, 200_000_000), dtype=h5py.string_dtype(),
                     chunks=(1, 1024), fillvalue=b"x")
PY
expect_exit 3 "$NANAUDIT" clean wide.h5 -o w.h5
expect_stderr_contains "wide.h5: /w: its rows take more than 1 GiB each, and libhdf5's copy of a variable-length dataset with a fill value does not read back: clean cannot copy it; nothing written"
expect_stderr_lacks "--together"
[ ! -e w.h5 ] || fail "w.h5 written"
pass
