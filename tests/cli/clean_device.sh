#!/bin/bash
# clean --device auto|cpu|cuda[:N] where no GPU can be used (CI; issue 6):
# bad values are exit 2 before anything is opened; --device cpu and auto
# write the same bytes and the same report as the default, with "device"
# "cpu" and no note; --device cuda is exit 4 with one line, before the
# input is opened or any file (output, temporary file, report) is
# written, also under the fake driver's "older than the runtime". The
# GPU's own agreement with the CPU is tests/gpu/run.sh's (a GPU machine).
. "$(dirname "$0")/helpers.sh"
: "${NA_HAVE_CUDA:=0}"
GPU=0 # a machine with a usable GPU runs --device cuda (tests/gpu/clean.sh compares)
[ -e /dev/nvidiactl ] && [ "$NA_HAVE_CUDA" = 1 ] && GPU=1
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
rng = np.random.default_rng(4)
w = rng.standard_normal(40000).astype(np.float32)
w[[3, 17]] = np.nan; w[5] = np.inf; w[100] = 40.0; w[101] = -35.0
save_file({"w": w, "b": rng.standard_normal((300, 7)).astype(np.float32)}, "w.safetensors")
x = rng.standard_normal((5000, 3))
x[7, 1] = np.nan; x[9, 0] = 1e3
x.tofile("x.raw")
z = np.where(np.isfinite(w), w, 0).astype(np.float64)  # --nonfinite zero, then 3 sigma
print(int((np.abs(z - z.mean()) > 3 * z.std()).sum()), file=open("clipped", "w"))
PY

# Bad values: exit 2, the usage line, no file.
for bad in tpu cuda:x cuda: gpu; do
    expect_exit 2 "$NANAUDIT" clean --device "$bad" --nonfinite zero w.safetensors -o bad.safetensors
    assert_eq "$(head -1 "$T/stderr")" \
        "nanaudit: --device: '$bad' is not auto, cpu, cuda or cuda:N (try 'nanaudit clean --help')" \
        "stderr of --device $bad"
    [ -e bad.safetensors ] && fail "--device $bad wrote an output"
done

# cpu and auto: the default's bytes and report (device "cpu", no note).
run() { # run DIR ARGS...: clean into DIR/out.* with a JSON report
    local d=$1; shift
    mkdir -p "$d"
    expect_exit "$WANT" "$NANAUDIT" clean "$@" -o "$d/$OUT" --report "$d/r.json"
    "$NA_PYTHON" -c 'import json,sys; j=json.load(open(sys.argv[1])); j.pop("output"); json.dump(j, open(sys.argv[1] + ".cmp", "w"), sort_keys=True)' "$d/r.json"
}
data() { # the data bytes: a safetensors header holds the command line
    case $1 in
    *.safetensors) tail -c +$((9 + $(od -An -tu8 -N8 "$1"))) "$1" ;;
    *) cat "$1" ;;
    esac
}
check_same() { # the three runs wrote the same bytes and report
    for d in cpu auto; do
        cmp <(data "default/$OUT") <(data "$d/$OUT") ||
            fail "--device $d wrote other bytes than the default ($OUT)"
        cmp default/r.json.cmp "$d/r.json.cmp" || fail "--device $d: another report ($OUT)"
        expect_json "$d/r.json" 'j["device"]' '"cpu"'
        expect_json "$d/r.json" '"device_note" in j' 'false'
    done
}
# weights (width 1 and a 2-D tensor as one feature): non-finite, clip, minmax
WANT=0 OUT=w.safetensors
for d in default cpu auto; do
    dev=(--device "$d"); [ "$d" = default ] && dev=()
    run "$d" "${dev[@]}" --nonfinite zero --zscore 3 --outliers clip --normalize minmax w.safetensors
done
check_same
expect_json cpu/r.json '[j["tensors"][1][k] for k in ("name", "nonfinite_replaced", "clipped")]' \
    "[\"w\", 3, $(cat clipped)]"
# samples (per feature, a row dropped for NaN, one for its outlier), F16 out
OUT=x.raw
for d in default cpu auto; do
    dev=(--device "$d"); [ "$d" = default ] && dev=()
    run "$d" "${dev[@]}" --dtype F64 --shape 5000x3 --zscore 4 --normalize zscore \
        --out-dtype F16 x.raw
done
check_same
expect_json cpu/r.json '[j["tensors"][0]["samples_dropped"][k] for k in ("nonfinite", "outliers")]' \
    '[1, 1]'
expect_exit 0 "$NANAUDIT" clean --device cpu --dtype F64 --shape 5000x3 --dry-run x.raw
expect_stdout_lacks "note:"

# --device cuda[:N]: one line, exit 4, nothing written (no output, no
# temporary file, no report), before the input is even opened.
if [ "$GPU" = 1 ]; then
    :
elif [ "$NA_HAVE_CUDA" = 1 ]; then
    why="CUDA: no driver (libcuda.so.1 could not be loaded); no GPU can be used on this machine"
else
    why="CUDA: this nanaudit was built without CUDA support (NANAUDIT_CUDA=OFF or no nvcc at build time)"
fi
mkdir -p g
for dev in cuda cuda:0 cuda:3; do
    [ "$GPU" = 1 ] && break
    n=${dev#cuda}; n=${n#:}; n=${n:-0}
    expect_exit 4 "$NANAUDIT" clean --device "$dev" --nonfinite zero w.safetensors \
        -o g/out.safetensors --report g/r.json
    assert_eq "$(cat "$T/stderr")" "nanaudit: --device cuda:$n: $why" "stderr of --device $dev"
    assert_eq "$(wc -c < "$T/stdout")" 0 "stdout of --device $dev"
    assert_eq "$(ls -A g)" "" "files left by --device $dev"
done
if [ "$GPU" = 0 ]; then
    expect_exit 4 "$NANAUDIT" clean --device cuda --nonfinite zero missing.safetensors -o g/o.st
    expect_stderr_contains "nanaudit: --device cuda:0: CUDA:"
    expect_stderr_lacks "missing.safetensors"
    # ... and before the output directory's probe file (sysfs refuses
    # files even to root): the device's line, not "cannot create a
    # temporary file" (the probe came first)
    expect_exit 4 "$NANAUDIT" clean --device cuda --nonfinite zero w.safetensors -o /sys/o.st
    assert_eq "$(cat "$T/stderr")" "nanaudit: --device cuda:0: $why" "stderr with -o /sys/o.st"
fi
if [ -n "${NA_FAKE_CUDA_DIR:-}" ] && [ "$GPU" = 0 ]; then # a driver that cannot run this build
    expect_exit 4 env LD_LIBRARY_PATH="$NA_FAKE_CUDA_DIR" NA_FAKE_CUDA_VERSION=11000 \
        "$NANAUDIT" clean --device cuda --nonfinite zero w.safetensors -o g/out.safetensors
    expect_stderr_contains "nanaudit: --device cuda:0: CUDA: driver older than the runtime (driver supports CUDA 11.0"
    assert_eq "$(ls -A g)" "" "files left under the fake driver"
    # auto with that driver: the run is far too small to try CUDA at all
    expect_exit 0 env LD_LIBRARY_PATH="$NA_FAKE_CUDA_DIR" NA_FAKE_CUDA_VERSION=11000 \
        "$NANAUDIT" clean --nonfinite zero --format json w.safetensors -o g/out.safetensors
    expect_json "$T/stdout" '[j["device"], "device_note" in j]' '["cpu", false]'
fi

# --help and the man page describe it for clean.
expect_exit 0 "$NANAUDIT" clean --help
expect_stdout_contains "--device DEV"
expect_stdout_contains "where the write pass runs"
grep -q 'Where the write pass runs' "$NA_SRC/man/nanaudit.1" || fail "man page lacks clean --device"
pass
