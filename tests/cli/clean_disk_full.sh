#!/bin/bash
# clean onto a full file system (issue 4, "Safety: nothing lost": a full
# disk must leave no temporary file and nothing under the output's name,
# exit 4, one line, input untouched). A 1 MiB tmpfs holds less than any
# output here. Every writer: safetensors, .npy, .npz, raw, HDF5 (plain,
# and a compound dataset copied by H5Ocopy, where libhdf5 1.10 dies with
# SIGSEGV on ENOSPC: the line says the file system is full). Needs root
# and the right to mount (as in CI's containers); otherwise SKIP.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
mkdir full
if ! mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
    echo "SKIP $NA_TEST_NAME: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)"
    exit 0
fi
trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
x = np.random.default_rng(0).normal(size=(100000, 4))     # 3.2 MB
x[5, 1] = np.nan
np.save("x.npy", x)
np.savez("x.npz", x=x, y=np.arange(100000.0))
x.tofile("x.f64")
save_file({"w": x}, "x.safetensors")
try:
    import h5py
    with h5py.File("x.h5", "w") as f:
        f["x"] = x
    dt = np.dtype([("a", "<f8"), ("b", "<i4")])
    c = np.zeros(200000, dt); c["a"] = np.arange(200000.0); c["b"] = 1
    with h5py.File("c.h5", "w") as f:
        f.create_dataset("c", data=c, chunks=(10000,))
        f["y"] = np.arange(200000.0)
except ImportError:
    pass
PY
sha256sum x.* c.h5 2>/dev/null >before.sha
# full_run WHY FILE ARGS...: exit 4, one line "nanaudit: full/FILE: ...WHY;
# nothing written", nothing left on the tmpfs
full_run() {
    local why="$1" f="$2" line
    shift 2
    expect_exit 4 "$N" clean -q "$f" -o "full/$f" "$@"
    assert_eq "$(wc -l <"$T/stderr")" "1" "$f: lines of error"
    line=$(cat "$T/stderr")
    case "$line" in
    "nanaudit: full/$f: "*"$why; nothing written") ;;
    *) fail "$f: unexpected message: $line" ;;
    esac
    assert_eq "$(ls -A full)" "" "$f: files left on the full file system"
}
NOSPC="No space left on device"
# the line names the tensor whose bytes were going out (round 32b)
full_run "data: write error: $NOSPC" x.npy --nonfinite zero
full_run "x: write error: $NOSPC" x.npz --nonfinite zero
full_run "data: write error: $NOSPC" x.f64 --dtype F64 --shape 100000x4 --nonfinite zero
full_run "w: write error: $NOSPC" x.safetensors --nonfinite zero
if "$N" scan "$NA_TEST_DATA/real/hdf5/hdfgroup-tall.h5" >/dev/null 2>&1 </dev/null ||
    [ $? != 3 ]; then
    full_run "$NOSPC (errno 28)" x.h5 --nonfinite zero
    # the compound dataset is copied (its fields are not selected)
    full_run "SIGSEGV (the output's file system is full: no space left on device)" \
        c.h5 --include /y
fi
sha256sum -c --quiet before.sha || fail "an input changed"
pass
