#!/bin/bash
# Regression (issue 7, fresh-user report): `clean x.index.json` said
# "(na_walk expands it)", an internal name. clean writes one file, so an
# index is refused (exit 3, one line naming it) with what to do instead;
# each shard it lists cleans on its own, and scan/info take the index.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import json
import numpy as np
from safetensors.numpy import save_file
save_file({"a": np.array([1, np.nan, 3], np.float32)}, "m-00001-of-00002.safetensors")
save_file({"b": np.ones(3, np.float32)}, "m-00002-of-00002.safetensors")
json.dump({"metadata": {}, "weight_map": {"a": "m-00001-of-00002.safetensors",
                                         "b": "m-00002-of-00002.safetensors"}},
          open("m.safetensors.index.json", "w"))
PY
N="$NANAUDIT"

expect_exit 3 "$N" clean m.safetensors.index.json -o out.safetensors --nonfinite zero
assert_eq "$(cat "$T/stderr")" "nanaudit: m.safetensors.index.json: a sharded-checkpoint index, not a tensor file: give its shard files one by one (scan and info read the index itself)"
[ -e out.safetensors ] && fail "output written"
expect_exit 0 "$N" clean m-00001-of-00002.safetensors -o c1.safetensors --nonfinite zero
expect_stdout_contains "replaced 1 non-finite"
expect_exit 1 "$N" scan m.safetensors.index.json
expect_stdout_contains "3 files, 2 tensors"
pass
