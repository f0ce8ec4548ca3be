#!/bin/bash
# safetensors_official.sh - files written by the official safetensors
# package (safetensors.numpy.save_file) for every dtype numpy has: each is
# audited (exit 0), listed in data_offsets order with the reference's
# shapes, and `info` reports the reference's byte sizes and metadata.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" -c "import safetensors, numpy" 2>/dev/null || { echo "SKIP: no safetensors/numpy"; pass; exit 0; }

"$NA_PYTHON" - "$T" <<'PY' || fail "writing the reference file"
import json, struct, sys
import numpy as np
from safetensors.numpy import save_file
d = sys.argv[1]
rng = np.random.default_rng(7)
ts = {}
for i, dt in enumerate(["float16", "float32", "float64", "int8", "int16", "int32", "int64",
                        "uint8", "uint16", "uint32", "uint64", "bool"]):
    shape = [(3, 5), (7,), (2, 3, 4), ()][i % 4]
    ts[f"t{i}_{dt}"] = np.asarray((rng.standard_normal(shape) * 10).astype(dt))
ts["empty"] = np.zeros((2, 0), dtype=np.float32)
save_file(ts, f"{d}/ref.safetensors", metadata={"format": "np", "who": "reference"})
# the reference order: sorted by data_offsets, as the header says
with open(f"{d}/ref.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    h = json.loads(f.read(n))
h.pop("__metadata__")
order = sorted(h, key=lambda k: h[k]["data_offsets"])
with open(f"{d}/want.json", "w") as f:
    json.dump({"names": order, "shapes": [h[k]["shape"] for k in order],
               "bytes": [h[k]["data_offsets"][1] - h[k]["data_offsets"][0] for k in order]}, f)
PY

expect_exit 0 "$NANAUDIT" scan --format json "$T/ref.safetensors"
cp "$T/stdout" "$T/ref.json"
want_names="$(json_get "$T/want.json" 'j["names"]')"
want_shapes="$(json_get "$T/want.json" 'j["shapes"]')"
expect_json "$T/ref.json" '[t["name"] for t in j["files"][0]["tensors"]]' "$want_names"
expect_json "$T/ref.json" '[t["shape"] for t in j["files"][0]["tensors"]]' "$want_shapes"
expect_json "$T/ref.json" 'all(t["status"] == "ok" for t in j["files"][0]["tensors"])' 'true'

expect_exit 0 "$NANAUDIT" info "$T/ref.safetensors"
expect_stdout_contains "who = reference"
expect_stdout_contains "13 tensors"
pass
