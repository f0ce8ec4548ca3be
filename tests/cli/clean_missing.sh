#!/bin/bash
# clean and CF missing values (_FillValue / missing_value, --missing auto):
# the transforms cannot leave missing data alone yet, so a selected HDF5
# dataset that holds its marker is refused (exit 2, one line naming the
# dataset and the marker, nothing written) instead of normalising -999
# like a value; --exclude copies it byte for byte, --missing none cleans
# the markers as values; a dataset that declares a marker but holds none
# is cleaned as usual.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
skip_without_hdf5
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("w.h5", "w") as f:
    d = f.create_dataset("fill", data=np.array([1, -999, 2, 3, -999, 100], "f8"))
    d.attrs["_FillValue"] = np.float64(-999)
    e = f.create_dataset("declared", data=np.array([1, 2, 3, 5], "f8"))
    e.attrs["missing_value"] = np.float64(-1)
    f.create_dataset("plain", data=np.arange(6.0))
PY
N="$NANAUDIT"
expect_exit 2 "$N" clean w.h5 -o o.h5 --normalize minmax
assert_eq "$(cat "$T/stderr")" "nanaudit: w.h5: /fill: 2 values equal the missing-value marker -999 (_FillValue or missing_value); clean cannot tell missing data from values yet: use --exclude '/fill' to copy it unchanged, or --missing none to clean the markers as values" "stderr"
[ ! -e o.h5 ] || fail "output written despite the refusal"
expect_stdout_contains "/fill: error: holds missing-value markers"

expect_exit 0 "$N" clean w.h5 -o o.h5 --normalize minmax --exclude /fill
"$NA_PYTHON" - <<'PY' || fail "--exclude output"
import h5py, numpy as np
with h5py.File("o.h5") as f:
    assert f["fill"][:].tolist() == [1, -999, 2, 3, -999, 100], f["fill"][:]
    assert f["fill"].attrs["_FillValue"] == -999
    assert np.allclose(f["plain"][:], np.arange(6.0) / 5, rtol=0, atol=1e-15), f["plain"][:]
    assert np.allclose(f["declared"][:], (np.array([1, 2, 3, 5.0]) - 1) / 4, rtol=0, atol=1e-15)
PY
rm -f o.h5
expect_exit 0 "$N" clean w.h5 -o o.h5 --normalize minmax --missing none
"$NA_PYTHON" - <<'PY' || fail "--missing none output"
import h5py, numpy as np
x = np.array([1, -999, 2, 3, -999, 100], "f8")
with h5py.File("o.h5") as f:
    assert np.allclose(f["fill"][:], (x - x.min()) / (x.max() - x.min()), rtol=0, atol=1e-15)
PY
pass
