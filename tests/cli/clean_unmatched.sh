#!/bin/bash
# clean --include/--exclude patterns that name no tensor: one warning line
# each on stderr, the exit code and the output unchanged (a misspelt
# --exclude would otherwise clean what it meant to keep, silently).
# --together's unmatched element stays a usage error (clean_together.sh).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
x = np.arange(40, dtype=np.float32).reshape(20, 2)
x[3, 1] = np.nan
save_file({"a.w": x, "b.w": x.copy()}, "in.safetensors")
PY
N="$NANAUDIT"
expect_exit 0 "$N" clean in.safetensors --samples -o o1.st --exclude u --exclude 'b.*' --include 'zz*'
expect_stderr_contains "nanaudit: warning: in.safetensors: --exclude 'u' matches no tensor"
expect_stderr_contains "nanaudit: warning: in.safetensors: --include 'zz*' matches no tensor"
expect_stderr_lacks "'b.*' matches"
assert_eq "$(grep -c 'matches no tensor' "$T/stderr")" "2" "warning lines"
# patterns that all match: no warning
expect_exit 0 "$N" clean in.safetensors --samples --allow-misaligned -o o2.st --include 'a.*' --exclude b.w
expect_stderr_lacks "matches no tensor"
"$NA_PYTHON" - <<'PY' || fail "outputs"
from safetensors.numpy import load_file
import numpy as np
o1, o2 = load_file("o1.st"), load_file("o2.st")
# --include 'zz*' selects nothing: both copied unchanged, NaN row kept
assert o1["a.w"].shape == (20, 2) and np.isnan(o1["a.w"][3, 1])
# a.w cleaned (NaN row dropped), b.w copied
assert o2["a.w"].shape == (19, 2) and o2["b.w"].shape == (20, 2), (o2["a.w"].shape, o2["b.w"].shape)
PY
pass
