#!/usr/bin/env bash
# run_scan.sh - throughput of `nanaudit scan` against baselines, all in one
# run so that the ratios are comparable on a noisy machine (issue 2, §8).
# A benchmark, never a test: it prints figures and asserts nothing.
#
#   bench/run_scan.sh [DIR]        files go to DIR (default /tmp/nanaudit-bench)
#
# Environment: NANAUDIT (default $BUILD/nanaudit), BUILD (default build/),
# NA_PYTHON (default .venv/bin/python, else python3: bench/lib.sh), THREADS (default 2), REPEAT (best
# of N, default 3), BIG=1 to add the 4 GiB file under `ulimit -v 1048576`.
#
# Measures, for the 1 GiB F32 file and the 512 MiB BF16 / F16 files (2^28
# elements each):
#   nanaudit scan --zscore 0   pass 1 only
#   nanaudit scan              pass 1 + outlier pass (every block has an
#                              outlier: the outlier pass reads everything)
#   bench_scan                 na_scan_tensor alone on a mapping (no CLI)
#   (a) mmap_sum               plain OpenMP sum over a mapping
#   (b) numpy                  the same statistics on an np.memmap (F32 only
#                              unless NUMPY_ALL=1: it takes minutes)
#   (c) torch                  not measured yet (reported as skipped)
# and peak RSS of the CLI on two file sizes (/usr/bin/time -v).
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

echo "# nanaudit scan benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores," \
     "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); threads=$THREADS"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" "$SRC/bench/gen_files.py" "$DIR" ${BIG:+--big}
cc -O2 -fopenmp -o "$DIR/mmap_sum" "$SRC/bench/mmap_sum.c"
cc -O2 -fopenmp -I"$SRC/lib" -o "$DIR/bench_scan" "$SRC/bench/bench_scan.c" \
   "$BUILD/libnacore.a" -ljansson -lm

now() { date +%s.%N; }
# best_of CMD...: best wall time in seconds over REPEAT runs (output discarded)
best_of() {
    local best="" t0 t1 d
    for _ in $(seq "$REPEAT"); do
        t0=$(now)
        "$@" >/dev/null 2>&1 || [ $? -eq 1 ]   # exit 1 = findings, expected here
        t1=$(now)
        d=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$best" ] || [ "$(echo "$d < $best" | bc -l)" = 1 ]; then best=$d; fi
    done
    echo "$best"
}
# row NAME SECONDS BYTES ELEMENTS
row() {
    awk -v n="$1" -v s="$2" -v b="$3" -v e="$4" \
        'BEGIN { printf "%-34s %8.3f s %8.2f GB/s %8.3f Gelem/s\n", n, s, b/s/1e9, e/s/1e9 }'
}

declare -A SECS
ELEM=$((1 << 28))
for f in f32 bf16 f16; do
    file="$DIR/$f.safetensors"
    bytes=$(( $(stat -c %s "$file") ))
    cat "$file" >/dev/null   # warm the page cache
    eb=4; dt=F32
    [ "$f" = bf16 ] && { eb=2; dt=BF16; }
    [ "$f" = f16 ] && { eb=2; dt=F16; }
    data=$((ELEM * eb))
    echo
    echo "## $f.safetensors ($bytes bytes, $ELEM elements)"
    s=$(best_of "$DIR/mmap_sum" "$file" "$THREADS" "$eb"); SECS[$f.sum]=$s
    row "(a) mmap_sum" "$s" "$data" "$ELEM"
    s=$(best_of "$NANAUDIT" scan --threads "$THREADS" --zscore 0 --no-progress "$file")
    SECS[$f.p1]=$s; row "nanaudit scan --zscore 0 (pass 1)" "$s" "$data" "$ELEM"
    s=$(best_of "$NANAUDIT" scan --threads "$THREADS" --no-progress "$file")
    SECS[$f.full]=$s; row "nanaudit scan (pass 1 + 2)" "$s" "$data" "$ELEM"
    s=$(best_of "$DIR/bench_scan" "$file" "$dt" "$THREADS" 0 1)
    row "bench_scan, engine only, pass 1" "$s" "$data" "$ELEM"
    s=$(best_of "$DIR/bench_scan" "$file" "$dt" "$THREADS" 6 1)
    row "bench_scan, engine only, pass 1+2" "$s" "$data" "$ELEM"
    if [ "$f" = f32 ] || [ -n "${NUMPY_ALL:-}" ]; then
        out=$("$PY" "$SRC/bench/numpy_stats.py" "$file")
        s=$(echo "$out" | sed 's/.*seconds=\([0-9.]*\).*/\1/')
        SECS[$f.np]=$s; row "(b) numpy on np.memmap" "$s" "$data" "$ELEM"
        echo "   numpy: ${out#numpy }"
        echo "   nanaudit: $("$NANAUDIT" scan --threads "$THREADS" --format json "$file" |
            "$PY" -c 'import json,sys; t=json.load(sys.stdin)["files"][0]["tensors"][0]; print("mean=%r std=%r outliers=%d nan=%d nan_locs=%s" % (t["mean"], t["std"], t["outliers"]["count"], t["nan"], t["nan_locations"]))' || true)"
    fi
    if "$PY" -c 'import torch' 2>/dev/null; then
        echo "   (c) torch: installed, but this script does not measure it yet"
    else
        echo "   (c) torch: not installed, skipped"
    fi
    awk -v p1="${SECS[$f.p1]}" -v full="${SECS[$f.full]}" -v sum="${SECS[$f.sum]}" \
        -v np="${SECS[$f.np]:-0}" 'BEGIN {
        printf "   ratios: pass-1 scan / mmap_sum speed = %.0f %%   (target >= 80 %%)\n", 100*sum/p1;
        if (np > 0) printf "           full scan vs numpy = %.0fx   (target >= 80x)\n", np/full }'
done
echo
awk -v a="${SECS[f32.p1]}" -v b="${SECS[bf16.p1]}" -v c="${SECS[f16.p1]}" 'BEGIN {
    printf "elements/s relative to F32 (pass 1): BF16 %.2f, F16 %.2f   (target >= 1)\n", a/b, a/c }'

echo
echo "## peak memory (/usr/bin/time -v, maximum resident set size, KiB)"
for f in bf16 f32; do
    rss=$( { /usr/bin/time -v "$NANAUDIT" scan --threads "$THREADS" --no-progress \
            "$DIR/$f.safetensors" >/dev/null; } 2>&1 | awk -F: '/Maximum resident/ {print $2+0}' || true)
    echo "$f.safetensors ($(stat -c %s "$DIR/$f.safetensors") bytes): $rss KiB"
done
if [ -n "${BIG:-}" ]; then
    big="$DIR/f32big.safetensors"
    rc=0
    t0=$(now)
    ( ulimit -v 1048576; "$NANAUDIT" scan --threads "$THREADS" --no-progress "$big" >/dev/null ) || rc=$?
    t1=$(now)
    echo "f32big.safetensors ($(stat -c %s "$big") bytes) under ulimit -v 1048576:" \
         "exit $rc (1 = findings, expected), $(echo "$t1 - $t0" | bc -l | cut -c1-6) s"
    rss=$( { /usr/bin/time -v "$NANAUDIT" scan --threads "$THREADS" --no-progress \
            "$big" >/dev/null; } 2>&1 | awk -F: '/Maximum resident/ {print $2+0}' || true)
    echo "f32big.safetensors peak RSS: $rss KiB"
fi
