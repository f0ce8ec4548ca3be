#!/bin/bash
# Tensors clean copies unchanged because it cannot write their dtype back
# (F8_E4M3/F8_E5M2, the parts of a complex tensor) keep their NaN and Inf:
# the output then still has what scan's default policy fails on, so the
# run is exit 1 (issue 4, "1 written but scan-policy findings remain") with
# a warning on the entry, shown by -q too. Before: exit 0 and -q silent.
# An excluded tensor is the user's choice: no scan, no warning.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import json, struct, numpy as np
w = np.array([1.0, np.nan, 2.0], np.float32).tobytes()
q = bytes([0x38, 0x7F, 0x40, 0xFF])  # F8_E4M3: 1.0, NaN, 2.0, NaN
h = {"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
     "q": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [12, 16]}}
b = json.dumps(h).encode()
open("f8.safetensors", "wb").write(struct.pack("<Q", len(b)) + b + w + q)
c = np.array([1 + 2j, np.inf + 0j, 3 + 1j], np.complex64)
np.savez("c.npz", c=c, x=np.arange(4.0))
PY
N="$NANAUDIT"
expect_exit 1 "$N" clean -q f8.safetensors -o f8.out --nonfinite zero
expect_stdout_contains "  q: copied: clean cannot write dtype F8_E4M3 back"
expect_stdout_contains "    warning: 2 NaN/Inf value(s) left as they are (copied unchanged)"
expect_exit 1 "$N" clean f8.safetensors -o f8j.out --nonfinite zero --format json
expect_json "$T/stdout" 'j["tensors"][1]["warnings"]' '["2 NaN/Inf value(s) left as they are (copied unchanged)"]'
expect_json "$T/stdout" 'j["exit_code"]' '1'
# excluded: copied without a look
expect_exit 0 "$N" clean -q f8.safetensors -o f8x.out --nonfinite zero --exclude q
expect_stdout_lacks "warning"
# the output really holds them (the copy is byte for byte)
expect_exit 1 "$N" scan -q f8.out
# complex parts: one Inf in c.real
expect_exit 1 "$N" clean c.npz -o c.out.npz --nonfinite zero --no-samples
expect_stdout_contains "    warning: 1 NaN/Inf value(s) left as they are (copied unchanged)"
pass
