#!/usr/bin/env bash
# run_clean.sh - end-to-end throughput of `nanaudit clean` (issue 4,
# "Performance"): the 1 GiB F32 file of bench/gen_files.py (2^28
# elements, NaN/Inf and a 50.0 every 10,000 elements) cleaned with
#   --samples --zscore 3 --normalize minmax
# (non-finite drop, 3-sigma drop, min-max; read, transform, write to the
# page cache, re-read to verify), with and without fsync, against
#   (a) mmap_sum: a plain 2-thread OpenMP sum over a mapping of the file;
#   (b) numpy doing the same cleaning (bench/numpy_clean.py), with and
#       without fsync;
#   (c), (d) the SHA-256 of the input and a write(2) of its size, each on
#       one core: parts of every clean that do not spread over threads.
# A benchmark, never a test: it prints figures and asserts nothing.
#
#   bench/run_clean.sh [DIR]     files go to DIR (default /tmp/nanaudit-bench)
#
# Environment: NANAUDIT (default $BUILD/nanaudit), BUILD (default build/),
# NA_PYTHON (default .venv/bin/python, else python3: bench/lib.sh), THREADS (default 2), REPEAT (best
# of N, default 3).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-/tmp/nanaudit-bench}
BUILD=${BUILD:-$SRC/build}
NANAUDIT=${NANAUDIT:-$BUILD/nanaudit}
. "$SRC/bench/lib.sh"
PY=$(bench_python "$SRC")
NANAUDIT=$(bench_binary "$NANAUDIT")
THREADS=${THREADS:-2}
REPEAT=${REPEAT:-3}
mkdir -p "$DIR"

echo "# nanaudit clean benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores;" \
     "threads=$THREADS; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" "$SRC/bench/gen_files.py" "$DIR" >/dev/null
cc -O2 -fopenmp -o "$DIR/mmap_sum" "$SRC/bench/mmap_sum.c"
IN="$DIR/f32.safetensors"
BYTES=$(stat -c %s "$IN")
cat "$IN" >/dev/null # page cache

# best_of CMD...: "WALL CPU" of the run with the shortest wall time, CPU
# = user + system seconds (the machine may be shared: CPU seconds are
# the steadier figure).
best_of() {
    local best="" cpu="" w c
    for _ in $(seq "$REPEAT"); do
        rm -f "$DIR/clean.out"
        /usr/bin/time -f "%e %U %S" -o "$DIR/time.txt" "$@" >/dev/null 2>&1 || [ $? -eq 1 ]
        read -r w c < <(awk '{ print $1, $2 + $3 }' "$DIR/time.txt")
        if [ -z "$best" ] || [ "$(echo "$w < $best" | bc -l)" = 1 ]; then best=$w; cpu=$c; fi
    done
    echo "$best $cpu"
}
row() { # NAME "WALL CPU" BASE
    local w c
    read -r w c <<<"$2"
    awk -v n="$1" -v s="$w" -v cpu="$c" -v b="$BYTES" -v base="$3" \
        'BEGIN { c = cpu == "-" ? "      -" : sprintf("%7.2f", cpu)
                 printf "%-34s %7.3f s wall %s s CPU %6.2f GB/s %6.1f %% of mmap_sum\n",
                 n, s, c, b/s/1e9, 100*base/s }'
}

sum_s=$(for _ in $(seq "$REPEAT"); do "$DIR/mmap_sum" "$IN" "$THREADS"; done |
        sed -E 's/.*seconds=([0-9.]+).*/\1/' | sort -n | head -1)
export OMP_NUM_THREADS=$THREADS
CLEAN=("$NANAUDIT" clean --samples --zscore 3 --normalize minmax --max-drop-fraction 1
       --force "$IN" -o "$DIR/clean.out")
fs=$(best_of "${CLEAN[@]}")
nofs=$(best_of "${CLEAN[@]}" --no-fsync)
np_fs=$(best_of "$PY" "$SRC/bench/numpy_clean.py" "$IN" "$DIR/clean.out")
np_nofs=$(best_of "$PY" "$SRC/bench/numpy_clean.py" "$IN" "$DIR/clean.out" --no-fsync)
# Two parts of every clean that one core does alone, measured here: the
# input's SHA-256 (libcrypto, through Python's hashlib: the library
# nanaudit uses) and a write(2) of as many bytes to the page cache (dd,
# 1 MiB pieces from a buffer in cache). The first bounds clean's wall
# time from below however the rest is spread over the cores.
sha=$(best_of "$PY" -c 'import hashlib, sys
with open(sys.argv[1], "rb") as f:
    hashlib.file_digest(f, "sha256")' "$IN")
wr=$(best_of dd if=/dev/zero of="$DIR/clean.out" bs=1M count=$((BYTES >> 20)))
row "(a) mmap_sum ($THREADS threads)" "$sum_s -" "$sum_s"
row "(c) SHA-256 of the input (1 core)" "$sha" "$sum_s"
row "(d) write(2) of 1 GiB (1 core)" "$wr" "$sum_s"
row "nanaudit clean (fsync)" "$fs" "$sum_s"
row "nanaudit clean (--no-fsync)" "$nofs" "$sum_s"
row "(b) numpy (fsync)" "$np_fs" "$sum_s"
row "(b) numpy (no fsync)" "$np_nofs" "$sum_s"
"${CLEAN[@]}" --no-fsync --format json >"$DIR/clean.json" || true
"$PY" -c '
import json, sys
t = json.load(open(sys.argv[1]))["tensors"][0]
print("# passes over the data: %d + 1 verification; dropped %d samples" %
      (t["passes"], t["samples_dropped"]["total"]))' "$DIR/clean.json"
/usr/bin/time -f "# peak RSS of nanaudit clean: %M KiB" "${CLEAN[@]}" --no-fsync >/dev/null || true
echo "# 30 % of mmap_sum: $(awk -v s="$sum_s" 'BEGIN { printf "%.2f", s / 0.3 }') s wall;" \
     "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$DIR/clean.out" "$DIR/time.txt"
