#!/bin/bash
# `nanaudit clean` and other processes (issue 4, "Safety: nothing lost"):
# an input modified or replaced while it is being cleaned is exit 3 with
# nothing written (the passes and the SHA-256 saw different bytes); an
# output that appears meanwhile is not replaced without --force (exit 4);
# a dry run with -o checks it as a real run does; an -o name too long for
# the temporary file's fails before the fitting. The other process acts
# while clean is stopped by the NANAUDIT_TEST_SIGNAL=STOP hook (right
# after the first bytes reach the temporary file), so this is
# deterministic.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir out
"$NA_PYTHON" -c "
import numpy as np
np.random.default_rng(1).normal(size=(4096, 16)).tofile('in.f64')
np.save('in.npy', np.arange(1000.0))" || fail "making inputs"
cp in.f64 orig.f64
N="$NANAUDIT"

# run_stopped ARGS...: clean in the background until the hook stops it
run_stopped() {
    NANAUDIT_TEST_SIGNAL=STOP "$N" clean "$@" >"$T/stdout" 2>"$T/stderr" </dev/null &
    PID=$!
    wait_stopped "$PID"
}
# resume EXPECTED_RC: continue it and check its exit status
resume() {
    kill -CONT "$PID"
    wait "$PID"
    assert_eq "$?" "$1" "exit status (stderr: $(cat "$T/stderr"))"
}
no_tmp() { assert_eq "$(ls -A out . | grep -c nanaudit-tmp)" "0" "temporary file left"; }

# 1. the input modified in place mid-clean
run_stopped --dtype F64 --shape 4096x16 in.f64 -o out/a.f64 --normalize minmax --report a.json
printf 'x' | dd of=in.f64 bs=1 seek=100 conv=notrunc status=none
resume 3
assert_eq "$(cat "$T/stderr")" "nanaudit: out/a.f64: the input 'in.f64' changed while it was being cleaned (modified or replaced); nothing written" "stderr"
# the report says why, and has no SHA-256 (round 40b: error null, the
# tensor "cleaned", the hash of bytes the file no longer had)
expect_json a.json '[j["error"], j["input_sha256"], j["written"], j["exit_code"]]' \
    '["out/a.f64: the input '"'in.f64'"' changed while it was being cleaned (modified or replaced)", null, false, 3]'
[ ! -e out/a.f64 ] || fail "output written from a changed input"
no_tmp
cp orig.f64 in.f64

# 2. the input replaced (an atomic save of a new version) mid-clean
run_stopped in.npy -o out/b.npy --normalize zscore
"$NA_PYTHON" -c "import numpy as np; np.save('new.npy', np.ones(1000))" && mv new.npy in.npy
resume 3
expect_stderr_contains "the input 'in.npy' changed while it was being cleaned (modified or replaced); nothing written"
[ ! -e out/b.npy ] || fail "output written from a replaced input"
no_tmp

# 2b. an HDF5 input rewritten in place mid-clean (another file copied
# over it): whether libhdf5's next read fails ("/?: cannot read the
# object header: name doesn't exist", round 41a) or not, the line says
# the input changed
hrc=0
"$N" scan "$NA_TEST_DATA/real/hdf5/hdfgroup-tall.h5" >/dev/null 2>&1 </dev/null || hrc=$?
if [ "$hrc" != 3 ]; then # built with HDF5
    "$NA_PYTHON" -c "
import h5py, numpy as np
with h5py.File('in.h5', 'w') as f:
    for k in range(4):
        f.create_dataset(f'd{k}', data=np.random.default_rng(k).normal(size=(50000, 8)))
with h5py.File('in2.h5', 'w') as f:
    for k in range(6):
        f.create_dataset(f'e{k}', data=np.random.default_rng(k).normal(size=(60000, 8)))"
    run_stopped in.h5 -o out/h.h5 --normalize minmax --allow-misaligned --report h.json
    cp in2.h5 in.h5
    continue_to_end "$PID" # the hook stops it at each chunk written
    rc=0
    wait "$PID" || rc=$?
    assert_eq "$rc" 3 "exit status (stderr: $(cat "$T/stderr"))"
    expect_stderr_contains "nanaudit: out/h.h5: the input 'in.h5' changed while it was being cleaned (modified or replaced); nothing written"
    expect_json h.json '[j["error"], j["written"]]' \
        '["out/h.h5: the input '"'in.h5'"' changed while it was being cleaned (modified or replaced)", false]'
    [ ! -e out/h.h5 ] || fail "output written from a cut input"
    no_tmp
fi

# 3. the output appears mid-clean: kept without --force, replaced with it
run_stopped --dtype F64 --shape 4096x16 in.f64 -o out/c.f64 --normalize minmax --report c.json
echo precious >out/c.f64
resume 4
assert_eq "$(cat "$T/stderr")" "nanaudit: out/c.f64: appeared while cleaning and is not replaced without --force; nothing written" "stderr"
expect_json c.json '[j["error"], j["input_sha256"], j["written"], j["exit_code"]]' \
    '["out/c.f64: appeared while cleaning and is not replaced without --force", null, false, 4]'
assert_eq "$(cat out/c.f64)" "precious" "the file that appeared"
no_tmp
run_stopped --dtype F64 --shape 4096x16 in.f64 -o out/d.f64 --normalize minmax --force
echo precious >out/d.f64
resume 0
assert_eq "$(stat -c %s out/d.f64)" "524288" "output size with --force"
no_tmp

# 4. a dry run with -o checks it as a real run would
echo old >out/e.f64
expect_exit 2 "$N" clean --dtype F64 in.f64 -o out/e.f64 --dry-run
expect_stderr_contains "nanaudit: out/e.f64: exists; use --force to replace it"
expect_exit 2 "$N" clean --dtype F64 in.f64 -o /dev/null --dry-run
expect_stderr_contains "is not a regular file (a device, FIFO or socket); -o takes a file name"
expect_exit 4 "$N" clean --dtype F64 in.f64 -o nodir/x.f64 --dry-run
expect_stderr_contains "nanaudit: nodir/x.f64: cannot create a temporary file in 'nodir': No such file or directory"
# the --report is written and says why (round 42a: none was written, and
# a directory removed during the run left "error" null)
expect_exit 4 "$N" clean --dtype F64 in.f64 -o nodir/x.f64 --report nd.json
expect_json nd.json '[j["error"], j["written"], j["input_sha256"], j["exit_code"]]' \
    '["nodir/x.f64: cannot create a temporary file in '"'nodir'"': No such file or directory", false, null, 4]'
[ -z "$(cat "$T/stdout")" ] || fail "a text report of a run that read nothing: $(cat "$T/stdout")"
expect_exit 0 "$N" clean --dtype F64 in.f64 -o out/e.f64 --dry-run --force
assert_eq "$(cat out/e.f64)" "old" "a dry run wrote the output"

# 5. a name the file system takes, too long for the temporary file's
long=$(printf 'n%.0s' $(seq 240)).f64
expect_exit 4 "$N" clean --dtype F64 in.f64 -o "out/$long"
expect_stderr_contains "the name is too long for clean's temporary file (.nanaudit-tmp-XXXXXX-NAME: 265 bytes, the file system allows 255); use a shorter -o name"
[ -z "$(cat "$T/stdout")" ] || fail "the long name failed after the fitting: $(cat "$T/stdout")"
no_tmp

# 6. a directory that refuses new files even to root (sysfs): found
# before the fitting by making (and removing) a temporary file there
if [ -d /sys ] && ! touch /sys/nanaudit-probe 2>/dev/null; then
    expect_exit 4 "$N" clean --dtype F64 in.f64 -o /sys/x.f64
    expect_stderr_contains "nanaudit: /sys/x.f64: cannot create a temporary file in '/sys': "
    [ -z "$(cat "$T/stdout")" ] || fail "/sys failed after the fitting"
    expect_exit 4 "$N" clean --dtype F64 in.f64 -o /sys/x.f64 --dry-run
fi

# 7. a signal right after the rename (the copy complete and in place):
# dropped, exit 0, as if it came after the run (round 32b: the status said
# killed, 143, over a finished output, and a rerun failed on it)
NANAUDIT_TEST_STOP_PUBLISHED=1 "$N" clean --dtype F64 --shape 4096x16 in.f64 -o out/g.f64 \
    --normalize minmax \
    >"$T/stdout" 2>"$T/stderr" </dev/null &
PID=$!
wait_stopped "$PID"
kill -TERM "$PID"
kill -INT "$PID"
resume 0
expect_stdout_contains "written: out/g.f64 (verified)"
"$NA_PYTHON" -c "
import numpy as np
x = np.fromfile('in.f64').reshape(4096, 16)
want = (x - x.min(0)) / (x.max(0) - x.min(0))
assert np.array_equal(np.fromfile('out/g.f64').reshape(4096, 16), want)" \
    || fail "the copy published before the signal"
no_tmp

# 8. temporary files a killed clean left for the same OUT name (SIGKILL
# cannot be caught): named in a warning, never removed; others' ignored
echo partial >out/.nanaudit-tmp-AbC123-h.f64
echo partial >out/.nanaudit-tmp-XyZ789-h.f64
echo other >out/.nanaudit-tmp-AbC123-other.f64
expect_exit 0 "$N" clean --dtype F64 in.f64 -o out/h.f64
assert_eq "$(cat "$T/stderr")" "nanaudit: warning: out/h.f64: 2 temporary file(s) of an earlier clean to this name in 'out' (.nanaudit-tmp-AbC123-h.f64, ...; 16 bytes): left by a clean that was killed, or one running now; remove them if none is" "the leftovers' warning"
assert_eq "$(ls -A out | grep -c nanaudit-tmp)" 3 "leftovers kept"
rm out/.nanaudit-tmp-*
pass
