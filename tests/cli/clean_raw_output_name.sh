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
expect_exit 0 "$NANAUDIT" clean --dtype F32 --shape 24 --offset 13 --length 96 --nonfinite zero d.bin.gz -o o.bin.gz
expect_stderr_contains "nanaudit: warning: o.bin.gz: named like a gzip file, but clean writes it uncompressed"
expect_stderr_contains "nanaudit: warning: o.bin.gz: holds only the data: any bytes of the input before --offset or after --length are not copied"
expect_exit 0 "$NA_PYTHON" -c '
import numpy as np
y = np.fromfile("o.bin.gz", "<f4"); x = np.arange(24, dtype="<f4"); x[5] = 0
assert np.array_equal(x, y), y'
# a plain name and no prefix: no warning
expect_exit 0 "$NANAUDIT" clean --dtype F32 --nonfinite zero o.bin.gz -o p.bin
expect_stderr_lacks "warning"
pass
