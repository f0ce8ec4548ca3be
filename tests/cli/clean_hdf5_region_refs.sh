#!/bin/bash
# clean_hdf5_region_refs.sh - HDF5 region references (h5py.regionref_dtype)
# are copied as NULL: libhdf5's copy keeps object references only, which
# clean then points at the copies (man page). The run says so for each
# such dataset - "copied: region references" and a warning, in the text and
# JSON reports - where it said "copied: references" and nothing else
# (round 36b: a user's annotation dataset became unusable unseen). Object
# references still resolve in the copy; the exit code stays 0.
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
    f.create_dataset("rrZ", data=f["Z"].regionref[2:4], dtype=h5py.regionref_dtype)
    f.create_dataset("orZ", data=[f["Z"].ref], dtype=h5py.ref_dtype)' || fail "refs.h5"
W="its region references are written as NULL (the copy keeps object references only)"
expect_exit 0 "$NANAUDIT" clean refs.h5 -o out.h5 --include /X --report r.json
expect_stdout_contains "  /rrZ: copied: region references
    warning: $W"
expect_stdout_contains "  /orZ: copied: references"
expect_json r.json '[t["warnings"] for t in j["tensors"] if t["name"] == "/rrZ"]' "[[\"$W\"]]"
expect_json r.json '[t["warnings"] for t in j["tensors"] if t["name"] == "/orZ"]' '[[]]'
expect_json r.json '[t["reason"] for t in j["tensors"] if t["name"] == "/rrZ"]' \
    '["region references"]'
"$NA_PYTHON" -c '
import h5py, numpy as np, sys
with h5py.File("out.h5", "r") as g:
    if g[g["orZ"][0]].name != "/Z":
        sys.exit("the object reference does not resolve to /Z")
    if g["rrZ"][()]:
        sys.exit("the region reference is not NULL")
    if len(g["X"]) != 19:
        sys.exit("X has %d rows" % len(g["X"]))' || fail "out.h5"
# scan lists the dataset as skipped with the same words
expect_exit 1 "$NANAUDIT" scan refs.h5
expect_stdout_contains "skipped: /rrZ: region references"
expect_stdout_contains "skipped: /orZ: references"
pass
