#!/bin/bash
# clean_mode.sh - the copy's permission bits are those cp(1) gives: the
# input's less the umask, or with --force the replaced OUT's. Before, every
# copy was 0666 less the umask: a private 0600 checkpoint (safetensors'
# save_file makes 0600 files) gave a world-readable 0644 copy (round 32b).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
from safetensors.numpy import save_file
save_file({"w": np.array([1, np.nan, 3], np.float32)}, "in.safetensors")
with h5py.File("in.h5", "w") as f:
    f["x"] = np.array([1.0, 2.0, 3.0])
PY
N="$NANAUDIT"
mode() { stat -c %a "$1"; }
chmod 600 in.safetensors
chmod 640 in.h5
umask 022
expect_exit 0 "$N" clean in.safetensors -o a.safetensors --nonfinite zero
assert_eq "$(mode a.safetensors)" 600 "mode of a copy of an 0600 input"
expect_exit 0 "$N" clean in.h5 -o a.h5
assert_eq "$(mode a.h5)" 640 "mode of a copy of an 0640 HDF5 input"
chmod 666 in.h5
expect_exit 0 "$N" clean in.h5 -o b.h5
assert_eq "$(mode b.h5)" 644 "the umask applies"
(umask 077 && exec "$N" clean in.h5 -o c.h5) >/dev/null || fail "clean under umask 077"
assert_eq "$(mode c.h5)" 600 "umask 077"
# --force: the replaced OUT keeps its bits
chmod 604 a.safetensors
expect_exit 0 "$N" clean in.safetensors -o a.safetensors --nonfinite zero --force
assert_eq "$(mode a.safetensors)" 604 "a replaced OUT's mode"
# a read-only input: the copy is read-only too, and is written - the
# mode is set after the data (round 34b: the HDF5 writer opens the
# temporary file by name, and a non-root user got "libhdf5 cannot create
# the file", exit 4)
chmod 444 in.h5
expect_exit 0 "$N" clean in.h5 -o r.h5
assert_eq "$(mode r.h5)" 444 "copy of a 0444 input"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    mkdir -m 777 u && cp in.h5 in.safetensors u/ && chmod 755 "$T" && chmod 444 u/in.h5
    chmod 400 u/in.safetensors && chown 65534 u/in.safetensors
    expect_exit 0 setpriv --reuid=65534 --regid=65534 --clear-groups "$N" clean u/in.h5 -o u/r.h5
    assert_eq "$(mode u/r.h5)" 444 "a non-root user's copy of a 0444 HDF5 input"
    expect_exit 0 setpriv --reuid=65534 --regid=65534 --clear-groups "$N" clean u/in.safetensors \
        -o u/r.safetensors --nonfinite zero
    assert_eq "$(mode u/r.safetensors)" 400 "a non-root user's copy of a 0400 input"
fi
pass
