#!/bin/bash
# detect_kinds.sh - detection by content, not by name (issue 2, section 3):
# each file of tests/data/detect/ (see its README.md) and two real files
# (an HDF5 file with a 1024-byte user block, a netCDF-3 classic file),
# named on the command line, gives exit 3 and the one-line message that
# says what it really is; a good file beside them is still audited.
. "$(dirname "$0")/helpers.sh"
D="$NA_TEST_DATA/detect"
R="$NA_TEST_DATA/real"

# expect_kind FILE MESSAGE: exit 3, message on stderr and in the JSON.
expect_kind() {
    expect_exit 3 "$NANAUDIT" scan --format json "$1"
    expect_stderr_contains "nanaudit: $1: $2"
    cp "$T/stdout" "$T/k.json"
    expect_json "$T/k.json" 'j["files"][0]["status"]' '"error"'
    expect_json "$T/k.json" 'j["summary"]["exit_code"]' '3'
    got="$(json_get "$T/k.json" 'j["files"][0]["error"]')"
    want="$("$NA_PYTHON" -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$2")"
    case "$got" in "${want%\"}"*) ;; *) fail "$1: JSON error $got does not start with $want" ;; esac
}

expect_kind "$D/lfs-pointer.safetensors" \
    "Git LFS pointer: the real file (4400000000 bytes) was not downloaded"
expect_kind "$D/zip-other.safetensors" \
    "zip archive that is neither a PyTorch checkpoint (no DIR/data.pkl) nor a NumPy .npz (no .npy member)"
# a torch.save zip named .safetensors is a PyTorch checkpoint (an empty dict)
expect_exit 0 "$NANAUDIT" scan --format json "$D/zip-named.safetensors"
cp "$T/stdout" "$T/zn.json"
expect_json "$T/zn.json" 'j["files"][0]["format"]' '"pytorch"'
expect_json "$T/zn.json" 'j["files"][0]["tensors"]' '[]'
expect_kind "$D/empty.bin" "empty file (0 bytes)"
expect_kind "$D/unknown.bin" "unrecognised content (not safetensors, HDF5, NumPy .npy or .npz, PyTorch zip or pickle, gzip, netCDF-3, JSON or a Git LFS pointer; give --dtype to read raw data)"
expect_kind "$D/config.json" 'JSON file without a "weight_map" (not a sharded-checkpoint index)'
expect_kind "$D/json-brace-at-8.json" 'JSON file without a "weight_map"'
expect_kind "$D/gzip-no-dtype.bin.gz" "gzip-compressed file: give --dtype to audit it as raw data"
expect_kind "$R/netcdf/nc4py-ubyte-netcdf3.nc" "netCDF-3 (classic, 64-bit offset or CDF-5), not supported"
# HDF5 at offset 1024 (after a user block): audited when built with HDF5
# (issue 3), else refused with a message
rc=0
"$NANAUDIT" scan "$R/hdf5/hdfgroup-twithub513.h5" >"$T/stdout" 2>"$T/stderr" </dev/null || rc=$?
if [ "$rc" = 0 ]; then
    expect_stdout_contains "hdfgroup-twithub513.h5 (hdf5)"
else
    assert_eq "$rc" 3 "exit code for HDF5 without HDF5 support"
    expect_stderr_contains "HDF5 file, but this nanaudit was built without HDF5"
fi
# a safetensors file with an absurd header length is still safetensors:
# the safetensors reader explains (not "unrecognised content")
expect_exit 3 "$NANAUDIT" scan "$D/bad-length.safetensors"
expect_stderr_contains "1000000000"
expect_stderr_lacks "unrecognised"

# the others are still audited: a clean file beside the bad ones
make_st "$T/ok.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[2],"values":[1,2]}]}'
expect_exit 3 "$NANAUDIT" scan --format json "$D/zip-other.safetensors" "$T/ok.safetensors"
cp "$T/stdout" "$T/two.json"
expect_json "$T/two.json" '[f["status"] for f in j["files"]]' '["error", "ok"]'
expect_json "$T/two.json" 'j["files"][1]["tensors"][0]["elements"]' '2'

# safetensors files from the official writer whose header length's low
# bytes spell a pickle's protocol (640 = 80 02, 1152 = 80 04): still
# safetensors (scan, info, and clean's re-read of its own output)
"$NA_PYTHON" - "$T" <<'PY' || fail "making h*.safetensors"
import struct, sys
import numpy as np
from safetensors.numpy import save_file
for want in (640, 1152):
    for pad in range(2000):
        p = f"{sys.argv[1]}/h{want}.safetensors"
        save_file({"w": np.array([1, 2, np.nan, 4], np.float32)}, p, metadata={"k": "x" * pad})
        if struct.unpack("<Q", open(p, "rb").read(8))[0] == want:
            break
    else:
        sys.exit(f"no padding gives a {want}-byte header")
PY
for h in 640 1152; do
    expect_exit 1 "$NANAUDIT" scan "$T/h$h.safetensors"
    expect_stdout_contains "h$h.safetensors (safetensors)"
    expect_stdout_contains "1 NaN value (first at [2])"
done
expect_exit 0 "$NANAUDIT" info "$T/h640.safetensors"
expect_stdout_contains "h640.safetensors (safetensors, 1 tensor, 16 bytes of data)"

# a tar archive (webdataset shard; torch.save before PyTorch 0.4) named
# .pt: said so (round 43b: "unrecognised content"); in a folder under a
# name that does not claim data, a skipped entry
mkdir "$T/tar" && printf 'x' > "$T/tar/m"
tar -C "$T/tar" --format=ustar -cf "$T/old.pt" m
tar -C "$T/tar" --format=gnu -cf "$T/tar/shard-000.tar" m
expect_kind "$T/old.pt" "tar archive: not read (a webdataset shard, or a checkpoint of torch.save before PyTorch 0.4: load it with torch and save it again); its members are not audited"
cp "$NA_SRC/examples/clean.safetensors" "$T/tar/"
expect_exit 0 "$NANAUDIT" scan --format json "$T/tar"
expect_json "$T/stdout" '[(s["path"].rsplit("/", 1)[1], s["reason"][:12]) for s in j["skipped"]]' '[["m", "unrecognised"], ["shard-000.tar", "tar archive:"]]'

# a FIFO on the command line is an error, and nothing blocks on it
mkfifo "$T/pipe"
expect_exit 3 timeout 20 "$NANAUDIT" scan "$T/pipe"
expect_stderr_contains "not a regular file (FIFO)"
pass
