#!/bin/bash
# Flags not covered elsewhere: raw input (--dtype --shape --endian
# --offset), --max-header-bytes, --progress / --no-progress, --threads.
. "$(dirname "$0")/helpers.sh"

# raw: 24 big-endian float32 0..23 as 2x3x4; NaN at [1,2,3] (flat 23)
"$NA_PYTHON" -c '
import numpy as np, sys
a = np.arange(24, dtype=">f4"); a[23] = np.nan
a.tofile(sys.argv[1])
b = np.array([1, np.nan, 3, np.inf], dtype="<f2")
open(sys.argv[2], "wb").write(b"HEADER!!" + b.tobytes())
' "$T/be.bin" "$T/off.bin" || fail "python"
expect_exit 1 "$NANAUDIT" scan --format json --dtype F32 --endian big --shape 2x3x4 "$T/be.bin"
cp "$T/stdout" "$T/be.json"
B='j["files"][0]["tensors"][0]'
expect_json "$T/be.json" 'j["files"][0]["format"]' '"raw"'
expect_json "$T/be.json" "[$B[k] for k in ('dtype','byte_order','shape','elements','nan','min','max','mean')]" \
    '["F32", "big", [2, 3, 4], 24, 1, 0.0, 22.0, 11.0]'
expect_json "$T/be.json" "$B['nan_locations']" '[[1, 2, 3]]'
# the same bytes read little-endian are other numbers: the flag matters
expect_exit 0 "$NANAUDIT" scan --format json --dtype F32 --endian little --shape 4,6 --fail-on none "$T/be.bin"
cp "$T/stdout" "$T/le.json"
expect_json "$T/le.json" "[$B[k] for k in ('byte_order','shape')]" '["little", [4, 6]]'
expect_json "$T/le.json" "$B['max'] != 22.0" 'true'
# default shape: 1-D from the size
expect_exit 1 "$NANAUDIT" scan --format json --dtype F32 --endian big "$T/be.bin"
cp "$T/stdout" "$T/1d.json"
expect_json "$T/1d.json" "$B['shape']" '[24]'
expect_exit 3 "$NANAUDIT" scan --dtype F32 --shape 5x5 "$T/be.bin"
expect_stderr_contains "nanaudit: $T/be.bin: "
# --offset skips a header
expect_exit 1 "$NANAUDIT" scan --format json --dtype F16 --offset 8 "$T/off.bin"
cp "$T/stdout" "$T/off.json"
expect_json "$T/off.json" "[$B[k] for k in ('elements','nan','pos_inf','min','max')]" '[4, 1, 1, 1.0, 3.0]'
expect_exit 0 "$NANAUDIT" info --dtype F16 --offset 8 --shape 2x2 "$T/off.bin"
expect_stdout_contains "(raw, 1 tensor, 8 bytes of data)"
# without --dtype a raw file is not data
expect_exit 3 "$NANAUDIT" scan "$T/be.bin"

# --max-header-bytes: a 2000-byte header is refused under a 1000-byte cap
make_st "$T/big.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[1],"values":[1]}],"pad":2000}'
expect_exit 3 "$NANAUDIT" scan --max-header-bytes 1000 "$T/big.safetensors"
expect_stderr_contains "nanaudit: $T/big.safetensors: "
expect_stderr_contains "1000"
expect_exit 0 "$NANAUDIT" scan --max-header-bytes 5000 "$T/big.safetensors"
expect_exit 3 "$NANAUDIT" info --max-header-bytes=1000 "$T/big.safetensors"
expect_exit 0 "$NANAUDIT" info --max-header-bytes=5000 "$T/big.safetensors"

# progress: never on a pipe by default; --progress forces; --no-progress wins
make_st "$T/p.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[1000],"fill":1}]}'
expect_exit 0 "$NANAUDIT" scan "$T/p.safetensors"
expect_stderr_empty
expect_exit 0 "$NANAUDIT" scan --progress "$T/p.safetensors"
expect_stderr_contains "nanaudit: 0.0 MB / 0.0 MB"
expect_stderr_contains "GB/s  ETA"
expect_stdout_lacks "GB/s"
expect_exit 0 "$NANAUDIT" scan --progress --no-progress "$T/p.safetensors"
expect_stderr_empty

# --threads: any count gives the same report (also checked in cli_json.sh)
expect_exit 1 "$NANAUDIT" scan --threads 1 --dtype F32 --endian big "$T/be.bin"
cp "$T/stdout" "$T/t1.txt"
expect_exit 1 "$NANAUDIT" scan --threads 3 --dtype F32 --endian big "$T/be.bin"
cmp -s "$T/stdout" "$T/t1.txt" || fail "--threads changed the text report"
pass
