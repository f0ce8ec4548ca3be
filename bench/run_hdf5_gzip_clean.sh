#!/bin/bash
# bench/run_hdf5_gzip_clean.sh - `nanaudit clean` of gzip-compressed HDF5
# (issue 4; formats/hdf5_wdeflate.c): a (4e6, 12) F32 standard normal
# dataset with 3 NaN in h5py's automatic chunks ((15625, 1)), gzip level
# 1, level 4, and shuffle + level 4. Prints, best of REPS wall seconds
# (/usr/bin/time): scan -q; clean --normalize zscore --no-fsync -q with
# every chunk deflated by libhdf5 (NANAUDIT_HDF5_SERIAL_WRITE=1) and
# with the writer's threads (the default); optionally a second binary
# (BEFORE=path, e.g. a build of an older commit); and h5py writing the
# cleaned values with the same chunks and filters (create_dataset and
# close timed, not the read). Figures, never assertions.
#   bench/run_hdf5_gzip_clean.sh [NANAUDIT] [DIR] [REPS]   (NANAUDIT: build/nanaudit)
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
rng = np.random.default_rng(1)
x = None
for name, kw in [("g1", dict(compression="gzip", compression_opts=1)),
                 ("g4", dict(compression="gzip", compression_opts=4)),
                 ("s4", dict(compression="gzip", compression_opts=4, shuffle=True))]:
    if os.path.exists(name + ".h5"):
        continue
    if x is None:
        x = rng.standard_normal((4_000_000, 12), dtype=np.float32)
        x[[5, 77777, 3_999_999], [0, 3, 11]] = np.nan
    with h5py.File(name + ".h5", "w") as f:
        f.create_dataset("x", data=x, chunks=True, **kw)
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
printf '| file | scan -q | clean, libhdf5 deflates | clean, threads |%s h5py write |\n' \
    "${BEFORE:+ clean, BEFORE |}"
for F in g1 g4 s4; do
    s=$(best "$N" scan -q "$F.h5")
    l=$(best env NANAUDIT_HDF5_SERIAL_WRITE=1 "$N" "${C[@]}" "$F.h5")
    t=$(best "$N" "${C[@]}" "$F.h5")
    b=""
    [ -n "${BEFORE:-}" ] && b=" $(best "$BEFORE" "${C[@]}" "$F.h5") |"
    "$N" "${C[@]}" "$F.h5" >/dev/null 2>&1 || true
    h=$("$PY" - "$REPS" <<'PY'
import sys, time
import h5py
with h5py.File("out.h5") as f:
    d = f["x"]
    x, kw = d[()], dict(chunks=d.chunks, compression=d.compression,
                        compression_opts=d.compression_opts, shuffle=d.shuffle)
ts = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    with h5py.File("h5py_out.h5", "w") as f:
        f.create_dataset("x", data=x, **kw)
    ts.append(time.perf_counter() - t)
print(f"{min(ts):.2f}")
PY
)
    echo "| $F | $s | $l | $t |$b $h |"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
