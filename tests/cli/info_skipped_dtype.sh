#!/bin/bash
# Regression (h13 new-user run): `nanaudit info` printed the internal
# placeholder "INVALID" in the dtype column of a non-numeric member (an
# .npz with a bytes array, as scipy's test files have), where `scan`
# prints "?". Both now print "?" and info still says why it is skipped.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" -c '
import numpy as np, sys
np.savez(sys.argv[1], x=np.arange(4, dtype="<f8"), v=np.array(b"abc"))
' "$T/m.npz" || fail "python"

expect_exit 0 "$NANAUDIT" info "$T/m.npz"
expect_stdout_lacks "INVALID"
expect_stdout_contains "  x       F64    [4]    32"
expect_stdout_contains "  v       ?      []     3  (skipped: dtype |S3 is not numeric data (string, bytes, void or datetime))"

expect_exit 0 "$NANAUDIT" scan "$T/m.npz"
expect_stdout_contains "skipped: v: dtype |S3 is not numeric data"

# A tensor info lists but cannot audit says why (it said "(not auditable)"
# with shape [] for a rank-65 safetensors tensor, sixteenth round): scan
# has the error line, info (which judges no data) exit 0.
"$NA_PYTHON" -c '
import json, struct, sys
h = {"a": {"dtype": "F32", "shape": [1] * 65, "data_offsets": [0, 4]},
     "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}
b = json.dumps(h).encode()
b += b" " * (-len(b) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(b)) + b + bytes(8))
' "$T/r65.safetensors" || fail "python"
expect_exit 0 "$NANAUDIT" info "$T/r65.safetensors"
expect_stdout_contains "  a       F32    []     4  (not auditable: a: 65 dimensions, at most 64 are supported (its shape is not listed))"
expect_exit 3 "$NANAUDIT" scan "$T/r65.safetensors"
expect_stderr_contains "r65.safetensors: a: 65 dimensions, at most 64 are supported (its shape is not listed)"
pass
