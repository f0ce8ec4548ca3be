#!/usr/bin/env bash
# hdf5_text_missing.sh - the text report shows a "missing" column (after
# "inf") in the table of a file where some tensor has CF missing values
# (_FillValue / missing_value, issue 3), with the same count as JSON
# "missing"; a file without any, or --missing none, keeps the plain table.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
"$NA_PYTHON" - "$T/m.h5" "$T/p.h5" <<'PY' || fail "writing files with h5py"
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("cloud", data=np.array([-1, 2, 3, -1, -1, np.nan], dtype="f4"))
    d.attrs["_FillValue"] = np.float32(-1)
    f.create_dataset("plain", data=np.arange(3.0))
with h5py.File(sys.argv[2], "w") as f:
    f.create_dataset("plain", data=np.arange(3.0))
PY
expect_exit 1 "$NANAUDIT" scan --no-progress --color never "$T/m.h5" "$T/p.h5"
cp "$T/stdout" "$T/both.txt"
assert_eq "$(grep -c '^  tensor ' "$T/both.txt")" 2 "table headers"
assert_eq "$(grep '^  tensor ' "$T/both.txt" | head -1 | tr -s ' ')" \
    " tensor dtype shape elements nan inf missing min max mean std outliers" "header with missing"
assert_eq "$(grep '^  tensor ' "$T/both.txt" | tail -1 | tr -s ' ')" \
    " tensor dtype shape elements nan inf min max mean std outliers" "header of a file without missing values"
assert_eq "$(grep '^  /cloud ' "$T/both.txt" | tr -s ' ')" \
    " /cloud F32 [6] 6 1 0 3 2 3 2.5 0.5 0" "row of /cloud (3 values equal to _FillValue -1)"
assert_eq "$(grep '^  /plain ' "$T/both.txt" | head -1 | tr -s ' ')" \
    " /plain F64 [3] 3 0 0 0 0 2 1 0.816497 0" "row of /plain (no missing values: 0)"
expect_exit 1 "$NANAUDIT" scan --format json "$T/m.h5"
expect_json "$T/stdout" '[t["missing"] for t in j["files"][0]["tensors"]]' '[3, 0]'
expect_exit 1 "$NANAUDIT" scan --no-progress --color never --missing none "$T/m.h5"
expect_stdout_lacks "missing"
assert_eq "$(grep '^  /cloud ' "$T/stdout" | tr -s ' ')" \
    " /cloud F32 [6] 6 1 0 -1 3 0.4 1.74356 0" "row of /cloud with --missing none"
pass
