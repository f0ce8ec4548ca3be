#!/usr/bin/env bash
# bundle.sh BUILD_DIR OUT_DIR - package a CUDA build of nanaudit for the GPU
# machine, whose image has no jansson/HDF5 packages and no network: the two
# binaries (nanaudit, nanaudit-gpucheck) plus every shared library they
# load except glibc's own (libc, libm, libdl, libpthread, librt, libresolv,
# ld-linux),
# into OUT_DIR/bin and OUT_DIR/lib. run.sh puts OUT_DIR/lib on
# LD_LIBRARY_PATH. The CUDA runtime is linked statically and the driver is
# the GPU machine's own, so neither is copied (tests/gpu/README.md).
set -euo pipefail
build=${1:?usage: bundle.sh BUILD_DIR OUT_DIR}
out=${2:?usage: bundle.sh BUILD_DIR OUT_DIR}
mkdir -p "$out/bin" "$out/lib"
for b in nanaudit nanaudit-gpucheck; do
    [ -x "$build/$b" ] || { echo "bundle.sh: $build/$b missing (a build with NANAUDIT_CUDA)" >&2; exit 1; }
    cp "$build/$b" "$out/bin/"
    ldd "$build/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
        case "$(basename "$lib")" in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|ld-linux*|libcuda.so*) ;;
        *) cp -L "$lib" "$out/lib/" ;;
        esac
    done
done
echo "bundle.sh: $(ls "$out/lib" | tr '\n' ' ')-> $out"
