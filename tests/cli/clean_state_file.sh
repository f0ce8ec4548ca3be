#!/bin/bash
# clean_state_file.sh - clean keeps 2 bits per sample (lib/clean.h
# row_state). Past na_clean_opts_t.state_file_min bytes (256 MiB or 1/16
# of physical memory) they live in an unnamed file beside the output,
# mapped, so that a dataset of more samples than memory holds stays within
# bounded memory (issue 4). NANAUDIT_CLEAN_STATE_FILE_MIN=0 puts every
# state there: the output bytes and the report must be those of states in
# memory; where the file cannot be made (no directory, a file-size limit)
# the states fall back to memory.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c '
import numpy as np
rng = np.random.default_rng(7)
x = rng.standard_normal(1 << 20).astype("<f4")
x[::1000] = np.nan
x[5::777] = 40
x.tofile("b.raw")' || fail "b.raw"

# raw F32, 2^20 samples: dropped rows in every 4 KiB page of the states
run() { # $1: threshold ('' = the default), then clean's arguments
    local m=$1
    shift
    NANAUDIT_CLEAN_STATE_FILE_MIN=$m "$NANAUDIT" clean --dtype F32 b.raw --zscore 3 \
        --normalize minmax "$@"
}
expect_exit 0 run '' -o out.raw --report mem.json
mv out.raw mem.raw
cp stdout mem.txt
expect_exit 0 run 0 -o out.raw --report file.json
cmp -s out.raw mem.raw || fail "the output differs with the states in a file"
cmp -s file.json mem.json || fail "the JSON report differs with the states in a file"
cmp -s stdout mem.txt || fail "the text report differs with the states in a file"
want=$("$NA_PYTHON" -c '
import numpy as np
x = np.fromfile("b.raw", "<f4").astype("f8")
keep = np.isfinite(x)
m, s = x[keep].mean(), x[keep].std()
print(int((~keep).sum() + (np.abs(x[keep] - m) > 3 * s).sum()))')
assert_eq "$(json_get mem.json 'j["tensors"][0]["samples_dropped"]["total"]')" "$want" "dropped"
assert_eq "$(ls -A | grep -c nanaudit)" 0 "files left beside the output"

# where the states went: an unnamed file in -o's directory, its blocks
# reserved (one byte per four samples, plus one)
if command -v strace > /dev/null && ! is_sanitized; then
    mkdir d
    NANAUDIT_CLEAN_STATE_FILE_MIN=0 strace -f -qq -e trace=openat,fallocate -o st.txt \
        "$NANAUDIT" clean --dtype F32 b.raw --zscore 3 -o d/out.raw > /dev/null ||
        fail "clean under strace"
    grep -q 'openat(AT_FDCWD, "d", O_RDWR|O_CLOEXEC|O_TMPFILE' st.txt ||
        fail "no O_TMPFILE in d: $(grep -v '/usr\|/lib\|/proc' st.txt | head -5)"
    grep -q 'fallocate([0-9]*, 0, 0, 262145)' st.txt || fail "no fallocate of 262145 bytes"
    "$NANAUDIT" clean --dtype F32 b.raw --zscore 3 -o d/out.raw --force > /dev/null &&
        strace -f -qq -e trace=openat -o st2.txt "$NANAUDIT" clean --dtype F32 b.raw --zscore 3 \
            -o d/out.raw --force > /dev/null || fail "clean with the default threshold"
    grep -q O_TMPFILE st2.txt && fail "a 256 KiB state went to a file by default"
else
    echo "note: strace unavailable (or a sanitizer build): where the states go is not checked"
fi

# no file can be made: the states are kept in memory, the same report
expect_exit 0 env TMPDIR="$T/missing" NANAUDIT_CLEAN_STATE_FILE_MIN=0 "$NANAUDIT" clean \
    --dtype F32 b.raw --zscore 3 --normalize minmax --dry-run --report dry.json
expect_exit 0 "$NANAUDIT" clean --dtype F32 b.raw --zscore 3 --normalize minmax --dry-run \
    --report dry_mem.json
cmp -s dry.json dry_mem.json || fail "dry run: the report differs without the state file"
# a file-size limit (posix_fallocate: EFBIG) on the state file of a dry
# run. Not in the ThreadSanitizer build: under `ulimit -f` libomp's
# registration file in /dev/shm is a SIGBUS before any work (as in
# clean_safety.sh)
if ! nm "$NANAUDIT" 2> /dev/null | grep -q '__tsan_init'; then
    expect_exit 0 bash -c "ulimit -f 8; TMPDIR='$T' NANAUDIT_CLEAN_STATE_FILE_MIN=0 \
        '$NANAUDIT' clean --dtype F32 b.raw --zscore 3 --normalize minmax --dry-run \
        --report dry_fsize.json"
    cmp -s dry_fsize.json dry_mem.json || fail "dry run: the report differs under a file-size limit"
fi

# HDF5 --together with a string follower (na_clean_rows_prepare): the
# writer child reads the mapped states of /x, /y and /s
if "$NANAUDIT" scan "$NA_TEST_DATA/real/hdf5/hdfgroup-tall.h5" > /dev/null 2>&1 < /dev/null; then
    "$NA_PYTHON" -c '
import h5py, numpy as np
rng = np.random.default_rng(8)
n = 20000
x = rng.standard_normal((n, 4)).astype("f4")
x[::97, 1] = np.nan
x[3::501, 2] = 60
with h5py.File("t.h5", "w") as f:
    f["x"] = x
    f["y"] = np.arange(n, dtype="i8")
    f["s"] = np.array([b"s%d" % i for i in range(n)], dtype="S8")' || fail "t.h5"
    expect_exit 0 "$NANAUDIT" clean t.h5 --together /x,/y,/s --zscore 4 -o mem.h5
    expect_exit 0 env NANAUDIT_CLEAN_STATE_FILE_MIN=0 "$NANAUDIT" clean t.h5 \
        --together /x,/y,/s --zscore 4 -o file.h5
    "$NA_PYTHON" -c '
import h5py, numpy as np, sys
a, b, i = h5py.File("mem.h5"), h5py.File("file.h5"), h5py.File("t.h5")
for k in ("x", "y", "s"):
    if not np.array_equal(a[k][()], b[k][()], equal_nan=(k == "x")):
        sys.exit("%s differs" % k)
x, y = i["x"][()], i["y"][()]
keep = np.isfinite(x).all(axis=1)
m, s = x[keep].mean(axis=0, dtype="f8"), x[keep].std(axis=0, dtype="f8")
keep &= ~(np.abs(x - m) > 4 * s).any(axis=1)
if not np.array_equal(b["y"][()], y[keep]):
    sys.exit("rows kept: %d, numpy %d" % (len(b["y"]), keep.sum()))
if not np.array_equal(b["s"][()], i["s"][()][keep]):
    sys.exit("strings not aligned")' || fail "HDF5 outputs"
fi

# the state file leaves room for the output in the same directory: 2.8 M
# U8 samples (2.8 MB out, 700 KB of states) on a 3200 KiB file system fit
# with the states in memory; in a file they made the write fail with
# ENOSPC, exit 4 (round 37a). Needs root and tmpfs.
mkdir tiny
if [ "$(id -u)" = 0 ] && ! is_sanitized && mount -t tmpfs -o size=3200k tmpfs tiny 2> /dev/null; then
    trap 'umount "$T/tiny" 2> /dev/null; rm -rf "$T"' EXIT
    "$NA_PYTHON" -c '
import numpy as np
(np.arange(2800000) % 200).astype("u1").tofile("u.raw")' || fail "u.raw"
    expect_exit 0 env NANAUDIT_CLEAN_STATE_FILE_MIN=0 "$NANAUDIT" clean --dtype U8 u.raw -o tiny/u.raw
    cmp -s u.raw tiny/u.raw || fail "tiny/u.raw differs"
    umount tiny
else
    echo "note: no tmpfs mount here: the room left for the output is not checked"
fi
pass
