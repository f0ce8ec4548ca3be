#!/bin/bash
# `nanaudit clean` writing HDF5 (issue 4): the error paths of the HDF5
# writer (formats/hdf5_write.c, hdf5_wchild.c), each with its one-line
# message and exit code, and nothing left behind: an output directory
# that cannot hold the temporary file (exit 4), a file-size limit hit by
# libhdf5 (exit 4), a crash of the writer's libhdf5 process (the
# NANAUDIT_HDF5_WRITE_FAULT hook, as libhdf5 crashes on hostile input:
# exit 4) or hangs (stopped after --hdf5-timeout: exit 4), SIGTERM
# mid-write, an existing output without --force (exit
# 2), -o naming the input through a symlink or a hard link (exit 2); and
# a format without a writer still refused (exit 3). The values written
# are checked by tests/conformance/test_clean_hdf5.py.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
mkdir out
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
rng = np.random.default_rng(0)
with h5py.File("in.h5", "w") as f:
    f.create_dataset("x", data=rng.normal(size=(4096, 16)), chunks=(512, 16))
    f.create_dataset("small", data=np.arange(10.0))
PY
sum0="$(sha256sum in.h5)"
N="$NANAUDIT"
no_tmp() { assert_eq "$(ls -A "$1" | grep -c nanaudit-tmp)" "0" "temporary file left in $1 ($2)"; }

# a normal run, then the same output again: refused without --force
expect_exit 0 "$N" clean in.h5 -o out/ok.h5 --normalize zscore
expect_stdout_contains "written: out/ok.h5 (verified)"
no_tmp out "normal run"
expect_exit 2 "$N" clean in.h5 -o out/ok.h5 --normalize zscore
expect_stderr_contains "nanaudit: out/ok.h5: exists; use --force to replace it"
expect_exit 0 "$N" clean in.h5 -o out/ok.h5 --normalize minmax --force
# the output is an HDF5 file that scan reads
expect_exit 0 "$N" scan out/ok.h5
expect_stdout_contains "/x"

# -o resolving to the input: a symlink, a hard link
ln -s in.h5 sym.h5
ln in.h5 hard.h5
for o in sym.h5 hard.h5; do
    expect_exit 2 "$N" clean in.h5 -o "$o" --normalize zscore --force
    expect_stderr_contains "nanaudit: $o: is the input file (same file through a link); the input is never modified"
done

# an output directory that cannot hold a file: exit 4, nothing created
touch notadir
expect_exit 4 "$N" clean in.h5 -o notadir/x.h5 --normalize zscore
expect_stderr_contains "nanaudit: notadir/x.h5: cannot create a temporary file in 'notadir': Not a directory"

# libhdf5 hits a 64 KiB file-size limit (the output needs ~512 KiB).
# Not in the ThreadSanitizer build: under `ulimit -f 64` any TSan + libomp
# binary dies at start-up (see tests/cli/clean_safety.sh).
if ! nm "$N" 2>/dev/null | grep -q '__tsan_init'; then
    LAST_RC=0
    (ulimit -f 64; exec "$N" clean in.h5 -o out/big.h5 --normalize minmax) \
        >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    assert_eq "$LAST_RC" "4" "exit code under RLIMIT_FSIZE"
    expect_stderr_contains "nanaudit: out/big.h5: "
    expect_stderr_contains "; nothing written"
    assert_eq "$(wc -l <"$T/stderr")" "1" "one line of error"
    [ ! -e out/big.h5 ] || fail "partial output after a write error"
    no_tmp out "file-size limit"
fi

# the writer's libhdf5 process crashes: one line, exit 4, nothing left
expect_exit 4 env NANAUDIT_HDF5_WRITE_FAULT=segv "$N" clean in.h5 -o out/crash.h5 --normalize minmax
expect_stderr_contains "nanaudit: out/crash.h5: /small: libhdf5 crashed while writing the copy: SIGSEGV; nothing written"
assert_eq "$(wc -l <"$T/stderr")" "1" "one line of error"
[ ! -e out/crash.h5 ] || fail "output after a crash"
no_tmp out "crash"

# the reader's libhdf5 crashes in the write pass (its second read of /x):
# the input's fault, exit 3, and the line names the input, not OUT (it
# said "out/rcrash.h5: ... crashed reading this file"; round 32b)
expect_exit 3 env NANAUDIT_HDF5_FAULT=segv@read:2 "$N" clean in.h5 -o out/rcrash.h5 \
    --normalize minmax --include /x
assert_eq "$(cat "$T/stderr")" "nanaudit: in.h5: /x: libhdf5 crashed reading this file: SIGSEGV; nothing written" "reader crash in the write pass"
expect_stdout_contains "/x: F64 -> F64"
[ ! -e out/rcrash.h5 ] || fail "output after a reader crash"
no_tmp out "reader crash"

# ... or hangs: stopped after --hdf5-timeout, one line, exit 4
expect_exit 4 env NANAUDIT_HDF5_WRITE_FAULT=hang "$N" clean in.h5 -o out/hang.h5 --normalize minmax \
    --hdf5-timeout 0.5
expect_stderr_contains "nanaudit: out/hang.h5: /small: libhdf5 did not answer within 0.5 s (--hdf5-timeout): writer stopped; nothing written"
[ ! -e out/hang.h5 ] || fail "output after a hang"
no_tmp out "hang"

# SIGTERM after the first bytes: the temporary file goes, the child too
LAST_RC=0
NANAUDIT_TEST_SIGNAL=TERM "$N" clean in.h5 -o out/sig.h5 --normalize minmax \
    >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
assert_eq "$LAST_RC" "143" "exit status after SIGTERM"
[ ! -e out/sig.h5 ] || fail "output exists after SIGTERM"
no_tmp out "SIGTERM"

# a signal to the parent alone between its unlink of the temporary file
# and its exit let the writer child, which opens the file by name, create
# it again (fifteenth fresh-user round: left behind for good). The
# late-create fault makes the child outlive its parent and create the
# file 2 s late; the parent's handler now stops the child before the
# unlink.
NANAUDIT_HDF5_WRITE_FAULT=late-create "$N" clean in.h5 -o out/late.h5 --normalize minmax \
    >/dev/null 2>&1 </dev/null &
pid=$!
for _ in $(seq 100); do
    ls -A out | grep -q nanaudit-tmp && break
    sleep 0.05
done
ls -A out | grep -q nanaudit-tmp || fail "no temporary file appeared"
sleep 0.3
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq "$rc" "143" "exit status after SIGTERM to the parent alone"
sleep 2.5 # past the child's late create, had it lived
no_tmp out "SIGTERM to the parent alone"
[ ! -e out/late.h5 ] || fail "output exists after SIGTERM"

assert_eq "$(sha256sum in.h5)" "$sum0" "the input changed"
pass
