#!/bin/bash
# A MATLAB v5/v7 MAT-file (scipy.io.savemat's and MATLAB's default) is not
# read (v7.3, HDF5, is). Found in a directory it was skipped as
# "unrecognised content" and the gate passed beside a good file, though
# it held a NaN (tester round 22b, MED). It is now recognised by its
# header and refused, exit 3, as netCDF-3 and GGUF are; a file named .mat
# whose content nothing recognises (a v4 file) is an error too.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir d
"$NA_PYTHON" - <<'PY' || fail "making the files"
import numpy as np
import scipy.io
from safetensors.numpy import save_file
scipy.io.savemat("d/v5.mat", {"x": np.array([1.0, np.nan])})
scipy.io.savemat("d/v4.mat", {"x": np.array([1.0, np.nan])}, format="4")
save_file({"w": np.ones(3, dtype=np.float32)}, "d/good.safetensors")
PY
WHY="MATLAB v5/v7 MAT-file: not supported (save it with -v7.3, an HDF5 file that nanaudit reads); its variables are not audited"
expect_exit 3 "$NANAUDIT" scan d/v5.mat
expect_stderr_contains "nanaudit: d/v5.mat: $WHY"
expect_exit 3 "$NANAUDIT" scan -q d
expect_stderr_contains "nanaudit: d/v5.mat: $WHY"
expect_stderr_contains "nanaudit: d/v4.mat: unrecognised content"
expect_exit 3 "$NANAUDIT" scan d --format json
cp "$T/stdout" r.json
expect_json r.json '[(f["path"], f["format"], f["status"]) for f in j["files"]]' \
    '[["d/good.safetensors", "safetensors", "ok"], ["d/v4.mat", null, "error"], ["d/v5.mat", "MATLAB v5 MAT-file", "error"]]'
# named otherwise, in a directory: still an error (content decides)
mkdir e
cp d/v5.mat e/export.dat
expect_exit 3 "$NANAUDIT" scan e
expect_stderr_contains "e/export.dat: $WHY"
expect_exit 3 "$NANAUDIT" info d/v5.mat
expect_stderr_contains "$WHY"
pass
