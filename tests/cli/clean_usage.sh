#!/bin/bash
# `nanaudit clean` usage errors and refusals (issue 4): every error path
# with its one-line message and exit code. Exit 2 for flags, option files
# and refused outputs; 3 for an unreadable input; 4 when the output
# directory cannot take the temporary file.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
import ml_dtypes
np.arange(10, dtype=np.float64).tofile("a.f64")
save_file({"w": np.array([1, 2, np.nan, 4], np.float32)}, "w.safetensors")
x = np.arange(12, dtype=np.float32).reshape(4, 3); x[1, 1] = np.nan
save_file({"x": x, "y": np.arange(4, dtype=np.int64)}, "xy.safetensors")
save_file({"q": np.ones(4, ml_dtypes.float8_e4m3fn)}, "f8.safetensors")
PY
N="$NANAUDIT"

# --help states the semantics (issue 4: all of them in --help)
expect_exit 0 "$N" clean --help
for s in "non-finite -> outliers -> normalization" "ddof=0" "per feature" "--global" \
    "drop' needs samples" "passes through" "0.6745" "1.253314" "LO + (x - min)/(max - min)" \
    "maps to LO (minmax) or 0 (zscore)" "rounded to nearest even" "written as F32" \
    ".nanaudit-tmp-XXXXXX-NAME" "--max-drop-fraction" "--apply-params" "Exit status: 0 written"; do
    expect_stdout_contains "$s"
done
[ -z "$(awk 'length($0) > 79' "$T/stdout")" ] || fail "clean --help lines over 79 columns"

expect_exit 2 "$N" clean
expect_stderr_contains "no input files"
expect_exit 2 "$N" clean a.f64 w.safetensors -o o
expect_stderr_contains "clean takes exactly one input file (got 2)"
expect_exit 2 "$N" clean --dtype F64 a.f64
expect_stderr_contains "-o FILE is required (or --dry-run)"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --nonfinite nope
expect_stderr_contains "--nonfinite: 'nope' is not drop, zero, mean, value=X (X finite) or keep"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --nonfinite value=inf
expect_stderr_contains "is not drop, zero, mean, value=X"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --outliers cut
expect_stderr_contains "--outliers: 'cut' is not drop, clip, nan or mean"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --normalize l2
expect_stderr_contains "--normalize: 'l2' is not minmax or zscore"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --normalize minmax --feature-range 1:0
expect_stderr_contains "--feature-range: '1:0' is not LO:HI with LO < HI"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --feature-range -1:1
expect_stderr_contains "--feature-range needs --normalize minmax"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --mad 0
expect_stderr_contains "--mad: '0' is not a number > 0"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --zscore 3 --mad 3
expect_stderr_contains "give one of --zscore and --mad"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --zscore 0
expect_stderr_contains "--zscore: '0' is not a number > 0"
# clean's --zscore has no 0 (scan's switches the test off): the message
# says > 0 for every bad K (fifteenth fresh-user round: 'nan' said >= 0)
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --zscore nan
expect_stderr_contains "--zscore: 'nan' is not a number > 0"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --max-drop-fraction 2
expect_stderr_contains "--max-drop-fraction: '2' is not a fraction from 0 to 1"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --out-dtype F8_E4M3
expect_stderr_contains "--out-dtype: 'F8_E4M3' is not an output dtype"

# weights: no default outlier action, no drop
expect_exit 2 "$N" clean w.safetensors -o o --zscore 3
expect_stderr_contains "--zscore on weights (safetensors tensors are not samples) needs --outliers clip|nan|mean"
expect_exit 2 "$N" clean w.safetensors -o o --nonfinite drop
expect_stderr_contains "--nonfinite drop needs --samples (axis 0 of a weight would change shape); use --nonfinite zero"
expect_exit 2 "$N" clean w.safetensors -o o --mad 3.5 --outliers drop
expect_stderr_contains "--outliers drop needs --samples"
expect_stderr_contains "use --outliers clip"

# parameter files: bad JSON, wrong kind, wrong feature count, missing
echo '{"a": 1, "a": 2}' >dup.json
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --apply-params dup.json
expect_stderr_contains "bad --apply-params file: duplicate object key"
echo '{"schema_version": 1, "kind": "other", "tensors": {}}' >kind.json
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --apply-params kind.json
expect_stderr_contains "not a nanaudit clean parameter file (schema_version 1 or 2)"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --apply-params missing.json
expect_stderr_contains "bad --apply-params file: unable to open missing.json"
"$N" clean --dtype F64 --shape 5x2 a.f64 -o p.out --normalize zscore --save-params p.json >/dev/null ||
    fail "save-params"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o o --normalize zscore --apply-params p.json
expect_stderr_contains "tensor 'data': parameters for 2 features, the data has 1"
"$NA_PYTHON" -c 'import json; j=json.load(open("p.json")); j["tensors"]["data"]["n_std"]=[1]; json.dump(j, open("short.json","w"))'
expect_exit 2 "$N" clean --dtype F64 --shape 5x2 a.f64 -o o --apply-params short.json
expect_stderr_contains "tensor 'data': \"n_std\" must be 2 numbers or nulls"
[ ! -e o ] || fail "an output appeared after usage errors"

# outputs: the input itself, through a symlink and a hard link; existing
expect_exit 2 "$N" clean --dtype F64 a.f64 -o a.f64
expect_stderr_contains "a.f64: is the input file; the input is never modified"
expect_exit 2 "$N" clean --dtype F64 a.f64 -o ./a.f64
assert_eq "$(cat "$T/stderr")" "nanaudit: ./a.f64: is the input file; the input is never modified" \
    "the same name spelled otherwise is no link (round 32b)"
ln -s a.f64 sym.f64
expect_exit 2 "$N" clean --dtype F64 a.f64 -o sym.f64 --force
expect_stderr_contains "sym.f64: is the input file (same file through a link)"
ln a.f64 hard.f64
expect_exit 2 "$N" clean --dtype F64 a.f64 -o hard.f64 --force
expect_stderr_contains "hard.f64: is the input file (same file through a link)"
echo old >exists.out
expect_exit 2 "$N" clean --dtype F64 a.f64 -o exists.out
expect_stderr_contains "exists.out: exists; use --force to replace it"
assert_eq "$(cat exists.out)" "old" "refused output kept"
expect_exit 0 "$N" clean --dtype F64 a.f64 -o exists.out --force
assert_eq "$(stat -c %s exists.out)" "80" "forced output size"
mkdir adir
expect_exit 2 "$N" clean --dtype F64 a.f64 -o adir
expect_stderr_contains "adir: is a directory; -o takes a file name"
expect_exit 4 "$N" clean --dtype F64 a.f64 -o nodir/out
expect_stderr_contains "cannot create a temporary file in 'nodir': No such file or directory"

# inputs
expect_exit 3 "$N" clean missing.safetensors -o o
expect_stderr_contains "missing.safetensors:"
# a dtype clean cannot write: copied when not named, an error when included
expect_exit 0 "$N" clean f8.safetensors -o f8.out --nonfinite zero
expect_stdout_contains "q: copied: clean cannot write dtype F8_E4M3 back"
expect_exit 3 "$N" clean f8.safetensors -o f8b.out --nonfinite zero --include 'q'
expect_stderr_contains "q: clean cannot write dtype F8_E4M3 back (supported: F64 F32 F16 BF16 and integers)"

# dropping rows of one tensor misaligns another of the same length
expect_exit 2 "$N" clean xy.safetensors --samples -o xy.out --max-drop-fraction 1
expect_stderr_contains "dropping 1 sample from 'x' would misalign it with 'y' (both have 4 rows); use --allow-misaligned"
expect_exit 0 "$N" clean xy.safetensors --samples --include x -o xy.out --allow-misaligned --max-drop-fraction 0.5
"$NA_PYTHON" -c '
from safetensors.numpy import load_file
d = load_file("xy.out"); assert d["x"].shape == (3, 3) and d["y"].shape == (4,), d' || fail "allow-misaligned output"

# one output: a second -o is a usage error, nothing written (it silently
# replaced the first: fourth fresh-user round)
expect_exit 2 "$N" clean xy.safetensors -o one.out -o two.out
expect_stderr_contains "nanaudit: -o given twice ('one.out' and 'two.out'): clean writes one output"
[ ! -e one.out ] && [ ! -e two.out ] || fail "an output was written"
pass
