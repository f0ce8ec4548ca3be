#!/usr/bin/env bash
# run_hdf5.sh - HDF5 benchmark of issue 3 ("Performance"). Prints a table
# to append to bench/RESULTS.md. Page cache warm, best of REPEAT runs.
#
#   (1) 1 GiB contiguous f4: nanaudit scan vs a plain 2-thread mmap-and-sum
#       of the same values (bench/mmap_sum.c on a safetensors copy) vs h5py
#       read + numpy statistics. Target: nanaudit >= 50 % of mmap_sum.
#   (2) 256 MiB f4 chunked with gzip level 1: nanaudit (1 and 2 threads)
#       vs h5py's read alone.
#   (3) crash-isolation overhead: NSMALL small files (one fork + libhdf5
#       open per file) vs h5py open+read+stats per file; and the large file
#       through the HDF5 reader vs the same bytes read as raw data
#       (--dtype F32 --offset of the dataset), i.e. the cost of the child
#       and H5Dread on top of the scan.
#   (4) tests/data/real/hdf5/hdfgroup-tbigdims.h5 (4 GiB declared, 2 chunks
#       of 1 KiB written): unallocated chunks counted, not read, vs reading
#       them (NANAUDIT_HDF5_READ_ALL=1, one run: it takes ~40 s).
# Env: NANAUDIT (default build/nanaudit), NA_PYTHON (default .venv/bin/python, else python3: bench/lib.sh),
# SIZE_MB (1024), GZ_MB (256), NSMALL (1000), REPEAT (3), DIR (a temp dir).
set -eu
SRC="$(cd "$(dirname "$0")/.." && pwd)"
NANAUDIT="${NANAUDIT:-$SRC/build/nanaudit}"
. "$SRC/bench/lib.sh"
PY=$(bench_python "$SRC")
NANAUDIT=$(bench_binary "$NANAUDIT")
SIZE_MB="${SIZE_MB:-1024}" GZ_MB="${GZ_MB:-256}" NSMALL="${NSMALL:-1000}" REPEAT="${REPEAT:-3}"
# a DIR of the caller's is made if missing and kept; a temporary one goes
if [ -n "${DIR:-}" ]; then
    mkdir -p "$DIR"
else
    DIR="$(mktemp -d "${TMPDIR:-/tmp}/na_bench_h5.XXXXXX")"
    trap 'rm -rf "$DIR"' EXIT
fi
cc -O2 -fopenmp -o "$DIR/mmap_sum" "$SRC/bench/mmap_sum.c"
"$PY" "$SRC/bench/hdf5_ref.py" gen "$DIR" "$SIZE_MB" "$GZ_MB" "$NSMALL"
cat "$DIR"/*.h5 "$DIR"/*.safetensors "$DIR"/small/* >/dev/null

best_of() { # best wall time of CMD over REPEAT runs
    local best="" t0 t1 d
    for _ in $(seq "$REPEAT"); do
        t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N)
        d=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$best" ] || [ "$(echo "$d < $best" | bc -l)" = 1 ]; then best=$d; fi
    done
    echo "$best"
}
best_py() { # best of the seconds the python script prints itself
    local best="" d
    for _ in $(seq "$REPEAT"); do
        d=$("$PY" "$SRC/bench/hdf5_ref.py" "$@")
        if [ -z "$best" ] || [ "$(echo "$d < $best" | bc -l)" = 1 ]; then best=$d; fi
    done
    echo "$best"
}
row() { # label seconds bytes
    printf "| %-46s | %8.3f s | %6.2f |\n" "$1" "$2" "$(echo "$3 / $2 / 1000000000" | bc -l)"
}
B1=$((SIZE_MB << 20)) B2=$((GZ_MB << 20))
OFF=$("$PY" -c "import h5py,sys; print(h5py.File(sys.argv[1])['x'].id.get_offset())" "$DIR/contig.h5")
echo "| file / tool | time | GB/s |"
echo "|---|---|---|"
s_sum=$(best_of "$DIR/mmap_sum" "$DIR/contig.safetensors" 2 4); row "f4 ${SIZE_MB} MiB contiguous: mmap_sum (2 threads)" "$s_sum" $B1
s_na=$(best_of "$NANAUDIT" scan --threads 2 --no-progress "$DIR/contig.h5"); row "nanaudit scan --threads 2 (HDF5 reader)" "$s_na" $B1
s_raw=$(best_of "$NANAUDIT" scan --threads 2 --no-progress --dtype F32 --offset "$OFF" --length $B1 "$DIR/contig.h5"); row "nanaudit scan, same bytes as raw (no child)" "$s_raw" $B1
s_py=$(best_py stats "$DIR/contig.h5" x); row "h5py read + numpy statistics" "$s_py" $B1
s_g1=$(best_of "$NANAUDIT" scan --threads 1 --no-progress "$DIR/gzip1.h5"); row "f4 ${GZ_MB} MiB gzip-1 chunked: nanaudit --threads 1" "$s_g1" $B2
s_g2=$(best_of "$NANAUDIT" scan --threads 2 --no-progress "$DIR/gzip1.h5"); row "nanaudit --threads 2" "$s_g2" $B2
s_gp=$(best_py read "$DIR/gzip1.h5" y); row "h5py read alone" "$s_gp" $B2
s_sm=$(best_of "$NANAUDIT" scan --threads 2 --no-progress -q "$DIR/small"); row "${NSMALL} small files: nanaudit scan DIR" "$s_sm" $((NSMALL * 1024))
s_smp=$(best_py small "$DIR/small"); row "h5py open + read + stats per file" "$s_smp" $((NSMALL * 1024))
BIG="$SRC/tests/data/real/hdf5/hdfgroup-tbigdims.h5"
s_bf=$(best_of "$NANAUDIT" scan --threads 2 --no-progress "$BIG"); row "tbigdims 4 GiB, 2 chunks: nanaudit (fill runs)" "$s_bf" 4294967306
s_br=$(REPEAT=1 best_of env NANAUDIT_HDF5_READ_ALL=1 "$NANAUDIT" scan --threads 2 --no-progress "$BIG"); row "tbigdims, every chunk read (READ_ALL, 1 run)" "$s_br" 4294967306
echo
echo "ratios: nanaudit / mmap_sum speed = $(echo "100 * $s_sum / $s_na" | bc -l | cut -c1-5) % (target >= 50 %);" \
     "HDF5 reader vs raw read of the same bytes: $(echo "100 * ($s_na - $s_raw) / $s_raw" | bc -l | cut -c1-5) % slower;" \
     "gzip: nanaudit 2 threads vs h5py read alone = $(echo "$s_gp / $s_g2" | bc -l | cut -c1-4) x (target >= 2 x);" \
     "small files: $(echo "1000 * $s_sm / $NSMALL" | bc -l | cut -c1-5) ms per file (h5py $(echo "1000 * $s_smp / $NSMALL" | bc -l | cut -c1-5) ms)"
