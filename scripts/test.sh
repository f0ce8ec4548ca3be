#!/usr/bin/env bash
# test.sh - README command 2: the whole test suite, from a clean clone.
#
#  1. Debian packages (scripts/setup.sh --deps; needs root only if some are
#     missing).
#  2. A Python virtual environment at $NA_VENV (default .venv) with the
#     reference packages of tests/conformance/requirements.txt from PyPI
#     (numpy, scipy, safetensors, ml_dtypes, h5py); reused when it already
#     has them.
#  3. Release build in build/ ($NA_BUILD) with -DNA_PYTHON=<venv python>; ctest, all
#     labels (unit, cli, conformance, ...).
#  4. ASan + UBSan build in build-asan/ ($NA_BUILD_ASAN) (-DNANAUDIT_SANITIZE=ON
#     -DNANAUDIT_CUDA=OFF); ctest, labels unit and cli.
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
if ! "$PY" -c 'import numpy, scipy, safetensors, ml_dtypes, h5py' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$PY" -m pip install --disable-pip-version-check -q -r tests/conformance/requirements.txt
fi
"$PY" -c 'import numpy, scipy, safetensors, ml_dtypes, h5py as h
print("numpy", numpy.__version__, "scipy", scipy.__version__, "safetensors",
      safetensors.__version__, "ml_dtypes", ml_dtypes.__version__, "h5py", h.__version__)'

step "$BUILD/ (NANAUDIT_CUDA=AUTO)"
cmake -S . -B "$BUILD" -DNA_PYTHON="$PY" -DNANAUDIT_CUDA=AUTO
cmake --build "$BUILD" -j"$JOBS"

step "ctest $BUILD/ (all labels)"
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS"

step "$ASAN/ (ASan + UBSan)"
cmake -S . -B "$ASAN" -DNANAUDIT_SANITIZE=ON -DNANAUDIT_CUDA=OFF
cmake --build "$ASAN" -j"$JOBS"

step "ctest $ASAN/ (labels unit, cli)"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    ctest --test-dir "$ASAN" -L 'unit|cli' --output-on-failure -j"$JOBS"

step "all tests passed"
