#!/usr/bin/env bash
# test.sh - README command 2: the whole test suite, from a clean clone.
#
#  1. Debian packages (scripts/setup.sh --deps; needs root only if some are
#     missing).
#  2. A Python virtual environment at $NA_VENV (default .venv) with the
#     reference packages of tests/conformance/requirements.txt from PyPI
#     (numpy, scipy, safetensors, ml_dtypes, h5py, jsonschema, PyYAML, xmlschema,
#     markdown-it-py); reused when it already
#     has them.
#  3. Release build in build/ ($NA_BUILD) with -DNA_PYTHON=<venv python>; ctest, all
#     labels (unit, cli, conformance, ...).
#  4. ASan + UBSan build in build-asan/ ($NA_BUILD_ASAN) (-DNANAUDIT_SANITIZE=ON
#     -DNANAUDIT_CUDA=OFF, and -DNANAUDIT_LIBDEFLATE=OFF so that HDF5 chunks
#     go through the zlib fallback once); ctest, labels unit, cli and fuzz
#     (the fuzz corpora replayed under the sanitizers).
#  5. ThreadSanitizer build in build-tsan/ ($NA_BUILD_TSAN): clang with
#     libomp and its Archer tool (libgomp is not TSan-instrumented);
#     ctest, labels unit, cli and fuzz: every OpenMP scan path with
#     --threads 1..16.
#  6. Fuzzing: tests/fuzz/run.sh builds the libFuzzer targets with clang in
#     build-fuzz/ ($NA_BUILD_FUZZ) and runs each for $NA_FUZZ_SECONDS
#     (default 20) seconds; a crash fails the run (inputs kept in
#     build-fuzz/artifacts/).
# Stops at the first failing step (set -e); ctest prints its
# "N% tests passed, M tests failed out of T" line for each run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${NA_VENV:-$ROOT/.venv}
JOBS=${NA_JOBS:-$(nproc)}
BUILD=${NA_BUILD:-build}            # build folders, relative to the tree
ASAN=${NA_BUILD_ASAN:-build-asan}
step() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

step "Debian packages"
bash scripts/setup.sh --deps

step "Python reference packages in $VENV"
PY="$VENV/bin/python"
if ! "$PY" -c 'import numpy, scipy, safetensors, ml_dtypes, h5py, jsonschema, yaml, markdown_it, xmlschema' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$PY" -m pip install --disable-pip-version-check -q -r tests/conformance/requirements.txt
fi
"$PY" -c 'import numpy, scipy, safetensors, ml_dtypes, h5py as h
print("numpy", numpy.__version__, "scipy", scipy.__version__, "safetensors",
      safetensors.__version__, "ml_dtypes", ml_dtypes.__version__, "h5py", h.__version__)'

# PyTorch reference (tests/conformance/test_torch.py): Debian's python3-torch
# in a venv made from Debian's own python3 with --system-site-packages, so
# torch 1.13 runs with Debian's numpy 1.x whatever $VENV holds.
TORCH_VENV=${NA_TORCH_VENV:-$ROOT/.venv-torch}
step "PyTorch reference in $TORCH_VENV"
[ -x "$TORCH_VENV/bin/python" ] ||
    /usr/bin/python3 -m venv --system-site-packages --without-pip "$TORCH_VENV"
"$TORCH_VENV/bin/python" -c 'import torch, numpy
print("torch", torch.__version__, "numpy", numpy.__version__)'
export NA_TORCH_PYTHON="$TORCH_VENV/bin/python"

step "$BUILD/ (NANAUDIT_CUDA=AUTO)"
cmake -S . -B "$BUILD" -DNA_PYTHON="$PY" -DNANAUDIT_CUDA=AUTO
cmake --build "$BUILD" -j"$JOBS"

step "ctest $BUILD/ (all labels)"
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS"

step "$ASAN/ (ASan + UBSan)"
cmake -S . -B "$ASAN" -DNANAUDIT_SANITIZE=ON -DNANAUDIT_CUDA=OFF -DNANAUDIT_LIBDEFLATE=OFF
cmake --build "$ASAN" -j"$JOBS"

step "ctest $ASAN/ (labels unit, cli, fuzz)"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    ctest --test-dir "$ASAN" -L 'unit|cli|fuzz' --output-on-failure -j"$JOBS"

# ThreadSanitizer needs an instrumented OpenMP runtime: gcc's libgomp is
# not, and its barriers look like races. clang's libomp with its Archer
# tool (OMPT) tells TSan about OpenMP synchronisation; the other
# uninstrumented libraries (libhdf5, jansson, zlib) are ignored.
TSAN=${NA_BUILD_TSAN:-build-tsan}
step "$TSAN/ (ThreadSanitizer: clang, libomp + Archer)"
cmake -S . -B "$TSAN" -DCMAKE_C_COMPILER=clang -DNANAUDIT_TSAN=ON -DNANAUDIT_CUDA=OFF \
    -DCMAKE_C_FLAGS="-DNA_NO_CLONES -Wno-pass-failed" -DNANAUDIT_WERROR=OFF -DNA_PYTHON="$PY"
cmake --build "$TSAN" -j"$JOBS"

# cli_clean_safety skips its `ulimit -f 64` case here: under it any TSan +
# libomp binary dies at start-up (SIGBUS in libomp's initialisation).
step "ctest $TSAN/ (labels unit, cli, fuzz)"
OMP_TOOL_LIBRARIES="$(clang -print-resource-dir)/../../libarcher.so" \
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:ignore_noninstrumented_modules=1:exitcode=66} \
    ctest --test-dir "$TSAN" -L 'unit|cli|fuzz' --output-on-failure \
    -j"$JOBS"

step "fuzz targets, ${NA_FUZZ_SECONDS:-20} s each (tests/fuzz/run.sh)"
bash tests/fuzz/run.sh "${NA_FUZZ_SECONDS:-20}"

step "all tests passed"
