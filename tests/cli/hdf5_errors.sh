#!/usr/bin/env bash
# hdf5_errors.sh - HDF5 error paths (issue 3): each with its one-line
# message and exit code, and the run going on after them.
#  - a crash, an abort and a hang of the libhdf5 reader process (injected
#    with NANAUDIT_HDF5_FAULT, see formats/hdf5_child.c) cost that file
#    only: exit 3, "libhdf5 crashed reading this file: SIGSEGV";
#  - a missing filter names the filter (HDF5_PLUGIN_PATH points at an
#    empty folder, so an installed zstd plugin does not hide the case);
#  - malformed files and CVE reproducers: exit 3, no crash, no hang;
#  - netCDF-3 classic is recognised and refused;
#  - bad --missing / --hdf5-timeout values are usage errors (exit 2).
. "$(dirname "$0")/helpers.sh"
R="$NA_TEST_DATA/real"
H="$R/hdf5"
OK_FILE="$H/hdfgroup-tall.h5"

rc=0
"$NANAUDIT" scan "$OK_FILE" >/dev/null 2>&1 </dev/null || rc=$?
if [ "$rc" = 3 ]; then
    echo "SKIP $NA_TEST_NAME: this nanaudit was built without HDF5"
    exit 0
fi

export HDF5_PLUGIN_PATH="$T/no-plugins"
mkdir -p "$HDF5_PLUGIN_PATH"

# crash at open, then the next file is still audited
NANAUDIT_HDF5_FAULT=segv expect_exit 3 "$NANAUDIT" scan "$OK_FILE" "$R/safetensors/burn-multi_layer.safetensors"
expect_stderr_contains "hdfgroup-tall.h5: libhdf5 crashed reading this file: SIGSEGV"
expect_stdout_contains "burn-multi_layer.safetensors (safetensors)"
NANAUDIT_HDF5_FAULT=abort expect_exit 3 "$NANAUDIT" scan "$OK_FILE"
expect_stderr_contains "libhdf5 crashed reading this file: SIGABRT"
# crash while reading (chunked) data: that tensor and the ones after it
# are errors (contiguous datasets are mapped by nanaudit itself)
CHUNKED="$H/hdfgroup-tdset_idx.h5"
NANAUDIT_HDF5_FAULT=segv@read expect_exit 3 "$NANAUDIT" scan --format json "$CHUNKED"
expect_stderr_contains "/dset_btree: libhdf5 crashed reading this file: SIGSEGV"
cp "$T/stdout" "$T/crash.json"
expect_json "$T/crash.json" '[t["status"] for t in j["files"][0]["tensors"]]' \
    '["error", "error", "error"]'
expect_json "$T/crash.json" 'j["summary"]["exit_code"]' '3'
# a hang: stopped after --hdf5-timeout, in about that time
start=$(date +%s)
NANAUDIT_HDF5_FAULT=hang expect_exit 3 "$NANAUDIT" scan --hdf5-timeout 1 "$OK_FILE"
expect_stderr_contains "libhdf5 did not answer within 1 s (--hdf5-timeout): reader stopped"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "--hdf5-timeout 1 took too long"
NANAUDIT_HDF5_FAULT=hang@read expect_exit 3 "$NANAUDIT" scan --hdf5-timeout 0.5 "$CHUNKED"
expect_stderr_contains "/dset_btree: libhdf5 did not answer within 0.5 s (--hdf5-timeout): reader stopped"

# a filter libhdf5 does not have: named, exit 3, other datasets audited
expect_exit 3 "$NANAUDIT" scan "$H/hdfgroup-h5ex_d_zstd.h5"
expect_stderr_contains "/DS1: HDF5 filter 32015 (zstd) is not available in this libhdf5 (plugins are searched in HDF5_PLUGIN_PATH)"
# the text report names the dataset once (the message already starts with it)
expect_stdout_contains "  error: /DS1: HDF5 filter 32015 (zstd) is not available"
expect_stdout_lacks "/DS1: /DS1:"
expect_exit 3 "$NANAUDIT" scan --format json "$H/hdfgroup-tfilters.h5"
cp "$T/stdout" "$T/filters.json"
expect_json "$T/filters.json" \
    'sorted(t["name"] for t in j["files"][0]["tensors"] if t["status"] == "error")' \
    '["/external", "/myfilter"]'
expect_json "$T/filters.json" 'len([t for t in j["files"][0]["tensors"] if t["status"] == "ok"])' '13'
expect_stderr_contains "/myfilter: HDF5 filter 405 (named 'myfilter' in the file) is not available"
expect_stderr_contains "/external: external raw data file 'ext1.bin' (segment 0): No such file or directory"

# unsupported float layout: fail closed
expect_exit 3 "$NANAUDIT" scan "$H/hdfgroup-t128bit_float.h5"
expect_stderr_contains "/DS1: unsupported float type: 16 bytes, sign bit 127, 11 exponent bits (bias 1023), 116 mantissa bits: not exactly convertible to F64"

# files libhdf5 refuses: one line naming the cause
expect_exit 3 "$NANAUDIT" scan "$H/jhdf-test_byteshuffle_compressed_datasets_latest.hdf5"
expect_stderr_contains "libhdf5 cannot open the file: file is already open for write"
expect_exit 3 "$NANAUDIT" scan "$H/malformed/scigolib-test_v1.12_simple.h5"
expect_stderr_contains "libhdf5 cannot open the file: bad superblock version number"
expect_exit 3 "$NANAUDIT" scan "$H/malformed/hdfgroup-cve_2020_10810.h5"
expect_stderr_contains "libhdf5 cannot open the file: ran off end of input buffer while decoding"
expect_exit 3 "$NANAUDIT" scan "$H/malformed/hdfgroup-tCVE_2018_11206_fill_new.h5"
expect_stderr_contains "/dset1: cannot open the dataset: fill size exceeds buffer size"
# every malformed file: exit 3 or 0, one run, no crash of nanaudit, no hang
for f in "$H"/malformed/* "$R"/netcdf/malformed/*; do
    rc=0
    timeout 60 "$NANAUDIT" scan --hdf5-timeout 20 "$f" >"$T/stdout" 2>"$T/stderr" </dev/null || rc=$?
    case "$rc" in 0|3) ;; *) fail "$f: exit $rc" ;; esac
    grep -q "AddressSanitizer\|runtime error" "$T/stderr" && fail "$f: sanitizer report"
done

# netCDF-3 classic
expect_exit 3 "$NANAUDIT" scan "$R/netcdf/ncc-ref_nctest_classic-netcdf3.nc"
expect_stderr_contains "netCDF-3 (classic, 64-bit offset or CDF-5), not supported"

# usage errors, before any input is opened
expect_exit 2 "$NANAUDIT" scan --missing maybe "$OK_FILE"
expect_stderr_contains "--missing: 'maybe' is not auto or none"
expect_exit 2 "$NANAUDIT" scan --hdf5-timeout -1 "$OK_FILE"
expect_stderr_contains "--hdf5-timeout: '-1' is not 0 (no limit) or a number of seconds from 0.001 to 86400"
expect_exit 0 "$NANAUDIT" scan --hdf5-timeout 0 --missing none "$OK_FILE"
# regression (tester19): 0.000001 was taken, rounded to 0 ms, and every
# file failed "did not answer within 0 s"; the limit counts milliseconds
expect_exit 2 "$NANAUDIT" scan --hdf5-timeout 0.000001 "$OK_FILE"
expect_stderr_contains "--hdf5-timeout: '0.000001' is not 0 (no limit) or a number of seconds from 0.001 to 86400"
expect_exit 2 "$NANAUDIT" scan --hdf5-timeout 86400.5 "$OK_FILE"
# the smallest limit is accepted (on a file that starts no libhdf5 process)
expect_exit 0 "$NANAUDIT" scan --hdf5-timeout 0.001 "$R/safetensors/burn-multi_layer.safetensors"

# info: the tree with layout, chunks, filters, fill values; notes for links
expect_exit 0 "$NANAUDIT" info "$OK_FILE" "$H/hdfgroup-tbigdims.h5"
expect_stdout_contains "note: /g1/g1.2/extlink: external link to somefile:somepath, not followed"
expect_stdout_contains "note: /g1/g1.2/g1.2.1/slink: dangling soft link to somevalue"
expect_stdout_contains "/dset4gb  I8     [4294967306]  4294967306"
expect_stdout_contains "chunked [1024] 2/4194305 chunks allocated fill=0"
expect_exit 0 "$NANAUDIT" info "$H/hdfgroup-tfilters.h5"
# (why, since info has no stderr line for an unsupported one)
expect_stdout_contains "/myfilter          I32    [20,10]  0  (not auditable: /myfilter: HDF5 filter 405 (named 'myfilter' in the file) is not available in this libhdf5 (plugins are searched in HDF5_PLUGIN_PATH))"
expect_stdout_contains "chunked [10,5] 4/4 chunks allocated filters=shuffle(2),szip(4),deflate(1),fletcher32(3),nbit(5) fill=0(default)"

# groups nested more than 64 deep: an error of their own, not a note
# (seventeenth fresh-user round: a NaN below passed, exit 0); clean
# refuses them unless excluded, then copies them whole
"$NA_PYTHON" - "$T/deep.h5" <<'PY' || fail "making deep.h5"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f["top"] = np.arange(3.0)
    g = f
    for i in range(65):
        g = g.create_group("g")
    g["x"] = np.array([np.nan, 1.0])
PY
G=$(printf '/g%.0s' $(seq 65))
expect_exit 3 "$NANAUDIT" scan "$T/deep.h5"
expect_stderr_contains "nanaudit: $T/deep.h5: $G: groups nested more than 64 deep: not walked"
expect_exit 3 "$NANAUDIT" clean "$T/deep.h5" -o "$T/deep.c.h5"
[ ! -e "$T/deep.c.h5" ] || fail "deep.c.h5 written"
expect_exit 0 "$NANAUDIT" clean "$T/deep.h5" -o "$T/deep.c.h5" --exclude "$G"
"$NA_PYTHON" -c "
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as f:
    assert np.isnan(f['$G/x'][0]) and f['$G/x'][1] == 1" "$T/deep.c.h5" || fail "deep group not copied"

# a datatype message whose bit fields do not fit the element (one damaged
# byte) was converted anyway: made-up values, the NaN gone, exit 0
# (seventeenth fresh-user round); h5py (newer HDF5) refuses such a type.
# (A valid nbit float places its fields inside offset..offset+precision:
# hdfgroup-be_data.h5, test_hdf5.py.)
"$NA_PYTHON" - "$T" <<'PY' || fail "making damaged types"
import sys, h5py, numpy as np
F4 = bytes([0x11, 0x20, 0x1f, 0x00, 4, 0, 0, 0, 0, 0, 0x20, 0, 0x17, 0x08, 0x00, 0x17, 0x7f, 0, 0, 0])
I4 = bytes([0x10, 0x08, 0x00, 0x00, 4, 0, 0, 0, 0, 0, 0x20, 0])
def mk(name, pat, at, val, data):
    path = f"{sys.argv[1]}/{name}.h5"
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("x", data=data)
    b = bytearray(open(path, "rb").read())
    assert b.count(pat) == 1, name
    b[b.find(pat) + at] = val
    open(path, "wb").write(b)
f4 = np.array([1.0, 2.0, np.nan, 5.0], "<f4")
mk("f_exp", F4, 12, 0x20, f4)   # exponent at bit 32 of a 32-bit float
mk("f_man", F4, 14, 154, f4)    # mantissa at bit 154
mk("f_sign", F4, 2, 153, f4)    # sign bit 153
mk("f_overlap", F4, 2, 25, f4)  # sign bit inside the exponent
mk("i_off", I4, 8, 0x10, np.array([-5, 0, 7], "<i4"))  # bit offset 16 + 32 bits
PY
for c in "f_exp:float datatype: exponent bits 32..40 outside its precision, bits 0..32" \
         "f_man:float datatype: mantissa bits 154..177 outside its precision, bits 0..32" \
         "f_sign:float datatype: sign bit 153 outside its precision, bits 0..32" \
         "f_overlap:float datatype: its sign, exponent and mantissa fields overlap" \
         "i_off:integer datatype: bit offset 16 and precision 32 outside its 4 bytes"; do
    expect_exit 3 "$NANAUDIT" scan "$T/${c%%:*}.h5"
    assert_eq "$(cat "$T/stderr")" "nanaudit: $T/${c%%:*}.h5: /x: damaged ${c#*:}" "${c%%:*}"
done

# a damaged datatype size (an I32 of 0xFF000004 bytes, a compound of
# 0xFF000008): libhdf5 allocated one element, 4.2 GB and 12 s, before it
# said "addr overflow" (seventeenth fresh-user round). More than 16 MiB per
# element is an error of its own now, found before any read; clean
# --exclude still copies the dataset unchanged.
"$NA_PYTHON" - "$T" <<'PY' || fail "making damaged sizes"
import sys, h5py, numpy as np
def mk(name, pat, size, data):
    path = f"{sys.argv[1]}/{name}.h5"
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("x", data=data)
        f.create_dataset("y", data=np.array([1.0, np.nan]))
    b = bytearray(open(path, "rb").read())
    assert b.count(pat) == 1, name
    i = b.find(pat) + 4
    b[i:i + 4] = size.to_bytes(4, "little")
    open(path, "wb").write(b)
mk("wide_i4", bytes([0x10, 0x08, 0, 0, 4, 0, 0, 0, 0, 0, 0x20, 0]), 0xFF000004,
   np.arange(1000, dtype="<i4"))
mk("wide_cmp", bytes([0x16, 2, 0, 0, 8, 0, 0, 0]), 0xFF000008,
   np.zeros(100, [("a", "<f4"), ("b", "<f4")]))
PY
for c in wide_i4:4278190084 wide_cmp:4278190088; do
    f="$T/${c%%:*}.h5"
    "$NA_PYTHON" - "$NANAUDIT" "$f" "${c#*:}" <<'PY' || fail "scan of ${c%%:*}"
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "scan", sys.argv[2]], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB
want = (f"nanaudit: {sys.argv[2]}: /x: datatype of {sys.argv[3]} bytes per element: more "
        "than 16 MiB (a damaged size, or elements too large to audit)\n")
assert r.returncode == 3, r.returncode
assert r.stderr == want, r.stderr
assert "FAIL /y: 1 NaN value" in r.stdout, r.stdout
assert peak < 500_000, f"peak RSS {peak} KiB"
PY
    expect_exit 3 "$NANAUDIT" clean "$f" -o "$T/wide.c.h5" --nonfinite zero
    expect_stderr_contains "/x: datatype of ${c#*:} bytes per element: more than 16 MiB (a damaged size, or elements too large to audit); clean cannot read it, nothing written"
    [ ! -e "$T/wide.c.h5" ] || fail "written"
    expect_exit 0 "$NANAUDIT" clean "$f" -o "$T/wide.c.h5" --nonfinite zero --exclude /x
    expect_stdout_contains "/x: copied: datatype of "
    "$NA_PYTHON" -c "
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    assert list(f['y'][:]) == [1.0, 0.0], f['y'][:]
    assert list(f) == ['x', 'y'], list(f)  # newer HDF5 refuses to open x" "$T/wide.c.h5" ||
        fail "${c%%:*} not copied"
    rm -f "$T/wide.c.h5"
done
# an external link to a file libhdf5 would open: h5py reads the target's
# NaN through it, nanaudit does not follow it, so the link is an error,
# exit 3 (round 31a: a note, exit 0); to a file that is not there, a note
mkdir -p "$T/ext"
"$NA_PYTHON" - "$T/ext" <<'PY' || fail "making the external link files"
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/nan.h5", "w") as f:
    f["d"] = np.array([1, np.nan], np.float32)
with h5py.File(f"{d}/main.h5", "w") as f:
    f["ok"] = np.ones(4, np.float32)
    f["w"] = h5py.ExternalLink("nan.h5", "/d")
    f["gone"] = h5py.ExternalLink("missing.h5", "/d")
PY
expect_exit 3 "$NANAUDIT" scan "$T/ext/main.h5"
expect_stderr_contains "main.h5: /w: external link to nan.h5:/d, which nanaudit does not follow (h5py reads through it): audit nan.h5 itself"
expect_stdout_contains "note: /gone: external link to missing.h5:/d, not followed"
expect_exit 1 "$NANAUDIT" scan -q "$T/ext/nan.h5"
pass
