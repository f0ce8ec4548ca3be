#!/bin/bash
# clean of a safetensors file whose header is just under the 100,000,000
# bytes the safetensors library reads (MAX_HEADER_SIZE): nanaudit's
# metadata entry would take the output's header past it, so clean refuses
# before writing, exit 3, one line (round 43b MED: it wrote the file, its
# verifying re-read refused it, exit 4 "internal or environment error").
# A header with room to spare is cleaned and loads in the safetensors
# package with the input's metadata.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import json, struct
import numpy as np
from safetensors.numpy import save_file
def st(path, meta_len):
    h = {"__metadata__": {"note": "x" * meta_len},
         "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    b = json.dumps(h, separators=(",", ":")).encode()
    b += b" " * (-len(b) % 8)
    open(path, "wb").write(struct.pack("<Q", len(b)) + b + np.array([1, np.nan], "<f4").tobytes())
st("big.safetensors", 100_000_000 - 120)
st("small.safetensors", 1000)
PY
N="$NANAUDIT"
expect_exit 1 "$N" scan big.safetensors   # the input itself is valid (NaN: exit 1)
mkdir out
expect_exit 3 "$N" clean --nonfinite zero big.safetensors -o out/big.safetensors
expect_stderr_contains "nanaudit: big.safetensors: the cleaned file's safetensors header would be "
expect_stderr_contains "bytes, more than the 100000000 the safetensors library reads (the input's __metadata__ and tensor names, plus nanaudit's metadata entry); nothing written"
assert_eq "$(ls -A out)" "" "files left in out/"
expect_exit 0 "$N" clean --nonfinite zero small.safetensors -o out/small.safetensors
"$NA_PYTHON" -c '
from safetensors import safe_open
with safe_open("out/small.safetensors", "np") as f:
    assert f.metadata()["note"] == "x" * 1000 and "nanaudit" in f.metadata()
    assert f.get_tensor("w").tolist() == [1.0, 0.0]' || fail "out/small.safetensors"
pass
