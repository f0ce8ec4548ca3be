#!/usr/bin/env bash
# hdf5_inflate_errors.sh - a corrupt deflate chunk (issue 3, parallel
# decompression, formats/hdf5_inflate.c): the chunks nanaudit inflates
# itself (libdeflate when the build has it, zlib otherwise; zlib's message
# either way) and libhdf5's own H5Dread path (NANAUDIT_HDF5_SERIAL=1) both
# make that dataset an error, exit 3, one line naming the dataset and the
# chunk; the other datasets and files are still audited.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
F="$T/corrupt.h5"
"$NA_PYTHON" - "$F" <<'PY' || fail "writing $F with h5py"
import sys
import h5py
import numpy as np
p = sys.argv[1]
with h5py.File(p, "w") as f:
    f.create_dataset("bad", data=np.arange(40000, dtype="<f4"), chunks=(4000,),
                     compression="gzip")
    f.create_dataset("good", data=np.arange(40000, dtype="<f4"), chunks=(4000,),
                     compression="gzip", shuffle=True)
with h5py.File(p, "r") as f:
    ci = f["bad"].id.get_chunk_info(1)
b = bytearray(open(p, "rb").read())
for k in range(20, 60):  # inside chunk 1's deflate stream, past its header
    b[ci.byte_offset + k] ^= 0x5A
open(p, "wb").write(bytes(b))
PY
ST="$NA_TEST_DATA/real/safetensors/burn-multi_layer.safetensors"
expect_exit 3 "$NANAUDIT" scan --format json "$F" "$ST"
cp "$T/stdout" "$T/par.json"
expect_stderr_contains "corrupt.h5: /bad: chunk 1: deflate: data error (0 of 16000 bytes)"
expect_json "$T/par.json" '[t["status"] for t in j["files"][0]["tensors"]]' '["error", "ok"]'
expect_json "$T/par.json" 'j["files"][0]["tensors"][1]["max"]' '39999.0'
expect_json "$T/par.json" 'j["files"][1]["status"]' '"ok"'
NANAUDIT_HDF5_SERIAL=1 expect_exit 3 "$NANAUDIT" scan "$F"
expect_stderr_contains "corrupt.h5: /bad: reading elements 0..39999 failed: chunk at [4000]: its 4263 stored bytes are not a whole zlib stream ("
[ "$(wc -l <"$T/stderr")" = 1 ] || fail "more than one error line: $(cat "$T/stderr")"
pass
