#!/bin/bash
# PyTorch pickles that multiply the work or the memory (round 43b, two
# HIGH): one tensor object referenced over and over costs the pickle 2
# bytes per reference (a memo BINGET) but the reader ~2.3 KB per entry (a
# 2 MB file took 2.2 GB), and every reference was audited again (1000
# references to a 16 MiB storage read 16 GB; 100,000 ran for minutes).
# Now: at most one tensor entry per 16 bytes of pickle (65536 whatever
# its size; torch.save spends ~90 bytes per tensor), and all views at most
# 64 times their storages' bytes + 16 GiB; exit 3, one line, in bounded
# time and memory. Tied weights (a storage viewed twice) and a block of
# weights shared by 24 layers (round 44a: refused under a 16x bound) are
# still audited under every name.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
PYTHONPATH="$NA_SRC/tests/tools" "$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from make_pt import Storage, Tensor, save
big = Tensor(Storage(np.zeros(1 << 19, np.float32)), 0, (1 << 19,), (1,))  # 2 MiB
save({"x": [big] * 9000}, "views.pt")           # 17.6 GiB of views over 2 MiB
blk = [Tensor(Storage(np.full(64, k, np.float32)), 0, (8, 8), (8, 1)) for k in range(8)]
save({f"layer.{i}.w{k}": blk[k] for i in range(24) for k in range(8)}, "shared.pt")
small = Tensor(Storage(np.ones(3, np.float32)), 0, (3,), (1,))
save({"x": [small] * 70000}, "refs.pt")         # 70000 entries, ~140 KB of pickle
s = Storage(np.arange(6, dtype=np.float32))
save({"emb.weight": Tensor(s, 0, (2, 3), (3, 1)), "head.weight": Tensor(s, 0, (2, 3), (3, 1))},
     "tied.pt")
PY
N="$NANAUDIT"
/usr/bin/time -f "%e %M" -o "$T/time" "$N" scan views.pt >"$T/stdout" 2>"$T/stderr"
assert_eq "$?" 3 "views.pt exit code"
expect_stderr_contains "nanaudit: views.pt: the 9000 tensors view 18874368000 bytes in all, more than 64 times the 2097152 bytes of their storages (+16 GiB): the same storage named over and over; not audited"
read -r secs kb < <(tail -n 1 "$T/time")
[ "$(echo "$secs < 5" | bc)" = 1 ] && [ "$kb" -lt 204800 ] || fail "views.pt: $secs s, $kb KiB"
/usr/bin/time -f "%e %M" -o "$T/time" "$N" scan refs.pt >"$T/stdout" 2>"$T/stderr"
assert_eq "$?" 3 "refs.pt exit code"
expect_stderr_contains "nanaudit: refs.pt: pickle: more than 65536 tensor entries in "
expect_stderr_contains "bytes of pickle (a checkpoint's pickle spends about 90 bytes per tensor; one tensor referenced over and over?)"
read -r secs kb < <(tail -n 1 "$T/time")
[ "$kb" -lt 409600 ] || fail "refs.pt: $kb KiB"
expect_exit 3 "$N" info views.pt
expect_exit 3 "$N" clean --nonfinite zero views.pt -o out.pt
[ ! -e out.pt ] || fail "clean wrote out.pt"
expect_exit 0 "$N" scan --format json shared.pt
expect_json "$T/stdout" '[j["summary"]["tensors"], j["files"][0]["tensors"][191]["name"], j["files"][0]["tensors"][191]["max"]]' '[192, "layer.23.w7", 7.0]'
expect_exit 0 "$N" scan --format json tied.pt
expect_json "$T/stdout" '[(t["name"], t["max"]) for t in j["files"][0]["tensors"]]' '[["emb.weight", 5.0], ["head.weight", 5.0]]'
pass
