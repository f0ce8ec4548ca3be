#!/bin/bash
# Regression test for issue 4: a libhdf5 write error reached the user as
# "write failed: unknown libhdf5 error" (the H5Sclose after the failed
# H5Dwrite cleared libhdf5's error stack), and where the cause survived
# it was libhdf5's file-driver text cut at 200 bytes, with ctime()'s
# newline in it: "file write failed: time = Mon Nov 30 08:16:12 2026?,
# filename = '...', ..., buf = 0x7f0b05367800, total write". Now one
# line, bounded, with the system's message (formats/hdf5_msg.c). The
# write error comes from RLIMIT_FSIZE (ulimit -f; clean ignores SIGXFSZ,
# so the write gets EFBIG, errno 27 on Linux): exit 4, nothing written.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"
# Not in the ThreadSanitizer build: under `ulimit -f` any TSan + libomp
# binary dies at start-up (see tests/cli/clean_safety.sh).
if nm "$N" 2>/dev/null | grep -q '__tsan_init'; then
    echo "SKIP $NA_TEST_NAME (ThreadSanitizer build)"
    exit 0
fi
mkdir out
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
x = np.random.default_rng(0).normal(size=(20000, 8))
with h5py.File("c.h5", "w") as f:
    f["x"] = x                                   # contiguous
with h5py.File("z.h5", "w") as f:
    f.create_dataset("x", data=x, chunks=(1000, 8), compression="gzip")
PY

for f in c z; do
    LAST_RC=0
    (ulimit -f 64; exec "$N" clean "$f.h5" -o "out/$f.h5" --normalize minmax) \
        >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    assert_eq "$LAST_RC" "4" "$f: exit code under RLIMIT_FSIZE"
    assert_eq "$(wc -l <"$T/stderr")" "1" "$f: lines of error"
    line=$(cat "$T/stderr")
    # the data write or the close that flushes it, whichever libhdf5 hits
    case "$line" in
    "nanaudit: out/$f.h5: /x: write failed: file write failed: File too large (errno 27); nothing written") ;;
    "nanaudit: out/$f.h5: libhdf5 could not finish the file: file write failed: File too large (errno 27); nothing written") ;;
    *) fail "$f: unexpected message: $line" ;;
    esac
    [ "${#line}" -le 400 ] || fail "$f: message of ${#line} bytes"
    assert_eq "$(ls -A out)" "" "$f: files left in out/"
done
pass
