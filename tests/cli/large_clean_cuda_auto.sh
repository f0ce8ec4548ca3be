#!/bin/bash
# clean --device auto in a CUDA build without a usable GPU (issue 6): when
# the tensors to clean are large enough for the GPU to repay CUDA's
# start-up (cli/device.c: ~1.13 GB with 1 thread), CUDA is tried for the
# write pass, and its failure leaves the CPU doing the work with a note in
# the JSON report ("device_note") and the text report ("note:" line);
# with 2 threads the run is under the break-even and CUDA is never tried.
# The output is the same either way. The driver is
# tests/gpu/fake_libcuda.c on LD_LIBRARY_PATH (tests/CMakeLists.txt).
. "$(dirname "$0")/helpers.sh"
if [ -z "${NA_FAKE_CUDA_DIR:-}" ]; then
    echo "SKIP: a build without CUDA has no driver to fake"
    pass
    exit 0
fi
[ -e /dev/nvidiactl ] && { echo "SKIP $NA_TEST_NAME: a GPU is here"; exit 0; }
[ -e "$NA_FAKE_CUDA_DIR/libcuda.so.1" ] || fail "the fake driver was not built: $NA_FAKE_CUDA_DIR"
F="LD_LIBRARY_PATH=$NA_FAKE_CUDA_DIR"

# A 1.25 GiB F32 raw file (sparse: zeros, one NaN at [5], 2.0 last):
# --nonfinite zero and --dry-run read it twice (fit and write pass).
R="$T/big.raw"
N=$(( 5 << 26 ))
truncate -s $(( N * 4 )) "$R"
printf '\x00\x00\xc0\x7f' | dd of="$R" bs=1 seek=20 conv=notrunc status=none
printf '\x00\x00\x00\x40' | dd of="$R" bs=1 seek=$(( N * 4 - 4 )) conv=notrunc status=none
run() { # threads env-assignments...: text on stdout, JSON in a.json
    local th="$1"; shift
    expect_exit 0 env "$@" "$NANAUDIT" clean --threads "$th" --dry-run --report "$T/a.json" \
        --dtype F32 --nonfinite zero "$R"
    expect_json "$T/a.json" '[j["tensors"][0][k] for k in ("nonfinite_replaced", "status")]' \
        '[1, "cleaned"]'
    expect_json "$T/a.json" '[j["tensors"][0]["after"][k] for k in ("finite", "nan", "max")]' \
        "[$N, 0, 2.0]"
    expect_json "$T/a.json" 'j["device"]' '"cpu"'
}
why="CUDA: no CUDA device"
run 1 "$F" NA_FAKE_CUDA_VERSION=99000 NA_FAKE_CUDA_INIT=100
expect_json "$T/a.json" 'j["device_note"]' "\"--device auto: no usable GPU ($why); cleaned on the CPU\""
assert_eq "$(tail -2 "$T/stdout")" "note: --device auto: no usable GPU ($why); cleaned on the CPU
dry run: no output written" "text report's last lines"
run 2 "$F" NA_FAKE_CUDA_VERSION=99000 NA_FAKE_CUDA_INIT=100
expect_json "$T/a.json" '"device_note" in j' 'false'
expect_stdout_lacks "note:"
pass
