#!/bin/bash
# threads_identical.sh - the JSON report is byte-identical for --threads
# 1, 2, 3 and 16 (DESIGN.md: partial statistics merged in a fixed order),
# on every test file: all of tests/data (safetensors, shards and indexes,
# HDF5, NumPy, PyTorch, the malformed corpus, real files), the raw
# files read with --dtype, and generated tensors large enough to be split
# over many blocks and windows (NaN, Inf, subnormals and outliers spread
# through them, in F32, F16, BF16, F64 and a big-endian raw file), where a
# thread-dependent merge would show. Exit codes must agree too.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T/big.safetensors" "$T/big_be.f64" <<'PY' || fail "writing the big files"
import json, struct, sys
import numpy as np, ml_dtypes
rng = np.random.default_rng(7)
def noisy(n, dt):
    x = rng.normal(3.0, 2.0, n)
    x[rng.integers(0, n, 40)] = np.nan
    x[rng.integers(0, n, 7)] = np.inf
    x[rng.integers(0, n, 5)] = -np.inf
    x[rng.integers(0, n, 30)] = 1e4          # outliers at K = 6
    x[rng.integers(0, n, 11)] = 1e-40        # subnormal in F32
    return x.astype(dt)
ts = [("f32", "F32", noisy(1_500_001, "<f4")), ("f16", "F16", noisy(600_000, "<f2")),
      ("bf16", "BF16", noisy(300_007, ml_dtypes.bfloat16)), ("f64", "F64", noisy(400_000, "<f8"))]
hdr, off, blobs = {}, 0, []
for name, dt, a in ts:
    b = a.tobytes()
    hdr[name] = {"dtype": dt, "shape": [len(a)], "data_offsets": [off, off + len(b)]}
    off += len(b)
    blobs.append(b)
h = json.dumps(hdr).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
noisy(700_001, ">f8").tofile(sys.argv[2])
PY

# Every file of tests/data, four times over (hdfgroup-tbigdims.h5's 4 GiB
# dataset too: its unallocated chunks are counted, not read).
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find "$NA_TEST_DATA" -type f ! -name '*.expect' ! -name '*.md' -print0 | sort -z)

# run_all N: the three runs for one thread count, into $T/tN.*
run_all() {
    local n="$1" rc
    rc=0
    "$NANAUDIT" scan --format json --threads "$n" --max-locations 3 \
        "${files[@]}" "$T/big.safetensors" >"$T/t$n.data.json" 2>/dev/null </dev/null || rc=$?
    echo "$rc" >"$T/t$n.rc"
    rc=0
    "$NANAUDIT" scan --format json --threads "$n" --dtype F64 --endian big \
        "$T/big_be.f64" >"$T/t$n.raw.json" 2>/dev/null </dev/null || rc=$?
    echo "$rc" >>"$T/t$n.rc"
    rc=0
    "$NANAUDIT" scan --format json --threads "$n" --dtype F32 \
        "$NA_TEST_DATA"/real/raw >"$T/t$n.raw2.json" 2>/dev/null </dev/null || rc=$?
    echo "$rc" >>"$T/t$n.rc"
}

run_all 1
# the runs did audit something: many files, the big tensors, findings
expect_json "$T/t1.data.json" 'len(j["files"]) > 100' 'true'
expect_json "$T/t1.data.json" '[t["elements"] for f in j["files"] if f["path"].endswith("big.safetensors") for t in f["tensors"]]' \
    '[1500001, 600000, 300007, 400000]'
expect_json "$T/t1.raw.json" 'j["files"][0]["tensors"][0]["outliers"]["count"] > 0' 'true'
for n in 2 3 16; do
    run_all "$n"
    for k in data raw raw2; do
        cmp -s "$T/t1.$k.json" "$T/t$n.$k.json" ||
            fail "--threads $n changed the $k report: $(diff "$T/t1.$k.json" "$T/t$n.$k.json" | head -5)"
    done
    cmp -s "$T/t1.rc" "$T/t$n.rc" || fail "--threads $n changed the exit codes"
done
pass
