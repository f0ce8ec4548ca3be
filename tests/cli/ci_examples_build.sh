#!/bin/bash
# The build steps of examples/ci/github-actions.yml and gitlab-ci.yml work
# on a fresh runner (fifth fresh-user round). They install only the
# packages the nanaudit binary needs, but configured with the defaults,
# which build the tests, and tests/CMakeLists.txt requires cmocka
# (find_library REQUIRED): on ubuntu-24.04 or debian:12 without
# libcmocka-dev the configure step failed, so the gate never ran. This
# machine has cmocka, so the check is on the command lines themselves:
#  - each example installs every package the configure requires
#    unconditionally (the README's command 1 list minus optional ones);
#  - each configure line leaves the tests out (-DNANAUDIT_TESTS=OFF) unless
#    the example also installs libcmocka-dev;
#  - the example's configure line, run on this source tree, succeeds and
#    configures no test directory (a misspelt option would be ignored by
#    CMake with only a warning).
. "$(dirname "$0")/helpers.sh"

command -v cmake >/dev/null || { echo "SKIP $NA_TEST_NAME (no cmake)"; exit 0; }
REQUIRED="build-essential cmake pkg-config libhdf5-dev zlib1g-dev libjansson-dev libyaml-dev libssl-dev libminizip-dev"

seen=""
for ex in github-actions.yml gitlab-ci.yml; do
    f="$NA_SRC/examples/ci/$ex"
    [ -f "$f" ] || fail "$f is missing"
    # every whitespace-separated word of the file (package lists span lines)
    words=$(tr -s ' \t\\' '\n\n\n' <"$f")
    for p in $REQUIRED; do
        grep -qxF -- "$p" <<<"$words" || fail "$ex does not install $p"
    done
    conf=$(grep -o 'cmake -S [^#]*' "$f" | head -1)
    [ -n "$conf" ] || fail "$ex has no 'cmake -S' configure line"
    if ! grep -qxF libcmocka-dev <<<"$words"; then
        case "$conf" in *-DNANAUDIT_TESTS=OFF*) ;;
            *) fail "$ex configures the tests (cmocka required) without installing libcmocka-dev: $conf" ;;
        esac
    fi
    # run it (once per distinct option set; configuring takes seconds):
    # source -> this tree, build folder -> a fresh one under $T
    read -r -a cw <<<"$conf"
    args=()
    for ((i = 1; i < ${#cw[@]}; i++)); do
        w=${cw[$i]}
        case "$w" in
            -S) args+=(-S "$NA_SRC"); i=$((i + 1)) ;;
            -B) args+=(-B "$T/b-$ex"); i=$((i + 1)) ;;
            *) args+=("$w") ;;
        esac
    done
    key="${args[*]:4}"
    case " $seen " in *" [$key] "*) continue ;; esac
    seen="$seen [$key]"
    expect_exit 0 cmake "${args[@]}"
    expect_stderr_lacks "Manually-specified variables were not used"
    [ ! -e "$T/b-$ex/tests" ] || fail "$ex: the configure line still builds the tests"
    grep -q '^NANAUDIT_TESTS:BOOL=OFF' "$T/b-$ex/CMakeCache.txt" ||
        fail "$ex: NANAUDIT_TESTS is not OFF in the cache"
done
pass
