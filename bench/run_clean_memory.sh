#!/usr/bin/env bash
# run_clean_memory.sh - `nanaudit clean` under a memory limit (issue 4:
# "bounded memory, also for files larger than RAM"). clean keeps 2 bits
# per sample; from na_clean_opts_t.state_file_min bytes of them they live
# in a mapped unnamed file the kernel can page out. A 2 GiB F32 file of
# 2^29 samples (NaN every 1000, a 40.0 every 777: drops in every page of
# the 128 MiB of states) is cleaned (--zscore 3 --normalize minmax
# --dry-run) inside a memory cgroup of LIMIT MiB, once with the states in
# memory (the default below 256 MiB) and once in the file
# (NANAUDIT_CLEAN_STATE_FILE_MIN=0). Prints exit status (137: killed by
# the cgroup's OOM killer), the cgroup's peak and the wall time.
# A benchmark, never a test. Needs root and cgroup v1's memory controller
# (/sys/fs/cgroup/memory) or cgroup v2 (memory.max).
#
#   bench/run_clean_memory.sh [DIR]   files go to DIR (default /tmp/nanaudit-bench)
#
# Environment: NANAUDIT (default $BUILD/nanaudit), BUILD (default build/),
# NA_PYTHON (bench/lib.sh), LIMITS (MiB, default "4000 200 160 130").
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-/tmp/nanaudit-bench}
BUILD=${BUILD:-$SRC/build}
NANAUDIT=${NANAUDIT:-$BUILD/nanaudit}
. "$SRC/bench/lib.sh"
PY=$(bench_python "$SRC")
NANAUDIT=$(bench_binary "$NANAUDIT")
LIMITS=${LIMITS:-4000 200 160 130}
if [ -d /sys/fs/cgroup/memory ]; then
    CG=/sys/fs/cgroup/memory/nanaudit-bench.$$ LIM=memory.limit_in_bytes PEAK=memory.max_usage_in_bytes
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    CG=/sys/fs/cgroup/nanaudit-bench.$$ LIM=memory.max PEAK=memory.peak
else
    echo "bench: no memory cgroup here" >&2
    exit 2
fi
mkdir -p "$DIR"
IN=$DIR/states.raw
if [ ! -f "$IN" ] || [ "$(stat -c %s "$IN")" != 2147483648 ]; then
    "$PY" -c '
import numpy as np, sys
rng = np.random.default_rng(4)
with open(sys.argv[1], "wb") as f:
    for i in range(8):
        x = rng.standard_normal(1 << 26).astype("<f4")
        x[::1000] = np.nan
        x[5::777] = 40
        x.tofile(f)' "$IN"
fi
cat "$IN" > /dev/null # page cache, charged outside the cgroup
echo "# clean under a memory limit, $(date -u '+%Y-%m-%d %H:%M UTC'); load average:" \
     "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $IN: 2^29 F32 samples, 128 MiB of row states"
for L in $LIMITS; do
    for M in "" 0; do
        mkdir "$CG"
        echo $((L << 20)) > "$CG/$LIM"
        t0=$(date +%s.%N)
        rc=0
        bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' x "$CG" \
            env NANAUDIT_CLEAN_STATE_FILE_MIN="$M" "$NANAUDIT" clean --dtype F32 "$IN" \
            --zscore 3 --normalize minmax --dry-run -q > /dev/null 2>&1 || rc=$?
        t1=$(date +%s.%N)
        peak=$(( $(cat "$CG/$PEAK" 2>/dev/null || echo 0) >> 20 ))
        printf "limit %5d MiB  states in %-6s exit %3d  peak %5d MiB  %6.2f s\n" "$L" \
            "$([ -z "$M" ] && echo memory || echo file)" "$rc" "$peak" "$(echo "$t1 - $t0" | bc)"
        sleep 0.2
        rmdir "$CG"
    done
done
