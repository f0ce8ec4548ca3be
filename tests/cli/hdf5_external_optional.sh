#!/bin/bash
# hdf5_external_optional.sh - two HDF5 storage cases libhdf5 reads its own
# way (round 41a). External storage (H5Pset_external, h5py's external=):
# a raw file shorter than its segment read as zeros, audited "ok", and a
# missing one failed without its name; both are now exit 3 naming the
# file. An optional filter (H5Z_FLAG_OPTIONAL) this libhdf5 lacks was
# refused up front, though every chunk written without it skipped it and
# h5py reads them; now it is read, as h5py does.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making the inputs"
import h5py
import numpy as np
x = np.arange(99, dtype="<f4").reshape(33, 3) + 0.5
with h5py.File("ext.h5", "w") as f:
    f.create_dataset("e", shape=(33, 3), dtype="<f4", external=[("ext.raw", 0, h5py.h5f.UNLIMITED)])
    f["e"][...] = x
    # two segments: 40 values in a.raw from byte 16, the rest in b.raw
    f.create_dataset("s", shape=(99,), dtype="<f4",
                     external=[("a.raw", 16, 160), ("b.raw", 0, h5py.h5f.UNLIMITED)])
    f["s"][...] = x.ravel()
np.save("x.npy", x)
with h5py.File("opt.h5", "w") as f:
    sp = h5py.h5s.create_simple((300, 3))
    pl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    pl.set_chunk((100, 3))
    pl.set_filter(40000, h5py.h5z.FLAG_OPTIONAL, (1, 2, 3))  # no such filter here
    pl.set_deflate(4)
    h5py.h5d.create(f.id, b"opt", h5py.h5t.IEEE_F32LE, sp, dcpl=pl)
    y = np.random.default_rng(0).normal(size=(300, 3)).astype("<f4"); y[5, 1] = np.nan
    f["opt"][...] = y
    np.save("y.npy", y)
# the first chunk skipped the optional filter (mask bit 0: as h5py's lzf
# skips a chunk it cannot shrink), the second went through it
with h5py.File("opt2.h5", "w") as f:
    sp = h5py.h5s.create_simple((200,))
    pl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    pl.set_chunk((100,))
    pl.set_filter(40000, h5py.h5z.FLAG_OPTIONAL, ())
    d = h5py.h5d.create(f.id, b"o", h5py.h5t.IEEE_F32LE, sp, dcpl=pl)
    d.write_direct_chunk((0,), np.ones(100, "<f4").tobytes(), filter_mask=1)
    d.write_direct_chunk((100,), b"through filter 40000", filter_mask=0)
PY
N="$NANAUDIT"

# external storage, whole: audited as h5py reads it
expect_exit 0 "$N" scan --format json ext.h5
expect_json "$T/stdout" '[(t["name"], t["status"], t["zeros"], t["mean"]) for t in j["files"][0]["tensors"]]' \
    '[["/e", "ok", 0, 49.5], ["/s", "ok", 0, 49.5]]'
# a raw file cut short: exit 3, naming it (libhdf5 read zeros: status ok)
cp ext.raw ext.full && truncate -s 100 ext.raw
expect_exit 3 "$N" scan ext.h5
expect_stderr_contains "ext.h5: /e: external raw data file 'ext.raw' (segment 0): 100 bytes, the data needs 396 from byte 0 (truncated? libhdf5 reads zeros)"
expect_exit 3 "$N" clean ext.h5 -o out.h5 --allow-misaligned
expect_stderr_contains "clean cannot read it, nothing written (--exclude '/e' copies it unchanged)"
[ ! -e out.h5 ] || fail "a cleaned copy of a file with a short external file"
# the second segment's file: named with its segment
cp ext.full ext.raw && truncate -s 200 b.raw
expect_exit 3 "$N" scan ext.h5
expect_stderr_contains "ext.h5: /s: external raw data file 'b.raw' (segment 1): 200 bytes, the data needs 236 from byte 0 (truncated? libhdf5 reads zeros)"
# missing: its name and why
rm b.raw
expect_exit 3 "$N" scan ext.h5
expect_stderr_contains "ext.h5: /s: external raw data file 'b.raw' (segment 1): No such file or directory"

# a file another process has open for writing (h5py 'r+'): HDF5's file
# lock refuses it; the line says so (round 41a: "errno 11" alone)
"$NA_PYTHON" -c '
import h5py, os, time
f = h5py.File("opt.h5", "r+")
open("held", "w").close()
time.sleep(60)' &
holder=$!
for i in $(seq 500); do [ -e held ] && break; sleep 0.02; done
rc=0
env -u HDF5_USE_FILE_LOCKING "$N" scan opt.h5 >"$T/stdout" 2>"$T/stderr" </dev/null || rc=$?
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
assert_eq "$rc" 3 "exit status of a locked file"
expect_stderr_contains "opt.h5: libhdf5 cannot open the file: "
expect_stderr_contains "(locked: another process has it open for writing; audit it when that one has closed it, or a copy)"

# an optional filter that is not here: read as h5py reads it
expect_exit 1 "$N" scan --format json opt.h5
"$NA_PYTHON" - "$T/stdout" <<'PY' || fail "opt.h5 against numpy"
import json, sys
import numpy as np
t = json.load(open(sys.argv[1]))["files"][0]["tensors"][0]
y = np.load("y.npy").astype(np.float64)
assert t["status"] == "ok" and t["nan"] == 1, t
assert abs(t["mean"] - np.nanmean(y)) < 1e-12 and abs(t["std"] - np.nanstd(y)) < 1e-12, t
PY
# ... unless a later chunk went through it: that read fails, and says why
# (round 43b: libhdf5's "can't open directory: .../plugins")
expect_exit 3 "$N" scan opt2.h5
expect_stderr_contains "opt2.h5: /o: reading elements 0..199 failed: HDF5 filter 40000 (unnamed) is not available in this libhdf5 (plugins are searched in HDF5_PLUGIN_PATH); a chunk was written through it"
expect_exit 0 "$N" clean opt.h5 -o opt.out.h5 --nonfinite zero
"$NA_PYTHON" -c '
import h5py, numpy as np
y = np.load("y.npy"); y[5, 1] = 0
with h5py.File("opt.out.h5") as f:
    assert np.array_equal(f["opt"][()], y)' || fail "the cleaned copy"
pass
