#!/bin/bash
# An HDF5 dataset whose shape's product overflows 64 bits (never written:
# h5py makes it in a few KiB) is an error of that dataset, exit 3, one
# line; its element count is unknown: "-" in the table, null in JSON
# (audit 25a: the wrapped product 2199023255552 was shown). The other
# datasets are still audited; clean refuses the file and writes nothing.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("ovf.h5", "w") as f:
    f.create_dataset("d", shape=(2, 2**40, 2**40), dtype="f4", chunks=(1, 1, 1024))
    f["ok"] = np.array([1.0, np.nan])
PY
expect_exit 3 "$NANAUDIT" scan --report ovf.json ovf.h5
assert_eq "$(cat stderr)" "nanaudit: ovf.h5: /d: element count overflows 64 bits" "stderr"
grep -qE '^  /d +F32 +\[2,1099511627776,1099511627776\] +- ' stdout || fail "table row: $(cat stdout)"
expect_stdout_contains "1 file, 2 tensors, 2 elements: 1 NaN, 0 Inf, 0 outliers, 1 error; FAILED (exit 3)"
expect_json ovf.json '[(t["name"], t["status"], t["elements"]) for t in j["files"][0]["tensors"]]' '[["/d", "error", null], ["/ok", "ok", 2]]'
mkdir out
expect_exit 3 "$NANAUDIT" clean -o out/o.h5 ovf.h5
expect_stderr_contains "ovf.h5: /d: element count overflows 64 bits"
assert_eq "$(ls -A out)" "" "clean left a file"
pass
