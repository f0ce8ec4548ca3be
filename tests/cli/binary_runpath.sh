#!/bin/bash
# The binary searches no library in the current directory: no RPATH or
# RUNPATH entry that is empty or relative (CMake's build RUNPATH for
# libhdf5 used to end in ':', an empty entry the loader reads as ".", so a
# libyaml-0.so.2 planted where nanaudit runs was loaded). CMakeLists.txt
# sets CMAKE_SKIP_BUILD_RPATH.
. "$(dirname "$0")/helpers.sh"
command -v readelf >/dev/null || { echo "SKIP binary_runpath: no readelf"; exit 0; }
paths=$(readelf -d "$NANAUDIT" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
case ":$paths:" in
    "::") ;; # none
    *::* | *:.:* | *:./* | *:[!/]*) fail "RPATH/RUNPATH with an empty or relative entry: [$paths]" ;;
esac
# and what it means: a library planted in the working directory is not loaded
cd "$T" || exit 1
printf 'not an ELF file\n' >libyaml-0.so.2
expect_exit 0 "$NANAUDIT" --version
pass
