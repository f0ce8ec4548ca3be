#!/usr/bin/env bash
# run.sh [BIN_DIR] - the GPU check of nanaudit, for a machine with one GPU
# (DESIGN.md "Testing layers"; issue 6). Under 5 minutes on one GPU.
#
#  1. nanaudit-gpucheck agree: CPU vs GPU backends on generated tensors of
#     every decodable dtype and layout (equal counts, min, max, locations;
#     mean/std within 1e-12 (|mean| + std); GPU runs bit-identical).
#  2. Every test file: `nanaudit scan --format json tests/data` with
#     --device cpu and --device cuda, default K and K = 1 (pass 2 on most
#     tensors), compared by compare.py; exit codes equal.
#  3. Generated 4 GiB F32 and 2 GiB BF16 safetensors files (NaN, Inf and
#     outliers at known places): the same comparison, the CLI's wall time
#     (CUDA start-up included), and nanaudit-gpucheck e2e's in-process GB/s.
#  4. Throughput: end-to-end GB/s against the pinned host-to-device
#     bandwidth measured here (target >= 80 %), kernel GB/s on
#     device-resident data against the device memory bandwidth (target
#     >= 70 %), as "figure value" lines to paste into bench/RESULTS.md.
#  5. clean (tests/gpu/clean.sh): the GPU write pass (--device cuda)
#     against the CPU's on generated files and option sets reaching every
#     step and output dtype: identical output bytes, reports equal but for
#     the "after" mean/std (1e-12 tolerance), same exit codes; clean GB/s
#     of step 3's F32 file on both devices.
# BIN_DIR holds nanaudit and nanaudit-gpucheck (default: $NA_GPU_BIN, else
# tests/gpu/bundle/bin, else build/); a ../lib beside it (bundle.sh) goes
# on LD_LIBRARY_PATH. Needs python3 with numpy for step 3 (PyTorch images
# have it). NA_GPU_BIG_ELEMS (default 2^30) sizes step 3's files, for
# trying the script on a small machine; NA_GPU_OUT=DIR keeps the details
# (agree.txt, the JSON reports). Exit 0 when everything agrees.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-${NA_GPU_BIN:-}}
if [ -z "$BIN" ]; then
    for d in tests/gpu/bundle/bin build; do
        if [ -x "$d/nanaudit-gpucheck" ]; then BIN=$d; break; fi
    done
fi
if [ -z "$BIN" ] || [ ! -x "$BIN/nanaudit-gpucheck" ]; then
    echo "run.sh: no nanaudit-gpucheck; build with CUDA or run tests/gpu/bundle.sh" >&2
    exit 2
fi
if [ -d "$BIN/../lib" ]; then
    LD_LIBRARY_PATH="$(cd "$BIN/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
fi
NA="$BIN/nanaudit"
CHK="$BIN/nanaudit-gpucheck"
PY=${NA_PYTHON:-python3}
TMP=$(mktemp -d "${NA_GPU_TMP:-${TMPDIR:-/tmp}}/nagpu.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILS=0
T0=$(date +%s)
step() { printf '\n==> %s (%ss)\n' "$*" "$(( $(date +%s) - T0 ))"; }
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
secs() { date +%s.%N; }

step "device"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

step "1. generated tensors, every dtype and layout (nanaudit-gpucheck agree)"
"$CHK" agree > "$TMP/agree.txt"; rc=$?
grep -E '^(FAIL|agree:)' "$TMP/agree.txt"
[ $rc = 0 ] || bad "nanaudit-gpucheck agree (details: FAIL lines above)"

# cmp_scan NAME ARGS...: scan with --device cpu and cuda, compare.
cmp_scan() {
    local name=$1; shift
    "$NA" scan --format json --device cpu --no-progress "$@" > "$TMP/$name.cpu.json" 2>/dev/null
    local rc1=$?
    "$NA" scan --format json --device cuda --no-progress "$@" > "$TMP/$name.gpu.json" 2>"$TMP/$name.err"
    local rc2=$?
    if [ $rc1 != $rc2 ]; then
        bad "$name: exit $rc1 on the CPU, $rc2 on the GPU: $(head -3 "$TMP/$name.err")"
    elif ! "$PY" tests/gpu/compare.py "$TMP/$name.cpu.json" "$TMP/$name.gpu.json"; then
        bad "$name: CPU and GPU reports differ"
    else
        echo "ok   $name (exit $rc1, $("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["summary"]["tensors"], "tensors on", j["device"])' "$TMP/$name.gpu.json"))"
    fi
}

step "2. every test file (tests/data), --device cpu vs cuda"
cmp_scan testdata tests/data
cmp_scan testdata_k1 --zscore 1 --max-locations 50 tests/data
for f in tests/data/raw/*; do
    [ -f "$f" ] || continue
    for dt in F32 F16 BF16 F64 I16 U8 F8_E4M3; do
        cmp_scan "raw_$(basename "$f")_$dt" --dtype "$dt" --zscore 2 "$f"
    done
done

step "3. generated 4 GiB F32 and 2 GiB BF16 files"
if ! "$PY" - "$TMP" "${NA_GPU_BIG_ELEMS:-1073741824}" <<'PY'
import json, struct, sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(6)
def write(path, dtype, n, chunk=1 << 26):
    hdr = json.dumps({"w": {"dtype": dtype, "shape": [n], "data_offsets": [0, n * (4 if dtype == "F32" else 2)]}}).encode()
    hdr += b" " * (-len(hdr) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr)
        for i in range(0, n, chunk):
            a = rng.standard_normal(min(chunk, n - i), dtype=np.float32)
            if i == 0:
                a[[3, 1000]] = np.nan; a[7] = np.inf; a[8] = -np.inf; a[100:110] = 1e3
            if i + chunk >= n:
                a[-1] = np.nan; a[-5] = 5e2
            if dtype == "BF16":
                a = (a.view(np.uint32) >> 16).astype(np.uint16)
            a.tofile(f)
n = int(sys.argv[2])  # elements: 2^30 -> 4 GiB of F32, 2 GiB of BF16
write(f"{out}/f32.safetensors", "F32", n)
write(f"{out}/bf16.safetensors", "BF16", n)
PY
then
    bad "could not generate the large files (python3 with numpy needed)"
else
    for f in f32 bf16; do
        cat "$TMP/$f.safetensors" > /dev/null # in the page cache, as the targets assume
        s0=$(secs); cmp_scan "$f" "$TMP/$f.safetensors"; s1=$(secs)
        "$NA" scan --device cuda --format json "$TMP/$f.safetensors" > /dev/null 2>&1
        s2=$(secs)
        "$NA" scan --device cpu --format json "$TMP/$f.safetensors" > /dev/null 2>&1
        s3=$(secs)
        size=$(stat -c %s "$TMP/$f.safetensors")
        "$PY" -c "import sys; s=$size/1e9; print('cli_${f}_cuda_gbs %.2f (process wall time, CUDA start-up included)\ncli_${f}_cpu_gbs %.2f' % (s/($s2-$s1), s/($s3-$s2)))"
        "$CHK" e2e "$TMP/$f.safetensors" | sed "s/^e2e_/e2e_${f}_/" | tee -a "$TMP/figures.txt"
    done
fi

step "4. bandwidth and kernels (nanaudit-gpucheck bench)"
"$CHK" bench | tee -a "$TMP/figures.txt" || bad "nanaudit-gpucheck bench"
"$PY" - "$TMP/figures.txt" <<'PY'
import sys
f = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 2:
        try: f[p[0]] = float(p[1])
        except ValueError: pass
h2d, dev = f.get("h2d_pinned_gbs"), f.get("d2d_copy_gbs")
for k in ("e2e_f32_gpu_gbs", "e2e_bf16_gpu_gbs"):
    if k in f and h2d:
        print(f"{k} / h2d_pinned = {f[k] / h2d:.0%} (target >= 80%)")
for k in sorted(f):
    if k.startswith("kernel_") and dev:
        th = f.get("mem_bw_theoretical_gbs")
        extra = f", {f[k] / th:.0%} of theoretical {th:.0f}" if th else ""
        print(f"{k} / d2d_copy = {f[k] / dev:.0%} (target >= 70%){extra}")
PY

step "5. clean: the GPU write pass against the CPU's (tests/gpu/clean.sh)"
NA_PYTHON="$PY" bash tests/gpu/clean.sh "$NA" "$TMP" | tee -a "$TMP/clean.txt"
[ "${PIPESTATUS[0]}" = 0 ] || bad "clean: CPU and GPU disagree (FAIL lines above)"
grep '^clean_' "$TMP/clean.txt" >> "$TMP/figures.txt"

if [ -n "${NA_GPU_OUT:-}" ]; then # keep the details (agree.txt, JSON reports)
    mkdir -p "$NA_GPU_OUT" && cp "$TMP"/*.txt "$TMP"/*.json "$NA_GPU_OUT"/ 2>/dev/null
fi
step "done: $FAILS failure(s)"
[ $FAILS = 0 ]
