#!/bin/bash
# clean_together_external.sh - a string dataset that follows --together
# but whose data lives in other files (external storage, a virtual
# dataset) cannot lose rows, since clean writes only its output file. It
# was refused with "--exclude it", which does not help: an excluded
# dataset named by --together still follows its group. The line must say
# to leave it out of --together; nothing is written (exit 2). Left out,
# the drop is refused as misaligned, and --allow-misaligned copies it
# whole, as h5py reads it.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py
import numpy as np
x = np.arange(40, dtype=np.float64).reshape(20, 2)
x[3, 1] = np.nan
names = np.array([b"n%03d" % i for i in range(20)])
with h5py.File("src.h5", "w") as f:
    f["names"] = names
with h5py.File("ext.h5", "w") as f:
    f["x"] = x
    f.create_dataset("names", data=names, external=[("names.bin", 0, h5py.h5f.UNLIMITED)])
with h5py.File("vds.h5", "w") as f:
    f["x"] = x
    lay = h5py.VirtualLayout(shape=(20,), dtype=names.dtype)
    lay[:] = h5py.VirtualSource("src.h5", "names", shape=(20,))
    f.create_virtual_dataset("names", lay)
for fn in ("ext.h5", "vds.h5"):
    with h5py.File(fn, "r") as f:
        assert list(f["names"][:]) == list(names), fn
PY

for f in ext vds; do
    kind="external storage"; [ $f = vds ] && kind="virtual dataset"
    expect_exit 2 "$NANAUDIT" clean "$f.h5" -o out.h5 --together /x,/names
    expect_stderr_contains "/names: its data lives in other files ($kind); clean writes only this file, so it cannot lose the samples of its --together group: leave it out of --together"
    [ "$(grep -c . "$T/stderr")" = 1 ] || fail "$f: more than one error line"
    [ ! -e out.h5 ] || fail "$f: out.h5 written"
    # left out: the drop is refused as misaligned, then allowed
    expect_exit 2 "$NANAUDIT" clean "$f.h5" -o out.h5
    expect_stderr_contains "/names"
    expect_exit 0 "$NANAUDIT" clean "$f.h5" -o out.h5 --allow-misaligned
    "$NA_PYTHON" - "$f" <<'PY' || fail "$f: output"
import sys, h5py
import numpy as np
with h5py.File("out.h5", "r") as f:
    assert f["x"].shape == (19, 2) and not np.isnan(f["x"][:]).any()
    assert list(f["names"][:]) == [b"n%03d" % i for i in range(20)]
PY
    rm -f out.h5
done
pass
