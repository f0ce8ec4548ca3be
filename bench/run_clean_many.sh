#!/usr/bin/env bash
# run_clean_many.sh - `nanaudit clean` of a file of many tiny tensors
# (fresh-user round 25b: 100000 F32 tensors of 4 elements took 122 s on
# the default 2 threads of a loaded machine, 6.3 s on one: every pass
# opened an OpenMP parallel region per tensor, and the idle threads spun
# between them). A safetensors file of N (default 20000) tensors of 4
# F32 elements, cleaned with --nonfinite zero --no-fsync -q, with
# --threads 1 and 2, on an idle machine and beside one busy loop (a
# loaded CI runner). Also numpy + safetensors doing the same (load, replace
# NaN by 0, save). A benchmark: it prints figures, asserts nothing.
#
#   bench/run_clean_many.sh [DIR]   files go to DIR (default /tmp/nanaudit-bench)
#
# Environment: NANAUDIT (default build/nanaudit), NA_PYTHON (default
# .venv/bin/python), N (tensors, default 20000), REPEAT (best of, default 3).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-/tmp/nanaudit-bench}
NANAUDIT=${NANAUDIT:-$SRC/build/nanaudit}
. "$SRC/bench/lib.sh"
PY=$(bench_python "$SRC")
NANAUDIT=$(bench_binary "$NANAUDIT")
N=${N:-20000}
REPEAT=${REPEAT:-3}
mkdir -p "$DIR"
F="$DIR/many_$N.safetensors"
[ -e "$F" ] || "$PY" -c "
import sys, numpy as np
from safetensors.numpy import save_file
a = np.arange(4, dtype='f4'); a[3] = np.nan
save_file({'t%06d' % i: a for i in range($N)}, sys.argv[1])" "$F"

best() { # label command...: the best wall time of REPEAT runs
    local label=$1 b='' t
    shift
    for _ in $(seq "$REPEAT"); do
        /usr/bin/time -f '%e' -o "$DIR/many_time" "$@" >/dev/null 2>&1 || true
        t=$(tail -1 "$DIR/many_time")
        if [ -z "$b" ] || awk "BEGIN {exit !($t < $b)}"; then b=$t; fi
    done
    printf '%-44s %8.2f s\n' "$label" "$b"
}

echo "# clean of $N tensors of 4 F32 elements, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg)"
for load in idle busy; do
    Y=''
    if [ "$load" = busy ]; then
        sh -c 'while :; do :; done' &
        Y=$!
    fi
    for th in 1 2; do
        best "nanaudit clean, --threads $th, $load" "$NANAUDIT" clean --threads "$th" --no-fsync \
            --nonfinite zero -q --force -o "$DIR/many_out.safetensors" "$F"
    done
    best "numpy + safetensors, $load" "$PY" -c "
import sys, numpy as np
from safetensors.numpy import load_file, save_file
d = load_file(sys.argv[1])
save_file({k: np.nan_to_num(v, nan=0.0) for k, v in d.items()}, sys.argv[2])" "$F" "$DIR/many_np.safetensors"
    if [ -n "$Y" ]; then kill "$Y"; wait "$Y" 2>/dev/null || true; fi
done
rm -f "$DIR/many_out.safetensors" "$DIR/many_np.safetensors" "$DIR/many_time"
