#!/bin/bash
# Issue 4, fresh-user report: which inputs default to --samples. Raw, HDF5
# and NumPy .npy hold datasets (axis 0 = samples: per-feature statistics,
# 'drop' allowed); safetensors and PyTorch hold weights (one statistic per
# tensor, no 'drop'). PyTorch defaulted to samples (the format is named
# "pytorch", the check said "torch"), and --help, man page and README did
# not name NumPy. Checked in the change report's "samples" key.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
a = np.arange(6, dtype=np.float32).reshape(3, 2)
np.save("a.npy", a)
a.tofile("a.f32")
save_file({"w": a}, "a.safetensors")
PY
samples() { # FILE ARGS...: the "samples" of every tensor in a dry run's report
    local f="$1"; shift
    expect_exit 0 "$N" clean --dry-run --nonfinite zero --report r.json "$@" "$f"
    json_get r.json '[t["samples"] for t in j["tensors"]]'
}
assert_eq "$(samples a.npy)" "[true]" "a.npy"
assert_eq "$(samples a.f32 --dtype F32 --shape 3x2)" "[true]" "raw"
assert_eq "$(samples a.safetensors)" "[false]" "safetensors"
assert_eq "$(samples "$NA_TEST_DATA/real/pytorch/burn-float64.pt")" "[false]" "PyTorch"
assert_eq "$(samples "$NA_TEST_DATA/real/pytorch/burn-float64.pt" --samples)" "[true]" "PyTorch --samples"
assert_eq "$(samples a.npy --no-samples)" "[false]" "a.npy --no-samples"

# the documents say the same
expect_exit 0 "$N" clean --help
expect_stdout_contains "(default on for raw,"
expect_stdout_contains "HDF5 and NumPy, off for safetensors and PyTorch, whose tensors are"
grep -q "On by default for raw, HDF5 and NumPy" "$NA_SRC/man/nanaudit.1" || fail "man page"
grep -q "for raw, HDF5 and NumPy files; safetensors and PyTorch tensors are weights" "$NA_SRC/README.md" ||
    fail "README"
pass
