#!/bin/bash
# The summary line counts tensor entries of every status; those skipped
# (an HDF5 string attribute or dataset, a NumPy string array; "not
# numeric" until round 39a, which a netCDF dimension is not) are named in
# it: "3 tensors (1 skipped)" (README round 24: "3
# tensors" for two datasets and a string attribute, though the README
# says numeric attributes are audited). Text, github, Markdown and JSON
# ("skipped_tensors").
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("a.h5", "w") as f:
    d = f.create_dataset("x", data=np.arange(4.0))
    d.attrs["units"] = "m"
    f["y"] = np.ones(3)
    f["names"] = np.array([b"a", b"b"])
np.savez("b.npz", x=np.array([1.0, np.nan]), names=np.array(["p", "q"]))
PY

expect_exit 0 "$NANAUDIT" scan --attributes --report a.json --report a.md a.h5
expect_stdout_contains "1 file, 4 tensors (2 skipped), 7 elements: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)"
expect_json a.json '[j["summary"][k] for k in ("tensors", "skipped_tensors", "elements")]' '[4, 2, 7]'
grep -qF "1 file, 4 tensors (2 skipped), 7 elements:" a.md || fail "Markdown summary: $(head -3 a.md)"
# without --attributes the attribute is not an entry
expect_exit 0 "$NANAUDIT" scan a.h5
expect_stdout_contains "1 file, 3 tensors (1 skipped), 7 elements:"
expect_exit 1 "$NANAUDIT" scan --format github b.npz
expect_stdout_contains "::notice title=nanaudit::1 file, 2 tensors (1 skipped): 1 NaN, 0 Inf, 0 outliers, 0 errors; exit 1"
# nothing skipped: no parenthesis
"$NA_PYTHON" -c 'import numpy as np; np.save("c.npy", np.arange(3.0))' || fail "c.npy"
expect_exit 0 "$NANAUDIT" scan --report c.json c.npy
expect_stdout_contains "1 file, 1 tensor, 3 elements: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)"
expect_json c.json 'j["summary"]["skipped_tensors"]' '0'
pass
