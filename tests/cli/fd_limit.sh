#!/bin/bash
# Too few file descriptors for an .npz or a PyTorch zip, whose reader
# duplicates the input's descriptor: one line with the reason, exit 4 - the
# environment's limit, not an unreadable input (exit 3, which a CI job
# reads as bad data; round 32b) - no crash (fresh-user round 25b: "dup
# failed", with no reason); likewise clean (lib/status.c na_errno_status). The limit
# is the lowest free descriptor + 1, so that the input takes the last
# one (ctest may leave descriptors open to its tests: 4 is not enough
# everywhere).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
# a sanitizer's runtime opens files of its own (/proc/self/maps)
if is_sanitized; then
    echo "SKIP fd_limit (sanitizer build)"
    exit 0
fi
"$NA_PYTHON" -c 'import numpy as np; np.savez("s.npz", a=np.arange(3.0))' || fail "s.npz"
"$NA_PYTHON" - <<'PY' || fail "w.pt"
import os, sys
sys.path.insert(0, os.path.join(os.environ["NA_SRC"], "tests", "tools"))
import numpy as np
from make_pt import Storage, Tensor, save
save({"w": Tensor(Storage(np.arange(3, dtype=np.float32)), 0, (3,), (1,))}, "w.pt")
PY
# the lowest descriptor nanaudit's open would get (its stdio is 0-2)
low=$("$NA_PYTHON" -c 'import os; print(os.open("/dev/null", os.O_RDONLY))' </dev/null)
for f in s.npz w.pt; do
    rc=0
    (ulimit -n $((low + 1)) && exec "$NANAUDIT" scan "$f") >out 2>err </dev/null || rc=$?
    assert_eq "$rc" 4 "$f: exit under ulimit -n $((low + 1))"
    assert_eq "$(cat err)" "nanaudit: $f: dup failed: Too many open files" "$f: stderr"
    expect_exit 0 "$NANAUDIT" scan "$f"
done
rc=0
(ulimit -n $((low + 1)) && exec "$NANAUDIT" clean s.npz -o c.npz) >out 2>err </dev/null || rc=$?
assert_eq "$rc" 4 "clean under ulimit -n $((low + 1))"
assert_eq "$(cat err)" "nanaudit: s.npz: dup failed: Too many open files" "clean: stderr"
[ ! -e c.npz ] || fail "c.npz written"
pass
