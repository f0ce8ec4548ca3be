#!/bin/bash
# clean --dry-run on HDF5 input meets the HDF5 writer's refusals as a real
# run does (issue 4, "--dry-run: compute and report everything, write
# nothing"): cli/clean.c dry_open opens the writer without a path, and its
# libhdf5 process (formats/hdf5_wchild.c) walks the structure with the
# code of a real write into an in-memory file, reading no data. Each case:
# the same exit code, the same stderr line (but its file name: a real run
# names the output, a dry run the input, as for .npy/.npz in
# clean_dry_run.sh), and nothing written (no output, no .nanaudit-tmp-*).
# Regression: a dry run of these files exited 0. Real files from
# tests/data/real/hdf5 (SOURCES.md).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"
R="$NA_TEST_DATA/real/hdf5"
for f in be_data tall twithub513 tsaf; do
    cp "$R/hdfgroup-$f.h5" "$f.h5" || fail "copying $f"
done

# same_refusal CODE MESSAGE FILE ARGS...: the real run refuses with CODE
# and "nanaudit: FILE: MESSAGE; nothing written" (a refusal about the
# input's structure names the input, not -o), the dry run alike, and
# neither leaves a file behind.
same_refusal() {
    local code="$1" msg="$2" f="$3" before
    shift 3
    before="$(ls -A | grep -vx -e stdout -e stderr)"
    expect_exit "$code" "$N" clean "$f" "$@" -o "real.$f"
    assert_eq "$(cat stderr)" "nanaudit: $f: $msg; nothing written" "real-run message for $f"
    assert_eq "$(ls -A | grep -vx -e stdout -e stderr)" "$before" "files after the real run of $f"
    expect_exit "$code" "$N" clean "$f" "$@" --dry-run
    assert_eq "$(cat stderr)" "nanaudit: $f: $msg; nothing written" "dry-run message for $f"
    assert_eq "$(ls -A | grep -vx -e stdout -e stderr)" "$before" "files after --dry-run of $f"
}

# A lossy scale-offset filter on a cleaned float dataset (exit 2).
same_refusal 2 "/Scale_offset_double_data_be: its scale-offset filter would store the cleaned floating point values with a fixed number of decimal digits (lossy), so they could not be written exactly: --exclude it" be_data.h5
# A user-defined link (exit 3), also behind a 1024-byte user block.
for f in tall.h5 twithub513.h5; do
    same_refusal 3 "/g2/udlink: user-defined link (type 187) cannot be copied" "$f"
done
# Integer fields normalized to F32 beside a string field (exit 2).
same_refusal 2 "/.attributes/database/.SAF_DbProps: compound dataset whose cleaned fields change dtype, but its member 'SFileDir' is not cleaned, so its records cannot be rewritten; keep the dtype (--out-dtype) or --exclude those fields" tsaf.h5 --normalize minmax

# Where the real run writes, the dry run passes the check and writes
# nothing: the scale-offset datasets excluded (copied, not cleaned).
expect_exit 0 "$N" clean be_data.h5 --exclude '/Scale_offset_*' -o real.h5
[ -f real.h5 ] || fail "real run wrote nothing"
rm real.h5
before="$(ls -A | grep -vx -e stdout -e stderr)"
expect_exit 0 "$N" clean be_data.h5 --exclude '/Scale_offset_*' --dry-run
expect_stderr_empty
expect_stdout_contains "dry run: no output written"
assert_eq "$(ls -A | grep -vx -e stdout -e stderr)" "$before" "files after --dry-run of be_data.h5"

"$NA_PYTHON" - <<'PY' || fail "making s.h5 and ext.h5"
import h5py, numpy as np
from h5py import h5d, h5p, h5s, h5t
with h5py.File("s.h5", "w") as f:
    u = f.create_dataset("keep", data=np.arange(1000.0).reshape(100, 10), chunks=(10, 10),
                         compression="gzip")
    u.attrs["units"] = "m"
    f["g/alias"] = u
    t = f.create_dataset("t", data=np.arange(100.0))
    t.make_scale("t")
    x = f.create_dataset("x", data=np.linspace(0, 1, 100))
    x.dims[0].attach_scale(t)
    r = np.zeros(100, dtype=[("a", "<f8"), ("s", "S4")])
    r["a"] = np.arange(100.0)
    r["a"][3] = np.nan
    f.create_dataset("rec", data=r)
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)
    dcpl.set_fill_value(np.array(1.5, "<f4"))
    h5d.create(f.id, b"early", h5t.IEEE_F32LE, h5s.create_simple((100,)), dcpl=dcpl)
    f["early"][:] = np.arange(100, dtype=np.float32)
np.arange(10.0).tofile("raw.bin")
with h5py.File("ext.h5", "w") as f:
    f.create_dataset("e", shape=(10,), dtype="<f8", external=[("raw.bin", 0, 80)])
PY
# Data in another file (external storage, exit 2).
same_refusal 2 "/e: its data lives in other files (external storage); clean writes only this file: --exclude it" ext.h5

# The check's own paths (hdf5_wchild.c): an untouched dataset as a
# stand-in that takes its attributes and a second hard link; dimension
# scales (references in attributes get new values); a compound dataset
# whose cleaned field keeps rows and dtype (copied, then written into);
# a cleaned dataset allocated early with a fill value (created with late
# allocation). Real run and dry run: exit 0, the same report.
expect_exit 0 "$N" clean s.h5 --include '/rec.a' --include /x --include /early \
    --nonfinite zero -o real.h5
cp stdout real.txt
before="$(ls -A | grep -vx -e stdout -e stderr)"
expect_exit 0 "$N" clean s.h5 --include '/rec.a' --include /x --include /early \
    --nonfinite zero --dry-run
expect_stderr_empty
assert_eq "$(sed '$d' stdout)" "$(sed '$d' real.txt)" "text report of s.h5"
assert_eq "$(ls -A | grep -vx -e stdout -e stderr)" "$before" "files after --dry-run of s.h5"
pass
