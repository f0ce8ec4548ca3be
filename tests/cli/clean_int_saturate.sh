#!/bin/bash
# An integer --out-dtype saturates values beyond its range to its bounds
# (issue 4: "values that overflow it are counted and reported"), for every
# width: I8 200 was written as -1 (the low byte of INT64_MAX) with
# "written (verified)". Reference: numpy's rint, then clip to the type.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c "
import numpy as np
np.save('s.npy', np.array([[1.0], [3e9], [-3e9], [2.5], [-7.5], [1e30]], np.float32))" || fail "input"
N="$NANAUDIT"
for dt in I8 U8 I16 U16 I32 U32 I64 U64; do
    expect_exit 0 "$N" clean -q s.npy --out-dtype $dt -o "s.$dt.npy"
    "$NA_PYTHON" - "$dt" <<'PY' || fail "$dt values"
import sys, numpy as np
dt = {"I8": np.int8, "U8": np.uint8, "I16": np.int16, "U16": np.uint16, "I32": np.int32,
      "U32": np.uint32, "I64": np.int64, "U64": np.uint64}[sys.argv[1]]
x = np.load("s.npy").astype(np.float64).ravel()
info = np.iinfo(dt)
r = np.rint(x)
want = [info.max if v >= float(info.max) else info.min if v <= float(info.min) else int(v) for v in r]
got = np.load(f"s.{sys.argv[1]}.npy").ravel()
assert got.dtype == dt and got.tolist() == want, (sys.argv[1], got.tolist(), want)
PY
done
expect_exit 0 "$N" clean s.npy --out-dtype I8 -o r.npy --format json
expect_json "$T/stdout" 'j["tensors"][0]["overflow"]' '3'
expect_json "$T/stdout" '[j["tensors"][0]["after"][k] for k in ("min", "max")]' '[-128.0, 127.0]'
pass
