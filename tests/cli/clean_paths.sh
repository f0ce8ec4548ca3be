#!/bin/bash
# Files written besides -o, and -o itself, are checked before any work
# (issue 4 "Safety: nothing lost"; cli/paths.c, check_output in
# cli/clean.c): --report / --save-params may not name the input or the
# output (exit 2), must be creatable (exit 4 before anything is written),
# -o may not be a device node or FIFO even with --force (rename(2) would
# replace it), an existing symbolic link at -o needs --force; scan's
# --report may not name an input. Usage errors that do not depend on the
# input are decided before it is opened (exit 2, no report on stdout).
# --dry-run reports what a real run does (values replaced and clipped,
# statistics after).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
a = np.arange(40, dtype="f8").reshape(20, 2)
a[3, 0] = np.nan
a[7, 1] = 600.0
np.save("x.npy", a)
PY
N="$NANAUDIT"
sum0=$(sha256sum x.npy)
check_input() { assert_eq "$(sha256sum x.npy)" "$sum0" "input after: $*"; }
no_output() { [ ! -e "$1" ] || fail "$1 was written"; assert_eq "$(ls -A | grep -c nanaudit-tmp)" 0 "temporary files"; }

expect_exit 2 "$N" clean x.npy -o y.npy --report x.npy
expect_stderr_contains "nanaudit: x.npy: --report would overwrite an input file (x.npy); the input is never modified"
check_input report; no_output y.npy
expect_exit 2 "$N" clean x.npy -o y.npy --save-params ./x.npy
expect_stderr_contains "nanaudit: ./x.npy: --save-params would overwrite an input file (x.npy)"
check_input save-params; no_output y.npy
ln -s x.npy link.npy
expect_exit 2 "$N" clean x.npy -o y.npy --report link.npy
expect_stderr_contains "--report would overwrite an input file"
check_input symlink
expect_exit 2 "$N" clean x.npy -o y.npy --report y.npy
expect_stderr_contains "nanaudit: y.npy: --report would overwrite the -o output"
no_output y.npy
expect_exit 2 "$N" clean x.npy -o y.npy --save-params y.npy
expect_stderr_contains "nanaudit: y.npy: --save-params would overwrite the -o output"
expect_exit 2 "$N" clean x.npy -o y.npy --report r.json --save-params ./r.json
expect_stderr_contains "nanaudit: ./r.json: --save-params and --report name the same file"
mkdir adir
expect_exit 2 "$N" clean x.npy -o y.npy --report adir
expect_stderr_contains "nanaudit: adir: --report: is a directory"
# not writable: exit 4 before the clean (nothing under -o)
expect_exit 4 "$N" clean x.npy -o y.npy --save-params /nonexistent-dir/p.json
expect_stderr_contains "nanaudit: /nonexistent-dir/p.json: --save-params: cannot create the file in '/nonexistent-dir': No such file or directory"
no_output y.npy
expect_exit 4 "$N" clean x.npy -o y.npy --report /nonexistent-dir/r.json
no_output y.npy
assert_eq "$(wc -c < "$T/stdout")" 0 "stdout of an early refusal"

# -o: a FIFO (and device nodes) is never replaced, even with --force
mkfifo fifo
for f in "" --force; do
    expect_exit 2 "$N" clean x.npy -o fifo $f
    expect_stderr_contains "nanaudit: fifo: is not a regular file (a device, FIFO or socket); -o takes a file name"
    [ -p fifo ] || fail "the FIFO was replaced ($f)"
done
if [ -c /dev/full ]; then
    expect_exit 2 "$N" clean x.npy -o /dev/full --force
    [ -c /dev/full ] || fail "/dev/full was replaced"
fi
# a dangling symbolic link at -o is an existing name: --force to replace it
ln -s nowhere dangling
expect_exit 2 "$N" clean x.npy -o dangling
expect_stderr_contains "nanaudit: dangling: exists (a symbolic link); use --force to replace it"
[ -L dangling ] || fail "the link was replaced without --force"
expect_exit 0 "$N" clean x.npy -o dangling --force --nonfinite zero
[ -f dangling ] && [ ! -L dangling ] || fail "--force did not write the output"

# scan --report naming an input
expect_exit 2 "$N" scan x.npy --report x.npy
expect_stderr_contains "nanaudit: x.npy: --report would overwrite an input file (x.npy)"
check_input scan
expect_exit 2 "$N" scan x.npy --report ok.json --report link.npy
[ ! -e ok.json ] || fail "scan wrote a report after refusing another"

# usage errors decided before the input is opened: exit 2, no report
expect_exit 2 "$N" clean --dry-run --zscore 3 --mad 3 nonexistent.npy
expect_stderr_contains "give one of --zscore and --mad"
expect_exit 2 "$N" clean --zscore 0 x.npy -o z.npy
expect_stderr_contains "--zscore: '0' is not a number > 0"
assert_eq "$(wc -c < "$T/stdout")" 0 "stdout of a usage error"
expect_exit 2 "$N" clean --feature-range 0:1 x.npy -o z.npy
expect_stderr_contains "--feature-range needs --normalize minmax"
assert_eq "$(wc -c < "$T/stdout")" 0 "stdout of a usage error"
expect_exit 2 "$N" clean --nonfinite drop --no-samples x.npy -o z.npy
assert_eq "$(wc -c < "$T/stdout")" 0 "stdout of a usage error"

# --dry-run: the same counts and statistics as the real run, nothing written
args=(--nonfinite zero --zscore 1 --outliers clip --normalize minmax)
expect_exit 0 "$N" clean "${args[@]}" --dry-run --format json x.npy
cp "$T/stdout" dry.json
expect_exit 0 "$N" clean "${args[@]}" --format json x.npy -o real.npy
cp "$T/stdout" real.json
"$NA_PYTHON" - dry.json real.json <<'PY' || fail "dry run and real run differ"
import json, sys
d, r = (json.load(open(p)) for p in sys.argv[1:3])
dt, rt = d["tensors"][0], r["tensors"][0]
for k in rt:
    if k in ("output",):
        continue
    assert dt.get(k) == rt[k], (k, dt.get(k), rt[k])
assert rt["after"] is not None and rt["clipped"] > 0 and rt["nonfinite_replaced"] == 1, rt
PY
expect_exit 0 "$N" clean "${args[@]}" --dry-run x.npy
expect_stdout_contains "dry run: no output written"
expect_stdout_contains "replaced 1 non-finite"

# a long output path is printed whole (it was cut at 511 bytes)
long="$(printf './%.0s' $(seq 300))long.npy"
expect_exit 0 "$N" clean x.npy -o "$long" --nonfinite zero
expect_stdout_contains "written: $long (verified)"
pass
