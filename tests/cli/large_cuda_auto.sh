#!/bin/bash
# CUDA build, no usable GPU: each way the driver can be unusable gives its
# own one-line reason (issue 6: no driver / no device / driver older than
# the runtime; exit 4 for --device cuda, a note and the CPU for auto), and
# `auto` tries CUDA only when the run is large enough to repay its
# start-up (cli/device.c: from ~1.13 GB with 1 thread, ~2.39 GB with 2).
# The driver is tests/gpu/fake_libcuda.c on LD_LIBRARY_PATH (built by
# tests/CMakeLists.txt into $NA_FAKE_CUDA_DIR for CUDA builds only).
. "$(dirname "$0")/helpers.sh"
if [ -z "${NA_FAKE_CUDA_DIR:-}" ]; then
    echo "SKIP: a build without CUDA has no driver to fake"
    pass
    exit 0
fi
[ -e "$NA_FAKE_CUDA_DIR/libcuda.so.1" ] || fail "the fake driver was not built: $NA_FAKE_CUDA_DIR"
fake() { env LD_LIBRARY_PATH="$NA_FAKE_CUDA_DIR" "$@"; }

make_st "$T/s.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[4],"values":[1,2,3,4]}]}'
BUILT=$(fake NA_FAKE_CUDA_VERSION=11000 "$NANAUDIT" scan --device cuda "$T/s.safetensors" 2>&1 |
        sed -n 's/.*nanaudit was built with \([0-9.]*\)).*/\1/p')
[ -n "$BUILT" ] || fail "no runtime version in the old-driver message"
NEW=$(( ${BUILT%.*} * 1000 + ${BUILT#*.} * 10 ))

# --device cuda: exit 4, one line naming the reason, nothing on stdout.
check_cuda() { # expected-line env-assignments...
    local want="$1"; shift
    expect_exit 4 fake "$@" "$NANAUDIT" scan --device cuda:0 --format json "$T/s.safetensors"
    assert_eq "$(cat "$T/stderr")" "nanaudit: --device cuda:0: $want" "stderr with $*"
    assert_eq "$(wc -c < "$T/stdout")" 0 "stdout with $*"
}
check_cuda "CUDA: driver older than the runtime (driver supports CUDA 11.0, nanaudit was built with $BUILT)" \
    NA_FAKE_CUDA_VERSION=11000
check_cuda "CUDA: driver older than the runtime (driver supports CUDA 10.2, nanaudit was built with $BUILT)" \
    NA_FAKE_CUDA_VERSION=10020
check_cuda "CUDA: no CUDA device" NA_FAKE_CUDA_VERSION=$NEW NA_FAKE_CUDA_INIT=100
check_cuda "CUDA: unknown error" NA_FAKE_CUDA_VERSION=$NEW NA_FAKE_CUDA_INIT=999

# auto: a 1.25 GiB F32 raw file (sparse: zeros, one NaN at [5], 2.0 last).
R="$T/big.raw"
N=$(( 5 << 26 ))  # 335544320 elements: 1.25 GiB
truncate -s $(( N * 4 )) "$R"
printf '\x00\x00\xc0\x7f' | dd of="$R" bs=1 seek=20 conv=notrunc status=none
printf '\x00\x00\x00\x40' | dd of="$R" bs=1 seek=$(( N * 4 - 4 )) conv=notrunc status=none
check_auto() { # threads expected-note(or "") env-assignments...
    local th="$1" note="$2"; shift 2
    expect_exit 1 env "$@" "$NANAUDIT" scan --threads "$th" --format json --dtype F32 "$R"
    cp "$T/stdout" "$T/a.json"
    expect_json "$T/a.json" '[j["files"][0]["tensors"][0][k] for k in ("nan", "zeros", "max")]' \
        "[1, $(( N - 2 )), 2.0]"
    expect_json "$T/a.json" 'j["files"][0]["tensors"][0]["nan_locations"]' '[[5]]'
    expect_json "$T/a.json" 'j["device"]' '"cpu"'
    if [ -n "$note" ]; then
        expect_json "$T/a.json" 'j["device_note"]' "\"--device auto: no usable GPU ($note); scanned on the CPU\""
    else
        expect_json "$T/a.json" '"device_note" in j' 'false'
    fi
}
# 1 thread: 1.34 GB is past the 1.13 GB break-even, so CUDA is tried and
# its failure noted; 2 threads: under 2.39 GB, CUDA is never touched.
F="LD_LIBRARY_PATH=$NA_FAKE_CUDA_DIR"
check_auto 1 "CUDA: driver older than the runtime (driver supports CUDA 11.0, nanaudit was built with $BUILT)" \
    "$F" NA_FAKE_CUDA_VERSION=11000
check_auto 1 "CUDA: no CUDA device" "$F" NA_FAKE_CUDA_VERSION=$NEW NA_FAKE_CUDA_INIT=100
check_auto 2 "" "$F" NA_FAKE_CUDA_VERSION=11000
# The real machine, without the fake (CI has no driver at all).
if [ ! -e /dev/nvidiactl ]; then
    check_auto 1 "CUDA: no driver (libcuda.so.1 could not be loaded); no GPU can be used on this machine"
fi
pass
