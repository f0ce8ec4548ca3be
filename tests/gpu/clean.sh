#!/usr/bin/env bash
# clean.sh NANAUDIT [TMP_DIR] - step 5 of tests/gpu/run.sh: clean's GPU
# write pass (issue 6) against the CPU's. Generated raw and safetensors
# files (F32, BF16, F16, F64, I16, U8; big endian; rows of 1, 2, 3, 7 and
# 1000 values; several 16 MiB GPU windows each), with NaN (some with
# payloads, kept bit for bit with --nonfinite keep), Inf and outliers,
# each cleaned with option sets that reach every step and output dtype,
# once with --device cpu and once with --device cuda. The output bytes
# must be identical (cmp; for safetensors the data after the header,
# which stores the command line), the reports equal by compare.py (the
# "after" mean/std within 1e-12 (|mean| + std): the GPU sums blocks in
# another order), the exit codes equal, and the GPU run's "device" must be
# cuda:0. With TMP_DIR/f32.safetensors (run.sh's 4 GiB F32 file), the
# clean GB/s of both devices ("clean_f32_*_gbs" lines).
# NA_GPU_CLEAN_DEVICE=cpu compares the CPU with itself and
# NA_GPU_CLEAN_SHIFT=N divides the files' rows by 2^N: a check of this
# script on a machine without a GPU. Exit status 0 when all agree, 1
# otherwise. Needs python3 with numpy ($NA_PYTHON).
set -uo pipefail
cd "$(dirname "$0")/../.."
NA=${1:?usage: clean.sh NANAUDIT [TMP_DIR]}
NA="$(cd "$(dirname "$NA")" && pwd)/$(basename "$NA")" # the runs cd to their folders
TMP=$(mktemp -d "${2:-${TMPDIR:-/tmp}}/naclean.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
BIG=${2:-}
PY=${NA_PYTHON:-python3}
GDEV=${NA_GPU_CLEAN_DEVICE:-cuda}
WANT=$([ "$GDEV" = cpu ] && echo cpu || echo cuda:0)
FAILS=0
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
secs() { date +%s.%N; }
SH=${NA_GPU_CLEAN_SHIFT:-0}
R1=$(( (24 << 20) >> SH )) R7=$(( (3 << 20) >> SH )) RB=$(( (12 << 20) >> SH ))
R3=$(( (4 << 20) >> SH )) RI=$(( (8 << 20) >> SH ))
CL="$TMP/clean"
mkdir -p "$CL"
if ! "$PY" - "$CL" "$R1" "$R7" "$RB" "$R3" "$RI" <<'PY'
import json, struct, sys
import numpy as np
d = sys.argv[1]
r1, r7, rb, r3, ri = map(int, sys.argv[2:])
rng = np.random.default_rng(44)
def dirty(a):
    f = a.reshape(-1)
    n = f.size
    i = rng.choice(n, 64, replace=False)
    f[i[:20]] = np.nan; f[i[20:26]] = np.inf; f[i[26:30]] = -np.inf
    f[i[30:]] = rng.choice([-1, 1], 34) * rng.uniform(8, 40, 34)
    return a
def payloads(a, bits, dt):  # NaNs with payloads (and signalling ones): kept bit for bit
    a.reshape(-1).view(dt)[rng.choice(a.size, len(bits), replace=False)] = bits
    return a
f32 = payloads(dirty(rng.standard_normal(r1).astype(np.float32)),
               [0x7FC12345, 0xFFC00001, 0x7F812345, 0xFF800001], np.uint32)
f32.tofile(f"{d}/f32.raw")
f32.astype(">f4").tofile(f"{d}/f32be.raw")
payloads(dirty(rng.standard_normal((r7, 7)).astype(np.float32)),
         [0x7FC12345, 0xFF812345], np.uint32).tofile(f"{d}/f32w7.raw")
b = dirty(rng.standard_normal(rb).astype(np.float32))
(b.view(np.uint32) >> 16).astype(np.uint16).tofile(f"{d}/bf16.raw")
dirty(rng.standard_normal((r3, 3)).astype(np.float16)).tofile(f"{d}/f16w3.raw")
payloads(dirty(rng.standard_normal((r3, 2)) * 1e3 + 5),
         [0x7FF8000000012345, 0xFFF0000000000001], np.uint64).tofile(f"{d}/f64w2.raw")
rng.integers(-3000, 3000, ri).astype(np.int16).tofile(f"{d}/i16.raw")
rng.integers(0, 256, ri).astype(np.uint8).tofile(f"{d}/u8.raw")
# rows of 1000 values: GPU blocks of 32 rows (the widest-row geometry)
dirty(rng.standard_normal((max(r7 >> 8, 64), 1000)).astype(np.float32)).tofile(f"{d}/f32w1000.raw")
# safetensors weights: F32 and BF16 tensors (no samples: one statistic each)
ts = {"a": f32[: r1 // 5], "b": b[: rb // 4]}
hdr, off = {}, 0
for k, v in ts.items():
    n = v.size * (4 if k == "a" else 2)
    hdr[k] = {"dtype": "F32" if k == "a" else "BF16", "shape": [v.size], "data_offsets": [off, off + n]}
    off += n
h = json.dumps(hdr).encode(); h += b" " * (-len(h) % 8)
with open(f"{d}/w.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    ts["a"].tofile(f)
    (ts["b"].view(np.uint32) >> 16).astype(np.uint16).tofile(f)
PY
then
    bad "could not generate the clean inputs (python3 with numpy needed)"
else
    data() { # the bytes cleaned: a safetensors header holds the command line
        case $1 in
        *.safetensors) tail -c +$((9 + $(od -An -tu8 -N8 "$1"))) "$1" ;;
        *) cat "$1" ;;
        esac
    }
    cmp_clean() { # cmp_clean NAME INPUT ARGS...
        local name=$1 src=$2; shift 2
        local out="out.${src##*.}" rc=() dev
        for dev in cpu gpu; do
            rm -rf "$CL/$dev" && mkdir -p "$CL/$dev"
            local use=$dev
            [ "$dev" = gpu ] && use=$GDEV
            (cd "$CL/$dev" && "$NA" clean --device "$use" --no-fsync --format json "$@" \
                "$CL/$src" -o "$out" > r.json 2> err.txt)
            rc+=($?)
        done
        if [ "${rc[0]}" != "${rc[1]}" ]; then
            bad "clean $name: exit ${rc[0]} on the CPU, ${rc[1]} on the GPU: $(head -3 "$CL/gpu/err.txt")"
        elif [ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"])' "$CL/gpu/r.json")" != "$WANT" ]; then
            bad "clean $name: the GPU run did not run on $WANT: $(head -c 300 "$CL/gpu/r.json")"
        elif [ -e "$CL/cpu/$out" ] && ! cmp -s <(data "$CL/cpu/$out") <(data "$CL/gpu/$out"); then
            bad "clean $name: CPU and GPU wrote different bytes ($(cmp <(data "$CL/cpu/$out") <(data "$CL/gpu/$out") 2>&1 | head -1))"
        elif ! "$PY" tests/gpu/compare.py "$CL/cpu/r.json" "$CL/gpu/r.json"; then
            bad "clean $name: CPU and GPU reports differ"
        else
            echo "ok   clean $name (exit ${rc[0]})"
        fi
    }
    SETS=("--nonfinite zero --zscore 3 --outliers clip"
          "--nonfinite mean --zscore 2.5 --outliers nan --normalize minmax"
          "--nonfinite drop --zscore 3 --normalize zscore"
          "--nonfinite value=0.5 --mad 3.5 --outliers mean --normalize minmax --feature-range -1:1"
          "--nonfinite keep --zscore 4 --outliers clip --out-dtype F16"
          "--nonfinite zero --zscore 3 --outliers clip --normalize zscore --out-dtype I16")
    for f in "f32.raw F32 $R1" "f32be.raw F32 $R1 --endian big" "f32w7.raw F32 ${R7}x7" \
             "bf16.raw BF16 $RB" "f16w3.raw F16 ${R3}x3" "f64w2.raw F64 ${R3}x2"; do
        # shellcheck disable=SC2086
        set -- $f
        src=$1 dt=$2 shape=$3
        shift 3
        for k in "${!SETS[@]}"; do
            # shellcheck disable=SC2086
            cmp_clean "${src%.raw}_$k" "$src" --dtype "$dt" --shape "$shape" "$@" ${SETS[$k]}
        done
    done
    cmp_clean f32w7_global "f32w7.raw" --dtype F32 --shape "${R7}x7" --global --nonfinite drop \
        --zscore 3 --normalize minmax
    cmp_clean f32_weights "f32.raw" --dtype F32 --no-samples --nonfinite zero --zscore 3 \
        --outliers clip --out-dtype BF16
    cmp_clean i16_norm "i16.raw" --dtype I16 --normalize minmax
    cmp_clean i16_clip "i16.raw" --dtype I16 --zscore 1.5 --outliers clip
    cmp_clean u8_clip "u8.raw" --dtype U8 --zscore 1.5 --outliers clip
    RW=$(( R7 >> 8 > 64 ? R7 >> 8 : 64 ))
    cmp_clean f32w1000 "f32w1000.raw" --dtype F32 --shape "${RW}x1000" --nonfinite drop \
        --zscore 3 --outliers clip --normalize minmax --max-drop-fraction 0.5
    # NaNs kept as they are (their payloads; F32 and F64 out, width 1 and more)
    cmp_clean f32_keep "f32.raw" --dtype F32 --nonfinite keep --zscore 3 --outliers clip \
        --normalize zscore
    cmp_clean f32be_keep "f32be.raw" --dtype F32 --endian big --nonfinite keep --zscore 3 \
        --outliers clip # big endian: NaNs decoded as the canonical one
    cmp_clean f32w7_keep "f32w7.raw" --dtype F32 --shape "${R7}x7" --nonfinite keep --zscore 3 \
        --outliers clip --normalize minmax
    cmp_clean f64w2_keep "f64w2.raw" --dtype F64 --shape "${R3}x2" --nonfinite keep --mad 3.5 \
        --outliers clip
    cmp_clean safetensors "w.safetensors" --nonfinite zero --zscore 3 --outliers clip --normalize zscore
    # throughput: the 4 GiB F32 file of step 3 (when it was made), end to end
    if [ -n "$BIG" ] && [ -f "$BIG/f32.safetensors" ]; then
        size=$(stat -c %s "$BIG/f32.safetensors")
        for dev in cpu "$GDEV"; do
            s0=$(secs)
            # --force: with NA_GPU_CLEAN_DEVICE=cpu both runs write clean_cpu.*
            "$NA" clean --device "$dev" --no-fsync --force --nonfinite zero --zscore 3 --outliers clip \
                --normalize minmax "$BIG/f32.safetensors" -o "$TMP/clean_$dev.safetensors" \
                > /dev/null 2>&1 || bad "clean of the 4 GiB F32 file on $dev"
            s1=$(secs)
            "$PY" -c "print('clean_f32_${dev}_gbs %.2f (end to end: fit on the CPU, write pass on $dev, write, verify)' % ($size / 1e9 / ($s1 - $s0)))"
        done
        cmp -s <(data "$TMP/clean_cpu.safetensors") <(data "$TMP/clean_$GDEV.safetensors") ||
            bad "clean of the 4 GiB F32 file: CPU and GPU wrote different bytes"
        rm -f "$TMP"/clean_*.safetensors
    fi
fi
echo "clean: $FAILS failure(s)"
[ "$FAILS" = 0 ]
