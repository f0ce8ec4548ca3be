#!/bin/bash
# --device auto|cpu|cuda[:N] where no GPU can be used (CI): the usage
# errors (exit 2), `--device cuda` refused with one line and exit 4 before
# any input is opened, `auto` falling back to the CPU with a note in the
# JSON and text reports, and a binary that starts without libcuda.so
# (static cudart). On a machine with a GPU the same runs must use it.
# NA_HAVE_CUDA (from ctest) says whether this binary has the CUDA backend.
. "$(dirname "$0")/helpers.sh"
: "${NA_HAVE_CUDA:=0}"
GPU=0
[ -e /dev/nvidiactl ] && [ "$NA_HAVE_CUDA" = 1 ] && GPU=1

# The binary must not need the driver or a shared CUDA runtime to start.
if ldd "$NANAUDIT" | grep -E 'libcuda\.so|libcudart' >/dev/null; then
    fail "nanaudit links the CUDA driver or runtime dynamically: $(ldd "$NANAUDIT" | grep cuda)"
fi

make_st "$T/s.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[4],"values":[1,2,3,4]}]}'

# Usage errors: exit 2, decided before anything is opened.
for bad in bogus gpu cuda: cuda:x cuda:-1 cuda:12345 CUDA cpu:0; do
    expect_exit 2 "$NANAUDIT" scan --device "$bad" "$T/s.safetensors"
    expect_stderr_contains "nanaudit: --device: '$bad' is not auto, cpu, cuda or cuda:N"
done
expect_exit 2 "$NANAUDIT" scan "$T/s.safetensors" --device
expect_stderr_contains "--device needs an argument DEV"

# cpu, and auto on small data: the CPU, no note, CUDA never initialised.
for dev in cpu auto; do
    expect_exit 0 "$NANAUDIT" scan --device "$dev" --format json "$T/s.safetensors"
    cp "$T/stdout" "$T/$dev.json"
    expect_json "$T/$dev.json" 'j["device"]' '"cpu"'
    expect_json "$T/$dev.json" '"device_note" in j' 'false'
    expect_json "$T/$dev.json" 'j["files"][0]["tensors"][0]["mean"]' '2.5'
done
expect_exit 0 "$NANAUDIT" scan --device=cpu "$T/s.safetensors"
expect_stdout_lacks "note:"

# --device cuda[:N]: exit 4, one line, no report, when no GPU can be used.
if [ "$GPU" = 0 ]; then
    if [ "$NA_HAVE_CUDA" = 1 ]; then
        why="CUDA: no driver (libcuda.so.1 could not be loaded); no GPU can be used on this machine"
    else
        why="CUDA: this nanaudit was built without CUDA support (NANAUDIT_CUDA=OFF or no nvcc at build time)"
    fi
    for dev in cuda cuda:0 cuda:7; do
        n=${dev#cuda}; n=${n#:}; n=${n:-0}
        expect_exit 4 "$NANAUDIT" scan --device "$dev" --report "$T/r.json" "$T/s.safetensors"
        assert_eq "$(cat "$T/stderr")" "nanaudit: --device cuda:$n: $why" "stderr of --device $dev"
        assert_eq "$(wc -c < "$T/stdout")" 0 "stdout of --device $dev"
        [ -e "$T/r.json" ] && fail "--device $dev wrote a report"
    done
fi

# auto on a 32 MiB tensor: far below the size where a GPU repays CUDA's
# start-up (cli/device.c), so the CPU, CUDA never initialised, no note, on
# any machine. tests/cli/large_cuda_auto.sh has the runs large enough to
# try CUDA. 8 Mi F32 zeros + one NaN.
"$NA_PYTHON" - "$T/big.raw" <<'PY'
import sys, numpy as np
a = np.zeros(8 << 20, dtype="<f4"); a[5] = np.nan; a[-1] = 3.0
a.tofile(sys.argv[1])
PY
for th in 1 2; do
    expect_exit 1 "$NANAUDIT" scan --threads $th --format json --dtype F32 "$T/big.raw"
    B="$T/big.json"; cp "$T/stdout" "$B"
    expect_json "$B" '[j["files"][0]["tensors"][0][k] for k in ("nan", "finite", "zeros", "max")]' \
        '[1, 8388607, 8388606, 3.0]'
    expect_json "$B" 'j["files"][0]["tensors"][0]["nan_locations"]' '[[5]]'
    expect_json "$B" 'j["device"]' '"cpu"'
    expect_json "$B" '"device_note" in j' 'false'
done
if [ "$GPU" = 1 ]; then # the same file on the GPU when asked for
    expect_exit 1 "$NANAUDIT" scan --device cuda --format json --dtype F32 "$T/big.raw"
    cp "$T/stdout" "$T/g.json"
    expect_json "$T/g.json" 'j["device"]' '"cuda:0"'
    expect_json "$T/g.json" 'j["files"][0]["tensors"][0]["nan_locations"]' '[[5]]'
fi

# --help and the man page describe the flag.
expect_exit 0 "$NANAUDIT" scan --help
expect_stdout_contains "--device DEV"
grep -q 'device " DEV"' "$NA_SRC/man/nanaudit.1" || fail "man page lacks --device"
pass
