#!/bin/bash
# A scalar (rank 0) is copied unchanged unless --include names it (fourth
# fresh-user round: --normalize turned a checkpoint's I64 'step' 1234 into
# F32 0.0, and a netCDF file's scalar time and grid-mapping variables into
# 0, with only a "constant feature" warning). A scalar has no feature
# axis: normalized it can only become LO or 0, and it is never an outlier.
# Its NaN/Inf are still counted (warning, exit 1), as for any copied tensor.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
save_file({"step": np.array(1234, dtype=np.int64), "lr": np.array(np.nan, dtype=np.float32),
           "w": np.array([[1.0, 2.0], [3.0, 5.0]], dtype=np.float32)}, "c.safetensors")
np.save("s.npy", np.array(5.0))
PY
expect_exit 1 "$N" clean c.safetensors -o o.safetensors --nonfinite zero --normalize minmax \
    --format json
expect_json "$T/stdout" '[(t["name"], t["status"], t.get("reason")) for t in j["tensors"]]' \
    '[["step", "copied", "a scalar (rank 0): copied unchanged (--include it to clean it)"], ["lr", "copied", "a scalar (rank 0): copied unchanged (--include it to clean it)"], ["w", "cleaned", null]]'
"$NA_PYTHON" - <<'PY' || fail "output values"
import numpy as np
from safetensors.numpy import load_file
o = load_file("o.safetensors")
assert o["step"].dtype == np.int64 and o["step"].shape == () and int(o["step"]) == 1234, o["step"]
assert o["lr"].shape == () and np.isnan(o["lr"]), o["lr"]
w = np.array([[1.0, 2.0], [3.0, 5.0]])
assert np.array_equal(o["w"], ((w - 1) / 4).astype(np.float32)), o["w"]
PY
expect_exit 1 "$N" clean c.safetensors -o o2.safetensors --nonfinite zero --normalize minmax
expect_stdout_contains "step: copied: a scalar (rank 0): copied unchanged (--include it to clean it)"
expect_stdout_contains "warning: 1 NaN/Inf value(s) left as they are (copied unchanged)"
# named by --include, it is cleaned as asked (a constant: LO, with a warning)
expect_exit 0 "$N" clean c.safetensors -o o3.safetensors --include step --normalize minmax
"$NA_PYTHON" -c '
from safetensors.numpy import load_file
o = load_file("o3.safetensors")
assert o["step"].dtype.name == "float32" and float(o["step"]) == 0.0, o["step"]' || fail "included"
# .npy: the whole file is one scalar, copied byte for byte
expect_exit 0 "$N" clean s.npy -o s2.npy --normalize zscore
cmp -s s.npy s2.npy || fail "s2.npy differs"
if "$N" scan "$NA_TEST_DATA/real/hdf5/hdfgroup-tall.h5" >/dev/null 2>&1 </dev/null || [ $? != 3 ]
then
    "$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("n.h5", "w") as f:
    f["t"] = 562236818.98
    f["x"] = np.arange(10.0)' || fail "n.h5"
    expect_exit 0 "$N" clean n.h5 -o n2.h5 --normalize zscore
    "$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("n2.h5") as f:
    assert f["t"][()] == 562236818.98, f["t"][()]
    x = np.arange(10.0)
    assert np.allclose(f["x"][:], (x - x.mean()) / x.std(), rtol=0, atol=1e-12), f["x"][:]' ||
        fail "n2.h5 values"
fi
pass
