#!/bin/bash
# `nanaudit clean` on NumPy input (issue 4): a .npy is written as .npy
# (formats/npy_write.c); what it cannot write is refused in one line
# and nothing appears under the output's name (values against numpy are in
# tests/conformance/test_clean_npy.py).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
np.save("f.npy", np.array([0.0, 1.0, np.nan, 3.0, 4.0]))
np.save("rec.npy", np.zeros(4, dtype=[("a", "<f4"), ("b", "<f8")]))
np.savez("z.npz", a=np.arange(4.0))
PY
N="$NANAUDIT"

expect_exit 0 "$N" clean f.npy -o out.npy --normalize minmax --max-drop-fraction 0.5
expect_stdout_contains "dropped 1 sample (non-finite 1"
"$NA_PYTHON" -c "
import numpy as np
y = np.load('out.npy')
assert y.dtype == np.float64 and y.tolist() == [0.0, 0.25, 0.75, 1.0], y" || fail "np.load"
expect_exit 0 "$N" scan out.npy
expect_stdout_contains "out.npy (npy)"

# a structured array is copied byte for byte (was refused, exit 3:
# tests/cli/clean_npy_parts.sh)
expect_exit 0 "$N" clean rec.npy -o rec.out.npy --nonfinite zero
cmp -s rec.npy rec.out.npy || fail "rec.out.npy is not a copy"
# an --out-dtype .npy has no type for: a usage error before any work
# (exit 2, was exit 3 after the fit and a hint to use the flag given;
# tests/cli/clean_idle_options.sh)
expect_exit 2 "$N" clean f.npy -o bf.npy --out-dtype BF16 --nonfinite zero
expect_stderr_contains "nanaudit: --out-dtype BF16: a .npy file has no such type (numpy has no bfloat16 or float8); use F16, F32 or F64"
[ -e bf.npy ] && fail "bf.npy written"
ls -a | grep -q nanaudit-tmp && fail "temporary file left behind"

# an .npz is written as .npz (its error paths: clean_npz.sh)
expect_exit 0 "$N" clean z.npz -o z2.npz
expect_stdout_contains "written: z2.npz (verified)"

# the report's input_sha256 is the input's, for .npy, .npz and raw input
# too (hashed on its own thread while the passes run); null in a dry run
"$NA_PYTHON" -c "import numpy as np; np.arange(1000.0).tofile('r.f64')" || fail "r.f64"
for args in "--nonfinite zero f.npy" "z.npz" "--dtype F64 r.f64"; do
    set -- $args
    in=${!#}
    expect_exit 0 "$N" clean $args -o "sha.$in" --report sha.json
    expect_json sha.json 'j["input_sha256"]' "\"$(sha256sum "$in" | cut -d' ' -f1)\""
    rm -f "sha.$in"
done
expect_exit 0 "$N" clean f.npy --nonfinite zero --dry-run --report sha.json
expect_json sha.json 'j["input_sha256"]' "null"
pass
