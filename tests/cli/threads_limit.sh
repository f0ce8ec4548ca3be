#!/bin/bash
# threads_limit.sh - when the system lets fewer threads start than --threads
# asks for, the run warns and goes on with fewer (cli/threads.c): under
# RLIMIT_AS each thread takes its stack and a malloc arena (72 MiB of
# address space), so threads get at most half the room; under RLIMIT_NPROC
# (as nobody: root is exempt) the ones that start, less one. Before, libgomp ended it with exit(1) at its
# first parallel region - "findings" for scan, nothing audited - and clean's
# exit ran OpenSSL's clean-up under its hashing thread, which crashed (exit
# 139; round 32b). Not under a sanitizer (no ulimit -v: shadow memory).
. "$(dirname "$0")/helpers.sh"
if is_sanitized; then
    echo "SKIP $NA_TEST_NAME: sanitizer build (no ulimit -v)"
    exit 0
fi
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making the input"
import numpy as np
from safetensors.numpy import save_file
x = np.arange(300000, dtype=np.float32)
x[5], x[7] = np.nan, np.inf
save_file({"w": x, "v": np.ones(1000, np.float32)}, "thr.safetensors")
PY
N="$NANAUDIT"
limited() { (ulimit -s 8192 && ulimit -v 250000 && exec "$@"); }

expect_exit 1 limited "$N" scan --threads 300 thr.safetensors
expect_stdout_contains "2 tensors, 301000 elements: 1 NaN, 1 Inf, 0 outliers; FAILED (exit 1)"
expect_stderr_contains "the address-space limit (ulimit -v, 244 MiB) leaves room for "
[ "$(grep -c . "$T/stderr")" = 1 ] || fail "one warning line: $(cat "$T/stderr")"

expect_exit 0 limited "$N" clean --threads 300 thr.safetensors -o out.safetensors \
    --nonfinite zero --outliers clip --zscore 3
expect_stdout_contains "written: out.safetensors (verified)"
expect_stderr_contains "leaves room for 1 of the 300 threads asked for; running with 1"
"$NA_PYTHON" - <<'PY' || fail "the cleaned values"
import numpy as np
from safetensors.numpy import load_file
x = load_file("thr.safetensors")["w"].astype(np.float64)
x[~np.isfinite(x)] = 0
m, s = x.mean(), x.std()
want = np.clip(x, m - 3 * s, m + 3 * s).astype(np.float32)
assert np.array_equal(load_file("out.safetensors")["w"], want)
PY

# A process limit: no thread can start beside the main one.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v prlimit >/dev/null; then
    mkdir -m 777 np && cp thr.safetensors np/ && chmod 755 "$T" && chmod 644 np/thr.safetensors
    expect_exit 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
        prlimit --nproc=1 "$N" scan --threads 4 np/thr.safetensors
    expect_stdout_contains "1 NaN, 1 Inf, 0 outliers; FAILED (exit 1)"
    expect_stderr_contains "only 1 of 7 threads could be started (Resource temporarily unavailable); running with 1, leaving room for the run's helper processes"
    expect_exit 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
        prlimit --nproc=1 "$N" clean --threads 4 np/thr.safetensors -o np/o.safetensors \
        --nonfinite zero
    expect_stdout_contains "written: np/o.safetensors (verified)"
fi

# OMP_STACKSIZE: libgomp's threads take that much stack each, and so do
# the ones tried (round 34b: 256M under a 2 GB limit warned "running with
# 13" and libgomp then ended the run, exit 1, as before)
expect_exit 1 env OMP_STACKSIZE=256M sh -c "ulimit -v 2000000 && exec \"\$0\" \"\$@\"" \
    "$N" scan --threads 16 thr.safetensors
expect_stdout_contains "2 tensors, 301000 elements: 1 NaN, 1 Inf, 0 outliers; FAILED (exit 1)"
expect_stderr_contains "of the 16 threads asked for; running with "

# Without a limit: no warning.
expect_exit 1 "$N" scan --threads 3 thr.safetensors
expect_stderr_empty
pass
