# bench/lib.sh - sourced by the bench scripts (bash).
#
# bench_python SRC: the Python the scripts run - NA_PYTHON, else
# SRC/.venv/bin/python (the README's test command, scripts/test.sh, makes
# it with tests/conformance/requirements.txt), else python3. Prints it; when
# it cannot import numpy, one line saying what to do on stderr and exit 2
# (the scripts stopped with ".venv/bin/python: No such file or directory"
# in a fresh clone; round 33b).
bench_python() {
    local py=${NA_PYTHON:-}
    if [ -z "$py" ]; then
        if [ -x "$1/.venv/bin/python" ]; then py=$1/.venv/bin/python; else py=python3; fi
    fi
    if ! "$py" -c 'import numpy' >/dev/null 2>&1; then
        echo "bench: '$py' cannot import numpy: run the README's test command once (it makes" \
             ".venv), or set NA_PYTHON to a Python with numpy, h5py, safetensors and ml_dtypes" >&2
        exit 2
    fi
    echo "$py"
}

# bench_binary PATH: PATH made absolute (the scripts cd into their work
# directory), or one line and exit 2 when it is not an executable file
# (a missing binary was timed as 0.00 s; round 34b).
bench_binary() {
    if [ ! -x "$1" ] || [ -d "$1" ]; then
        echo "bench: '$1' is not an executable nanaudit: build it first (README) or set NANAUDIT" >&2
        exit 2
    fi
    (cd "$(dirname "$1")" && echo "$PWD/$(basename "$1")")
}
