#!/bin/bash
# raw_gzip_errors.sh - a gzip-compressed raw file that is corrupt is an
# error (exit 3) whose message starts "gzip: " and names zlib's message;
# a truncated file, a bad CRC, an unknown method and trailing garbage each
# get their own message; a good file in the same run is still audited.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T" <<'PY' || fail "generating the gzip files"
import gzip, sys
import numpy as np
T = sys.argv[1]
z = gzip.compress(np.arange(5000, dtype="<f4").tobytes(), mtime=0)
open(f"{T}/good.gz", "wb").write(z)
open(f"{T}/trunc.gz", "wb").write(z[: len(z) // 2])
crc = bytearray(z); crc[-8] ^= 0xFF
open(f"{T}/crc.gz", "wb").write(bytes(crc))
cm = bytearray(z); cm[2] = 9          # RFC 1952: CM must be 8 (deflate)
open(f"{T}/method.gz", "wb").write(bytes(cm))
open(f"{T}/tail.gz", "wb").write(z + b"junk")
open(f"{T}/tail.len", "w").write(str(len(z)))
PY

expect_exit 3 "$NANAUDIT" scan --dtype F32 "$T/trunc.gz"
expect_stderr_contains "nanaudit: $T/trunc.gz: gzip: unexpected end of file (the compressed data is truncated)"
expect_exit 3 "$NANAUDIT" scan --dtype F32 "$T/crc.gz"
expect_stderr_contains "gzip: incorrect data check"
expect_exit 3 "$NANAUDIT" scan --dtype F32 "$T/method.gz"
expect_stderr_contains "gzip: unknown compression method"
expect_exit 3 "$NANAUDIT" scan --dtype F32 "$T/tail.gz"
expect_stderr_contains "gzip: trailing garbage after the compressed data (at byte $(cat "$T/tail.len"))"

expect_exit 3 "$NANAUDIT" scan --format json --dtype F32 "$T/crc.gz" "$T/good.gz"
cp "$T/stdout" "$T/r.json"
expect_json "$T/r.json" '[f["status"] for f in j["files"]]' '["error", "ok"]'
expect_json "$T/r.json" 'j["files"][1]["tensors"][0]["elements"]' '5000'
expect_json "$T/r.json" 'j["files"][1]["tensors"][0]["max"]' '4999.0'
pass
