#!/bin/bash
# clean_raw_output_name.sh - clean of raw data writes the data alone,
# uncompressed, whatever OUT's name (man page, CLEAN). Round 37b: a gzip
# input cleaned to OUT.gz became plain data under a .gz name, and the
# --offset prefix and the trailer after --length vanished, without a word
# at run time. Now each gets one warning line; the bytes are as before.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c '
import numpy as np, gzip
x = np.arange(24, dtype="<f4"); x[5] = np.nan
open("d.bin", "wb").write(b"HEADER-13-BYT" + x.tobytes() + b"TRAILER")
open("d.bin.gz", "wb").write(gzip.compress(open("d.bin", "rb").read()))' || fail "inputs"
expect_exit 0 "$NANAUDIT" clean --dtype F32 --shape 24 --offset 13 --length 96 --nonfinite zero d.bin.gz -o o.bin.gz --report o.json
expect_stderr_contains "nanaudit: warning: o.bin.gz: named like a gzip file, but clean writes it uncompressed"
expect_stderr_contains "nanaudit: warning: o.bin.gz: holds only the data: any bytes of the input before --offset or after --length are not copied"
# the --report has them too (round 39a: stderr only, where a CI job does not look)
expect_json o.json 'j["warnings"]' '["o.bin.gz: named like a gzip file, but clean writes it uncompressed", "o.bin.gz: holds only the data: any bytes of the input before --offset or after --length are not copied"]'
expect_exit 0 "$NA_PYTHON" -c '
import numpy as np
y = np.fromfile("o.bin.gz", "<f4"); x = np.arange(24, dtype="<f4"); x[5] = 0
assert np.array_equal(x, y), y'
# a plain name and no prefix: no warning
expect_exit 0 "$NANAUDIT" clean --dtype F32 --nonfinite zero o.bin.gz -o p.bin --report p.json
expect_stderr_lacks "warning"
expect_json p.json 'j["warnings"]' '[]'
# --length up to the end leaves nothing out: no warning (round 39a); one
# byte short, or a gzip input (its size is not its data's), does
cp p.bin q.bin
expect_exit 0 "$NANAUDIT" clean --dtype F32 --length 96 --nonfinite zero q.bin -o q2.bin
expect_stderr_lacks "warning"
expect_exit 0 "$NANAUDIT" clean --dtype U8 --length 95 q.bin -o q3.bin
expect_stderr_contains "nanaudit: warning: q3.bin: holds only the data"
"$NA_PYTHON" -c 'import gzip; open("q.bin.gz", "wb").write(gzip.compress(open("q.bin", "rb").read()))'
expect_exit 0 "$NANAUDIT" clean --dtype F32 --length 96 q.bin.gz -o q4.bin
expect_stderr_contains "nanaudit: warning: q4.bin: holds only the data"
pass
