# helpers.sh - shared helpers for the CLI tests in tests/cli/*.sh.
#
# Source it first:   . "$(dirname "$0")/helpers.sh"
# Environment (set by ctest, see tests/CMakeLists.txt):
#   NANAUDIT      the built binary (required)
#   NA_TEST_DATA  tests/data;  NA_SRC  the source tree
#   NA_PYTHON     python with numpy/safetensors/ml_dtypes (optional; else
#                 $NA_SRC/.venv/bin/python, else python3)
# Every helper stops the script with a message and exit 1 on failure, so a
# test is a plain list of expectations. Stable API, used by every engineer:
#   expect_exit CODE CMD...        run CMD, check its exit code; keeps the
#                                  output in $T/stdout and $T/stderr
#   expect_stdout_contains STR     fixed-string match on the last stdout
#   expect_stderr_contains STR     fixed-string match on the last stderr
#   expect_stdout_lacks STR / expect_stderr_lacks STR
#   expect_stderr_empty
#   json_get FILE EXPR             print EXPR evaluated with j = parsed FILE
#                                  (python syntax; JSON-encoded result)
#   expect_json FILE EXPR WANT     json_get FILE EXPR must print WANT exactly
#   make_st OUT JSON               write a safetensors file (tests/tools/make_st.py)
#   skip_without_hdf5              "SKIP name", exit 0, in a build without HDF5
#   is_sanitized                   true for an ASan/UBSan or TSan build
#   assert_eq GOT WANT [WHAT]      string equality
#   fail MSG                       stop the test
#   pass                           print "PASS name" (call at the end)
# $T is a fresh temporary directory, removed on exit.

set -u

: "${NANAUDIT:?NANAUDIT must point to the built nanaudit binary}"
: "${NA_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${NA_TEST_DATA:=$NA_SRC/tests/data}"
if [ -z "${NA_PYTHON:-}" ]; then
    if [ -x "$NA_SRC/.venv/bin/python" ]; then
        NA_PYTHON="$NA_SRC/.venv/bin/python"
    else
        NA_PYTHON=python3
    fi
fi
export NANAUDIT NA_SRC NA_TEST_DATA NA_PYTHON

T="$(mktemp -d "${TMPDIR:-/tmp}/nacli.XXXXXX")"
trap 'rm -rf "$T"' EXIT
NA_TEST_NAME="$(basename "$0" .sh)"
LAST_RC=0

fail() {
    echo "FAIL $NA_TEST_NAME: $*" >&2
    if [ -f "$T/stdout" ]; then
        echo "--- last stdout:" >&2; head -c 4000 "$T/stdout" >&2
    fi
    if [ -f "$T/stderr" ]; then
        echo "--- last stderr:" >&2; head -c 4000 "$T/stderr" >&2
    fi
    exit 1
}

pass() { echo "PASS $NA_TEST_NAME"; }

# expect_exit CODE CMD... : stdin is /dev/null so nothing waits for input.
expect_exit() {
    local want="$1"; shift
    # "|| LAST_RC=$?" keeps this safe under set -e in the caller.
    LAST_RC=0
    "$@" >"$T/stdout" 2>"$T/stderr" </dev/null || LAST_RC=$?
    if [ "$LAST_RC" != "$want" ]; then
        fail "expected exit $want, got $LAST_RC from: $*"
    fi
}

expect_stdout_contains() {
    grep -qF -- "$1" "$T/stdout" || fail "stdout lacks: $1"
}
expect_stderr_contains() {
    grep -qF -- "$1" "$T/stderr" || fail "stderr lacks: $1"
}
expect_stdout_lacks() {
    if grep -qF -- "$1" "$T/stdout"; then fail "stdout has: $1"; fi
}
expect_stderr_lacks() {
    if grep -qF -- "$1" "$T/stderr"; then fail "stderr has: $1"; fi
}
expect_stderr_empty() {
    [ ! -s "$T/stderr" ] || fail "stderr not empty"
}

assert_eq() {
    [ "$1" = "$2" ] || fail "${3:-value}: got '$1', want '$2'"
}

# refused_everywhere FILE LINE: scan, info and clean (into a new folder
# out/) each exit 3 with exactly LINE on stderr, and clean leaves no file.
refused_everywhere() {
    local cmd
    for cmd in scan info; do
        expect_exit 3 "$NANAUDIT" "$cmd" "$1"
        assert_eq "$(cat "$T/stderr")" "$2" "$cmd of $1"
    done
    mkdir out
    expect_exit 3 "$NANAUDIT" clean -o "out/$(basename "$1")" "$1"
    assert_eq "$(cat "$T/stderr")" "$2" "clean of $1"
    assert_eq "$(ls -A out)" "" "clean left a file"
    rmdir out
}

# json_get FILE EXPR: evaluates EXPR (python) with j bound to the parsed
# document; prints json.dumps(result). Invalid JSON fails the test.
json_get() {
    "$NA_PYTHON" -c '
import json, sys
with open(sys.argv[1], "rb") as fh:
    j = json.loads(fh.read(), parse_constant=lambda c: sys.exit("non-JSON constant " + c))
print(json.dumps(eval(sys.argv[2], {"j": j})))
' "$1" "$2" || fail "json_get $1 $2"
}

expect_json() {
    local got
    got="$(json_get "$1" "$2")" || exit 1
    [ "$got" = "$3" ] || fail "$2: got $got, want $3"
}

# make_st OUT JSON: see tests/tools/make_st.py for the description format.
make_st() {
    "$NA_PYTHON" "$NA_SRC/tests/tools/make_st.py" "$1" "$2" || fail "make_st $1"
}

# skip_without_hdf5: end the test with "SKIP name" (exit 0) when this
# nanaudit was built without HDF5 (it refuses an HDF5 file, exit 3).
skip_without_hdf5() {
    local rc=0
    "$NANAUDIT" scan "$NA_TEST_DATA/real/hdf5/hdfgroup-tall.h5" >/dev/null 2>&1 </dev/null || rc=$?
    if [ "$rc" = 3 ]; then
        echo "SKIP $NA_TEST_NAME: this nanaudit was built without HDF5"
        exit 0
    fi
}

# is_sanitized: true (status 0) when $NANAUDIT is a sanitizer build, whose
# runtime reserves terabytes of address space (no ulimit -v can be set),
# opens files of its own and may catch a bad pointer before a signal.
is_sanitized() {
    { ldd "$NANAUDIT"; nm "$NANAUDIT"; } 2>/dev/null | grep -qE 'lib(a|t)san|__(a|t)san_init'
}

# A process run with NANAUDIT_TEST_SIGNAL=STOP stops itself at the hook:
# wait_stopped PID waits for that (at most 30 s), failing if it ended
# first; continue_to_end PID then continues it at each stop until it
# ends (wait for its status afterwards).
is_stopped() { [ "$(ps -o stat= -p "$1" | cut -c1)" = T ]; }
wait_stopped() {
    local i
    for i in $(seq 3000); do
        is_stopped "$1" && return 0
        kill -0 "$1" 2>/dev/null || fail "pid $1 ended before the hook stopped it"
        sleep 0.01
    done
    fail "pid $1 did not stop"
}
continue_to_end() {
    while kill -0 "$1" 2>/dev/null; do
        is_stopped "$1" && kill -CONT "$1"
        sleep 0.01
    done
}

# Run directly (ctest globs every tests/cli/*.sh, so it does): check the
# helpers themselves, so a broken helper cannot make every test pass.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    expect_exit 0 true
    expect_exit 3 sh -c 'echo out; echo err >&2; exit 3'
    expect_stdout_contains out
    expect_stderr_contains err
    expect_stdout_lacks err
    if (expect_exit 0 false) 2>/dev/null; then fail "expect_exit missed a wrong code"; fi
    if (expect_stdout_contains nothere) 2>/dev/null; then fail "contains missed"; fi
    echo '{"a": [1, 2.5, null], "b": "x"}' >"$T/h.json"
    expect_json "$T/h.json" 'j["a"]' '[1, 2.5, null]'
    expect_json "$T/h.json" 'j["b"]' '"x"'
    echo '{"a": NaN}' >"$T/bad.json"
    if (json_get "$T/bad.json" 'j') >/dev/null 2>&1; then fail "json_get accepted NaN"; fi
    make_st "$T/h.safetensors" '{"tensors":[{"name":"w","dtype":"F16","shape":[2],"values":[1,65519]}]}'
    assert_eq "$(od -An -tx1 -j8 -N8 "$T/h.safetensors" | tr -d ' ')" "7b2277223a7b2264" "header start"
    assert_eq "$(tail -c 4 "$T/h.safetensors" | od -An -tx1 | tr -d ' ')" "003cff7b" "F16 data"
    pass
fi
