#!/usr/bin/env bash
# omp_spin.sh - libgomp's idle threads spin for GOMP_SPINCOUNT iterations
# (300,000 by default) before they sleep, which on a loaded machine took
# the CPU from the thread doing serial work (a sparse HDF5 scan: 16 s
# instead of 4 with one busy core). When the user sets neither
# OMP_WAIT_POLICY nor GOMP_SPINCOUNT, nanaudit re-executes itself once
# with GOMP_SPINCOUNT=1000 (cli/main.c omp_spin_short); a value the user
# sets is kept, and so are the arguments and the other variables.
. "$(dirname "$0")/helpers.sh"
command -v strace > /dev/null || { echo "SKIP omp_spin: no strace"; exit 0; }
is_sanitized && { echo "SKIP omp_spin: LeakSanitizer cannot run under ptrace"; exit 0; }
A="$NA_TEST_DATA/real/safetensors/burn-multi_layer.safetensors"
env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY FOO=bar strace -f -qq -v -s 200 -e trace=execve \
    -o "$T/strace.txt" "$NANAUDIT" scan -q "$A" > /dev/null || fail "scan failed"
assert_eq "$(grep -c 'execve(' "$T/strace.txt")" 2 "execve calls without the variables"
# the binary's own path, not /proc/self/exe: the process keeps its name
# (comm "exe" hid it from ps -C nanaudit, pgrep -x and the OOM killer's
# log; round 37a)
SELF=$(readlink -f "$NANAUDIT")
assert_eq "$(grep -c "execve(\"$SELF\"" "$T/strace.txt")" 2 "execve calls of $SELF"
tail -n 1 "$T/strace.txt" | grep -q '"GOMP_SPINCOUNT=1000"' ||
    fail "the second execve lacks GOMP_SPINCOUNT=1000"
tail -n 1 "$T/strace.txt" | grep -q '"FOO=bar"' || fail "FOO lost"
tail -n 1 "$T/strace.txt" | grep -q '"scan", "-q"' || fail "arguments lost"
for v in GOMP_SPINCOUNT=300000 OMP_WAIT_POLICY=active; do
    env "$v" strace -f -qq -v -s 200 -e trace=execve -o "$T/strace.txt" \
        "$NANAUDIT" scan -q "$A" > /dev/null || fail "scan failed with $v"
    assert_eq "$(grep -c 'execve(' "$T/strace.txt")" 1 "execve calls with $v"
done
# an OMP_NUM_THREADS libgomp refuses is ignored by it with a warning as it
# loads; the second process goes without it: one warning, not two (round
# 37a), and the run uses the default threads; a valid one is kept
for v in abc "" 0 "4,x" -2; do
    env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OMP_NUM_THREADS="$v" strace -f -qq -v -s 200 \
        -e trace=execve -o "$T/strace.txt" "$NANAUDIT" scan -q "$A" > /dev/null 2> "$T/err" ||
        fail "scan failed with OMP_NUM_THREADS='$v'"
    assert_eq "$(grep -c 'OMP_NUM_THREADS' "$T/err")" 1 "warnings for OMP_NUM_THREADS='$v'"
    tail -n 1 "$T/strace.txt" | grep -q '"OMP_NUM_THREADS=' &&
        fail "OMP_NUM_THREADS='$v' passed to the second process"
done
for v in 1 " 2 , 1 "; do
    env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OMP_NUM_THREADS="$v" strace -f -qq -v -s 200 \
        -e trace=execve -o "$T/strace.txt" "$NANAUDIT" scan -q "$A" > /dev/null 2> "$T/err" ||
        fail "scan failed with OMP_NUM_THREADS='$v'"
    assert_eq "$(grep -c 'OMP_NUM_THREADS' "$T/err")" 0 "warnings for OMP_NUM_THREADS='$v'"
    tail -n 1 "$T/strace.txt" | grep -qF "\"OMP_NUM_THREADS=$v\"" ||
        fail "OMP_NUM_THREADS='$v' lost"
done
# the report is the same either way
expect_exit 0 env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY "$NANAUDIT" scan --format json "$A"
cp "$T/stdout" "$T/one.json"
expect_exit 0 env GOMP_SPINCOUNT=300000 "$NANAUDIT" scan --format json "$A"
cmp -s "$T/stdout" "$T/one.json" || fail "the report differs"
pass
