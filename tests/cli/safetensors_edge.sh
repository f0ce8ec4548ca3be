#!/bin/bash
# safetensors_edge.sh - valid but unusual safetensors files (the reference
# loader accepts them, so must we): JSON whitespace around the header,
# tensors listed in data_offsets order whatever the header order, scalar
# shape [], empty [0] and [2,0] (also F8_E4M3, stats null), C64 as
# NAME.real / NAME.imag, a header with no tensors, metadata printed with
# control characters escaped; and F4, which is listed but fails closed.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T" <<'PY' || fail "writing the test files"
import json, struct, sys
d = sys.argv[1]
def write(name, header, data=b"", pre=b"", post=b""):
    h = pre + json.dumps(header).encode() + post
    with open(f"{d}/{name}", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
hd = {"__metadata__": {"format": "pt", "note": "x\u001b[31mred"},
      "z": {"dtype": "C64", "shape": [2], "data_offsets": [12, 28]},
      "s": {"dtype": "F64", "shape": [], "data_offsets": [4, 12]},
      "e0": {"dtype": "F32", "shape": [0], "data_offsets": [28, 28]},
      "e20": {"dtype": "F8_E4M3", "shape": [2, 0], "data_offsets": [28, 28]},
      "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}
data = struct.pack("<f", 7.0) + struct.pack("<d", 2.5) + struct.pack("<4f", 1.0, -2.0, 3.0, float("nan"))
write("edge.safetensors", hd, data, pre=b"\n ", post=b" \t\r\n")
write("none.safetensors", {})
write("meta_null.safetensors", {"__metadata__": None, "w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, b"\x07")
write("f4.safetensors", {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "q": {"dtype": "F4", "shape": [4], "data_offsets": [4, 6]}}, struct.pack("<f", 1.0) + b"\0\0")
PY

expect_exit 1 "$NANAUDIT" scan --format json "$T/edge.safetensors"
cp "$T/stdout" "$T/edge.json"
expect_json "$T/edge.json" '[t["name"] for t in j["files"][0]["tensors"]]' '["a", "s", "z.real", "z.imag", "e0", "e20"]'
expect_json "$T/edge.json" '[t["elements"] for t in j["files"][0]["tensors"]]' '[1, 1, 2, 2, 0, 0]'
expect_json "$T/edge.json" '[t["shape"] for t in j["files"][0]["tensors"]]' '[[1], [], [2], [2], [0], [2, 0]]'
expect_json "$T/edge.json" 'j["files"][0]["tensors"][1]["max"]' '2.5'
# C64 parts: F32 values 1, 3 (real) and -2, NaN (imag)
expect_json "$T/edge.json" '[j["files"][0]["tensors"][2][k] for k in ("dtype", "min", "max", "mean", "std")]' '["F32", 1.0, 3.0, 2.0, 1.0]'
expect_json "$T/edge.json" '[j["files"][0]["tensors"][3][k] for k in ("nan", "min", "max", "nan_locations")]' '[1, -2.0, -2.0, [[1]]]'
# empty tensors: valid, statistics null
expect_json "$T/edge.json" '[(t["status"], t["min"], t["mean"], t["std"]) for t in j["files"][0]["tensors"][4:]]' '[["ok", null, null, null], ["ok", null, null, null]]'
expect_json "$T/edge.json" 'j["summary"]["exit_code"]' '1'

# info: headers only, storage order, metadata with the escape made visible
expect_exit 0 "$NANAUDIT" info "$T/edge.safetensors"
expect_stdout_contains 'x\x1b[31mred'
expect_stdout_lacks "$(printf 'x\033[31mred')"
expect_stdout_contains "z.imag"

expect_exit 0 "$NANAUDIT" scan "$T/none.safetensors"
expect_exit 0 "$NANAUDIT" scan "$T/meta_null.safetensors"

# F4 is listed but not decoded: fail closed, the other tensor still audited
expect_exit 3 "$NANAUDIT" scan --format json "$T/f4.safetensors"
expect_stderr_contains "f4.safetensors: q: unsupported dtype F4"
# the tensor named once (tenth fresh-user round: "q: unsupported dtype F4 in tensor 'q'")
grep -q "in tensor" "$T/stderr" && fail "the tensor is named twice"
cp "$T/stdout" "$T/f4.json"
expect_json "$T/f4.json" '[(t["name"], t["status"]) for t in j["files"][0]["tensors"]]' '[["a", "ok"], ["q", "error"]]'
pass
