#!/usr/bin/env bash
# setup.sh - README command 1 as a script: install the Debian packages
# nanaudit needs (as root; only those missing), build it into build/, and
# scan the clean example (exit 0). It installs one package more than the
# README command: python3-torch, for the tests only (see Packages).
#
#   scripts/setup.sh           packages + build + `nanaudit scan examples/clean.safetensors`
#   scripts/setup.sh --deps    only the packages (scripts/test.sh uses this)
#
# Packages: compiler and CMake (>= 3.25, Debian 12), pkg-config, jansson
# (JSON), libyaml (--policy files), zlib (gzip), libdeflate (HDF5 deflate
# chunks, faster than zlib), minizip (.npz and PyTorch zip files), libhdf5 (HDF5),
# cmocka (unit tests), python3-venv
# (the conformance tests' virtual environment), jq (CLI tests read JSON),
# clang + libclang-rt-14-dev (libFuzzer, tests/fuzz/run.sh) and libomp-14-dev
# (clang's OpenMP runtime, for the fuzz and ThreadSanitizer builds),
# python3-torch (Debian's CPU build of PyTorch 1.13: the conformance test
# tests/conformance/test_torch.py writes checkpoints with the real
# torch.save; ~50 MB download, about 3 minutes on a 2-core machine, versus
# gigabytes of CUDA libraries for PyPI's wheel).
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake pkg-config libhdf5-dev zlib1g-dev libdeflate-dev libjansson-dev libyaml-dev libssl-dev
      libminizip-dev libcmocka-dev python3 python3-venv jq
      clang libclang-rt-14-dev libomp-14-dev python3-torch)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: missing packages: ${missing[*]}; run as root:" >&2
        echo "  apt-get update && apt-get install -y ${PKGS[*]}" >&2
        exit 1
    fi
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
[ "${1:-}" = "--deps" ] && exit 0

cmake -S . -B build
cmake --build build -j"$(nproc)"
build/nanaudit scan examples/clean.safetensors
