#!/bin/bash
# clean_idle_options.sh - regression (tester19, items 3 and 4): an option
# that would do nothing, or that the output format cannot honour, is a
# usage error (exit 2, one line) before any work, as --feature-range
# without --normalize minmax already was.
#  - --outliers ACTION without --zscore or --mad: there is no outlier
#    step. Before: exit 0, the action silently ignored.
#  - --global without samples (--no-samples, or weights such as a
#    safetensors file): statistics are per tensor already. Before: exit 0.
#  - --out-dtype BF16 for a .npy/.npz output: numpy has no bfloat16.
#    Before: every pass ran, then exit 3 ".npy has no type for dtype BF16
#    (use --out-dtype)" - suggesting the flag that was given. --dry-run
#    is refused the same way; --out-dtype F16 stays allowed.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'EOF' || fail "could not write the test files"
import numpy as np
from safetensors.numpy import save_file
x = np.array([[1.0, 2.0], [3.0, np.nan], [5.0, 60.0]])
np.save("x.npy", x)
np.savez("x.npz", a=x, b=np.arange(4.0))
save_file({"w": np.array([1.0, 2.0, 3.0], np.float32)}, "w.safetensors")
EOF

TRY="(try 'nanaudit clean --help')"
no_output() { [ ! -e "$1" ] || fail "$1 was written"; }

# --outliers without an outlier step
for act in clip drop nan mean; do
    expect_exit 2 "$N" clean --outliers "$act" x.npy -o o.npy
    assert_eq "$(cat "$T/stderr")" "nanaudit: --outliers needs --zscore K or --mad K (without one there is no outlier step) $TRY"
    no_output o.npy
done
expect_exit 2 "$N" clean --dry-run --outliers clip w.safetensors
expect_stderr_contains "--outliers needs --zscore K or --mad K"
expect_exit 0 "$N" clean --nonfinite zero --zscore 1 --outliers clip x.npy -o o.npy
rm -f o.npy
expect_exit 0 "$N" clean --nonfinite zero --mad 3.5 --outliers clip x.npy -o o.npy
rm -f o.npy

# --global without samples
expect_exit 2 "$N" clean --global --no-samples --nonfinite zero x.npy -o o.npy
assert_eq "$(cat "$T/stderr")" "nanaudit: --global needs --samples (--no-samples: one statistic per tensor already) $TRY"
no_output o.npy
expect_exit 2 "$N" clean --global --nonfinite zero w.safetensors -o o.safetensors
assert_eq "$(cat "$T/stderr")" "nanaudit: --global needs --samples (safetensors tensors are weights: one statistic per tensor already) $TRY"
no_output o.safetensors
expect_exit 2 "$N" clean --dry-run --global --nonfinite zero w.safetensors
expect_stderr_contains "--global needs --samples"
expect_exit 0 "$N" clean --global --samples --nonfinite zero w.safetensors -o o.safetensors
expect_exit 0 "$N" clean --global --nonfinite zero x.npy -o o.npy
rm -f o.npy

# --out-dtype that the output format has no type for
expect_exit 2 "$N" clean --normalize zscore --out-dtype BF16 x.npy -o o.npy
assert_eq "$(cat "$T/stderr")" "nanaudit: --out-dtype BF16: a .npy file has no such type (numpy has no bfloat16 or float8); use F16, F32 or F64 $TRY"
no_output o.npy
expect_exit 2 "$N" clean --dry-run --normalize zscore --out-dtype BF16 x.npy
expect_stderr_contains "--out-dtype BF16: a .npy file has no such type"
expect_exit 2 "$N" clean --nonfinite zero --out-dtype BF16 x.npz -o o.npz
assert_eq "$(cat "$T/stderr")" "nanaudit: --out-dtype BF16: a .npz file has no such type (numpy has no bfloat16 or float8); use F16, F32 or F64 $TRY"
no_output o.npz
# the formats that hold it, and a type .npy has
expect_exit 0 "$N" clean --nonfinite zero --out-dtype BF16 w.safetensors -o o.safetensors --force
expect_exit 0 "$N" clean --nonfinite zero --normalize zscore --out-dtype F16 x.npy -o o.npy
assert_eq "$("$NA_PYTHON" -c "import numpy as np; print(np.load('o.npy').dtype)")" "float16"
pass
