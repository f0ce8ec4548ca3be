#!/bin/bash
# clean_hdf5_region_refs.sh - HDF5 region references (h5py.regionref_dtype,
# in datasets and attributes) are made anew on the copies, with the same
# selections, where the referenced dataset keeps its extent; those into a
# dataset that lost samples would name other elements and become NULL, and
# then each dataset of region references carries a warning (text and
# JSON). All of them were NULL, reported "copied: references", exit 0, no
# warning (round 36b). Object references still resolve; exit code 0.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("refs.h5", "w") as f:
    x = np.arange(40.0).reshape(20, 2)
    x[5, 0] = np.nan
    f["X"] = x
    f["Z"] = np.arange(33.0)
    f.create_dataset("rr", dtype=h5py.regionref_dtype,
                     data=[f["Z"].regionref[2:4], f["X"].regionref[1:3, 0], f["Z"].regionref[::3]])
    f["Z"].attrs["self"] = f["Z"].regionref[5:7]
    f.create_dataset("orZ", data=[f["Z"].ref], dtype=h5py.ref_dtype)' || fail "refs.h5"
W="its region references into a dataset that loses samples are written as NULL (the others point at the copies)"
# /X loses sample 5: the reference into it is NULL, the others resolve
expect_exit 0 "$NANAUDIT" clean refs.h5 -o out.h5 --report r.json
expect_stdout_contains "  /rr: copied: region references
    warning: $W"
expect_stdout_contains "  /orZ: copied: references"
expect_json r.json '[t["warnings"] for t in j["tensors"] if t["name"] == "/rr"]' "[[\"$W\"]]"
expect_json r.json '[t["warnings"] for t in j["tensors"] if t["name"] == "/orZ"]' '[[]]'
check() { # $1: file, $2: whether the reference into /X resolves
    "$NA_PYTHON" - "$1" "$2" <<'PY' || fail "$1"
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], "r") as g:
    r = g["rr"][()]
    assert g[r[0]][r[0]].tolist() == [2.0, 3.0], g[r[0]][r[0]]
    assert g[r[2]][r[2]].tolist() == list(np.arange(0.0, 33.0, 3.0)), g[r[2]][r[2]]
    if sys.argv[2] == "1":
        assert g[r[1]][r[1]].ravel().tolist() == [2.0, 4.0], g[r[1]][r[1]]
    else:
        assert not r[1], "the reference into /X is not NULL"
    a = g["Z"].attrs["self"]
    assert g[a][a].tolist() == [5.0, 6.0], g[a][a]
    assert g[g["orZ"][0]].name == "/Z"
PY
}
check out.h5 0
# no dataset loses samples: every reference resolves, no warning
expect_exit 0 "$NANAUDIT" clean refs.h5 -o keep.h5 --nonfinite zero --report k.json
expect_stdout_lacks "region references into"
expect_json k.json '[t["warnings"] for t in j["tensors"] if t["name"] == "/rr"]' '[[]]'
check keep.h5 1
# scan lists the datasets as skipped, with the same words
expect_exit 1 "$NANAUDIT" scan refs.h5
expect_stdout_contains "skipped: /rr: region references"
expect_stdout_contains "skipped: /orZ: references"
pass
