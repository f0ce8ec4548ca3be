#!/bin/bash
# bench/run_hdf5_column_inflate.sh - reading deflate HDF5 chunks that are
# not whole rows (formats/hdf5_inflate.c): a (4e6, 12) F32 standard
# normal dataset with 3 NaN in h5py's automatic (15625, 1) chunks, gzip
# level 1 (178 MB). Prints, best of REPS wall seconds (/usr/bin/time):
# scan -q and clean --normalize zscore --no-fsync -q with libhdf5
# inflating every chunk on one thread (NANAUDIT_HDF5_SERIAL=1, the only
# path before) and with nanaudit inflating them on --threads threads
# (the default), and h5py's f["x"][:] of the same file. Figures, never
# assertions.
#   bench/run_hdf5_column_inflate.sh [NANAUDIT] [DIR] [REPS]   (NANAUDIT: build/nanaudit)
set -eu
. "$(dirname "$0")/lib.sh"
N=$(bench_binary "${1:-$(dirname "$0")/../build/nanaudit}")
D="${2:-/tmp/na_gzip_bench}"
REPS="${3:-3}"
PY=$(bench_python "$(cd "$(dirname "$0")/.." && pwd)")
mkdir -p "$D"
cd "$D"
"$PY" - <<'PY'
import os
import h5py
import numpy as np
if not os.path.exists("g1.h5"):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4_000_000, 12), dtype=np.float32)
    x[[5, 77777, 3_999_999], [0, 3, 11]] = np.nan
    with h5py.File("g1.h5", "w") as f:
        f.create_dataset("x", data=x, chunks=True, compression="gzip", compression_opts=1)
PY
best() { # best wall seconds of REPS runs of "$@"
    local b="" t
    for _ in $(seq "$REPS"); do
        /usr/bin/time -f %e -o time.txt "$@" >/dev/null 2>&1 || true
        t=$(tail -1 time.txt)
        if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then b=$t; fi
    done
    echo "$b"
}
C=(clean --normalize zscore --no-fsync -q -o out.h5 --force)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| command | libhdf5 inflates | threads | h5py f[\"x\"][:] |"
echo "|---|---|---|---|"
h=$("$PY" - "$REPS" <<'PY'
import sys, time
import h5py
b = None
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    with h5py.File("g1.h5") as f:
        f["x"][:]
    t = time.perf_counter() - t
    b = t if b is None or t < b else b
print("%.2f" % b)
PY
)
echo "| scan -q | $(best env NANAUDIT_HDF5_SERIAL=1 "$N" scan -q g1.h5) s | $(best "$N" scan -q g1.h5) s | $h s |"
echo "| clean | $(best env NANAUDIT_HDF5_SERIAL=1 "$N" "${C[@]}" g1.h5) s | $(best "$N" "${C[@]}" g1.h5) s | |"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f out.h5 time.txt
