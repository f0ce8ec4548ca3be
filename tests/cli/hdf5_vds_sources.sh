#!/bin/bash
# A virtual dataset reads libhdf5's fill value wherever a source file or
# dataset cannot be opened, without an error: with its source moved away,
# scan said "all 100 values are zero", exit 0, and a NaN in the source
# passed the gate (tester round 21a, HIGH). A mapping whose source is
# missing is now an error of that dataset (exit 3) naming the source;
# sources are looked for where libhdf5 looks (HDF5_VDS_PREFIX, the file's
# directory, the working directory).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
mkdir -p d
"$NA_PYTHON" - <<'PY' || fail "making the files"
import h5py
import numpy as np
a = np.arange(100.0)
a[7] = np.nan
with h5py.File("d/src1.h5", "w") as f:
    f["data"] = a
with h5py.File("d/src2.h5", "w") as f:
    f["data"] = np.arange(100.0)
lay = h5py.VirtualLayout(shape=(100,), dtype="f8")
lay[:] = h5py.VirtualSource("src1.h5", "data", shape=(100,))
with h5py.File("d/vds.h5", "w") as f:
    f.create_virtual_dataset("v", lay, fillvalue=-5)
# two sources, the second under a dataset name the file lacks
lay = h5py.VirtualLayout(shape=(200,), dtype="f8")
lay[:100] = h5py.VirtualSource("src2.h5", "data", shape=(100,))
lay[100:] = h5py.VirtualSource("src2.h5", "nothere", shape=(100,))
with h5py.File("d/vds2.h5", "w") as f:
    f.create_virtual_dataset("w", lay)
# a source in the same file (".")
with h5py.File("d/same.h5", "w") as f:
    f["real"] = np.arange(10.0)
    lay = h5py.VirtualLayout(shape=(10,), dtype="f8")
    lay[:] = h5py.VirtualSource(".", "real", shape=(10,))
    f.create_virtual_dataset("view", lay)
    lay = h5py.VirtualLayout(shape=(10,), dtype="f8")
    lay[:] = h5py.VirtualSource(".", "gone", shape=(10,))
    f.create_virtual_dataset("broken", lay)
PY
# sources present: read through, from any working directory
expect_exit 1 "$NANAUDIT" scan d/vds.h5
expect_stdout_contains "/v: 1 NaN value (first at [7])"
(cd / && "$NANAUDIT" scan "$T/d/vds.h5" >/dev/null 2>&1; [ $? -eq 1 ]) || fail "scan from / did not find the source"
# the source moved away: an error, never the fill value
mv d/src1.h5 d/src1.moved.h5
expect_exit 3 "$NANAUDIT" scan d/vds.h5
expect_stdout_contains "error: /v: virtual dataset: its source file src1.h5 cannot be opened (libhdf5 would read the fill value in its place)"
expect_stdout_lacks "-5"
expect_exit 3 "$NANAUDIT" scan --fail-on none d/vds.h5
# found through HDF5_VDS_PREFIX where libhdf5 1.10 finds it: a list of
# directories, or one that starts with ${ORIGIN} (the file's directory);
# "${ORIGIN}" further in the list is not substituted, and libhdf5 reads
# the fill value: an error here too
mkdir -p d/moved && mv d/src1.moved.h5 d/moved/src1.h5
for p in "/nonexistent:$T/d/moved" '${ORIGIN}/moved'; do
    expect_exit 1 env HDF5_VDS_PREFIX="$p" "$NANAUDIT" scan d/vds.h5
    expect_stdout_contains "/v: 1 NaN value (first at [7])"
done
expect_exit 3 env HDF5_VDS_PREFIX='/nonexistent:${ORIGIN}/moved' "$NANAUDIT" scan d/vds.h5
expect_stdout_contains "its source file src1.h5 cannot be opened"
# a source file without the named dataset
expect_exit 3 "$NANAUDIT" scan d/vds2.h5
expect_stdout_contains "error: /w: virtual dataset: its source dataset nothere is not in src2.h5 (libhdf5 would read the fill value in its place)"
# the same file: the good mapping is read, the broken one is an error
expect_exit 3 "$NANAUDIT" scan d/same.h5 --format json
cp "$T/stdout" same.json
"$NA_PYTHON" - same.json <<'PY' || fail "same-file JSON"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["files"][0]["tensors"]}
assert t["/view"]["status"] == "ok" and t["/view"]["max"] == 9.0, t["/view"]
assert t["/broken"]["status"] == "error", t["/broken"]
assert "source dataset gone is not in this file" in t["/broken"]["reason"], t["/broken"]
PY
# (tester round 22a) a source that is a VDS itself is checked too, its
# own sources relative to its file; a VDS that is its own source (a cycle:
# h5py crashes on it) stops at 8 levels; "%%" in a name is a '%', not a
# printf-style mapping; a VDS reached through a symbolic link finds its
# sources beside the link's target, as libhdf5 does; HDF5_VDS_PREFIX whole
# is one directory, ':' in its name included
mkdir -p n "co:lon" l
"$NA_PYTHON" - <<'PY' || fail "making the nested files"
import h5py
import numpy as np
a = np.arange(100.0)
a[7] = np.nan
def vds(path, src, name, fill=-5):
    lay = h5py.VirtualLayout(shape=(100,), dtype="f8")
    lay[:] = h5py.VirtualSource(src, "data", shape=(100,))
    with h5py.File(path, "w") as f:
        f.create_virtual_dataset(name, lay, fillvalue=fill)
with h5py.File("n/inner_src.h5", "w") as f:
    f["data"] = a
vds("n/inner.h5", "inner_src.h5", "data")
vds("n/outer.h5", "inner.h5", "v")
with h5py.File("n/pct%src.h5", "w") as f:
    f["data"] = a
vds("n/pct.h5", "pct%%src.h5", "v")
with h5py.File("n/cyc.h5", "w") as f:
    lay = h5py.VirtualLayout(shape=(10,), dtype="f8")
    lay[:] = h5py.VirtualSource(".", "loop", shape=(10,))
    f.create_virtual_dataset("loop", lay)
PY
expect_exit 1 "$NANAUDIT" scan n/outer.h5
expect_stdout_contains "/v: 1 NaN value (first at [7])"
expect_exit 1 "$NANAUDIT" scan n/pct.h5
ln -s ../n/outer.h5 l/outer.h5
expect_exit 1 "$NANAUDIT" scan l/outer.h5
expect_stdout_contains "/v: 1 NaN value (first at [7])"
mv n/inner_src.h5 "co:lon/inner_src.h5"
mv "n/pct%src.h5" n/pct-moved.h5
expect_exit 3 "$NANAUDIT" scan n/outer.h5
expect_stdout_contains "error: /v: virtual dataset: its source dataset data in inner.h5 is virtual too, and its source file inner_src.h5 cannot be opened (libhdf5 would read the fill value in its place)"
expect_exit 1 env HDF5_VDS_PREFIX="$T/co:lon" "$NANAUDIT" scan n/outer.h5
expect_exit 3 "$NANAUDIT" scan n/pct.h5
expect_stdout_contains "its source file pct%src.h5 cannot be opened"
expect_exit 3 "$NANAUDIT" scan n/cyc.h5
expect_stdout_contains "error: /loop: virtual dataset: its sources are virtual datasets nested more than 8 deep (a cycle?)"
expect_stdout_lacks "fill value"

# clean copies an excluded VDS as stored: beside the input it still reads;
# in another directory its relative source is not found from the copy,
# and the verification says so (nothing written)
mv d/moved/src1.h5 d/src1.h5
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("d/vds.h5", "a") as f:
    f["x"] = np.arange(5.0)
' || fail "adding /x"
expect_exit 0 "$NANAUDIT" clean d/vds.h5 --exclude /v -o d/out.h5 -q
expect_exit 1 "$NANAUDIT" scan d/out.h5
expect_stdout_contains "/v: 1 NaN value (first at [7])"
mkdir -p elsewhere
expect_exit 3 "$NANAUDIT" clean d/vds.h5 --exclude /v -o elsewhere/out.h5 -q
expect_stderr_contains "elsewhere/out.h5: /v: virtual dataset: its source file src1.h5 cannot be opened"
[ -z "$(ls -A elsewhere)" ] || fail "left in elsewhere/: $(ls -A elsewhere)"
# clean fails closed on a missing source, as scan does
expect_exit 3 "$NANAUDIT" clean d/same.h5 -o c.h5
expect_stderr_contains "/broken: virtual dataset: its source dataset gone is not in this file"
[ ! -e c.h5 ] || fail "c.h5 written"
pass
