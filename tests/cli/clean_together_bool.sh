#!/bin/bash
# A BOOL mask beside the data (issue 4): named by --together it loses the
# samples its partners drop and keeps its values and its dtype (h5py's
# bool enum, NumPy's |b1, safetensors' BOOL), checked against numpy; not
# named, the drop is refused with the --together hint; BOOL is never
# transformed, even when --include names it.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py
import numpy as np
from safetensors.numpy import save_file
rng = np.random.default_rng(7)
x = rng.uniform(-1, 1, (60, 3))
x[5, 1] = np.nan
x[7, 0] = np.inf
x[30, 2] = -np.inf
mask = rng.integers(0, 2, 60).astype(bool)
y = np.arange(60, dtype=np.int64)
with h5py.File("m.h5", "w") as f:
    f["x"] = x
    f.create_dataset("mask", data=mask, chunks=(16,), compression="gzip")
    f["mask"].attrs["units"] = "valid"
    f["y"] = y
np.savez("m.npz", x=x, mask=mask, y=y)
save_file({"x": x, "mask": mask, "y": y}, "m.safetensors")
np.save("keep.npy", np.isfinite(x).all(1))
PY
N="$NANAUDIT"

# Not named by --together: the drop from /x would misalign the mask, and
# --together is the fix the hint gives.
expect_exit 2 "$N" clean m.h5 -o out.h5
expect_stderr_contains "dropping 3 samples from '/x' would misalign it with '/mask' and '/y' (all have 60 rows); use --allow-misaligned if they are unrelated, --together to drop from all"
[ ! -e out.h5 ] || fail "refused run wrote output"

check() { # FORMAT OUT: x, mask, y of OUT against the numpy reference
    "$NA_PYTHON" - "$1" "$2" <<'PY' || fail "aligned output $2"
import sys
import numpy as np
fmt, out = sys.argv[1], sys.argv[2]
keep = np.load("keep.npy")
if fmt == "hdf5":
    import h5py
    with h5py.File("m.h5") as f, h5py.File(out) as g:
        src = {k: f[k][()] for k in f}
        got = {k: g[k][()] for k in g}
        assert g["mask"].dtype == np.bool_, g["mask"].dtype
        assert g["mask"].chunks == (16,) and g["mask"].compression == "gzip"
        assert g["mask"].attrs["units"] == "valid"
elif fmt == "npz":
    src, got = dict(np.load("m.npz")), dict(np.load(out))
else:
    from safetensors.numpy import load_file
    src, got = load_file("m.safetensors"), load_file(out)
assert keep.sum() == 57
assert got["mask"].dtype == np.bool_, got["mask"].dtype
np.testing.assert_array_equal(got["mask"], src["mask"][keep])
np.testing.assert_array_equal(got["y"], src["y"][keep])
xk = src["x"][keep]
np.testing.assert_allclose(got["x"], (xk - xk.min(0)) / (xk.max(0) - xk.min(0)), rtol=0, atol=1e-12)
PY
}

# HDF5: the mask follows, keeps h5py's bool type, chunks, filter, attribute.
expect_exit 0 "$N" clean m.h5 --normalize minmax --together /x,/mask,/y --exclude /y \
    -o out.h5 --report rep.json
check hdf5 out.h5
expect_stdout_contains "/mask: BOOL -> BOOL, 60 samples x 1"
expect_stdout_contains "BOOL named by --together: loses the samples its partners drop, values unchanged"
expect_json rep.json '[[e["name"], e["status"], e["samples_dropped"]["total"]] for e in j["tensors"]]' \
    '[["/mask", "cleaned", 3], ["/x", "cleaned", 3], ["/y", "cleaned", 3]]'

# --include naming the mask does not transform it either.
expect_exit 0 "$N" clean m.h5 --normalize minmax --include /x --include /mask --include /y \
    --together /x,/mask,/y -o inc.h5 --force
expect_stdout_contains "/mask: BOOL -> BOOL"
"$NA_PYTHON" - <<'PY' || fail "--include /mask output"
import h5py, numpy as np
keep = np.load("keep.npy")
with h5py.File("m.h5") as f, h5py.File("inc.h5") as g:
    np.testing.assert_array_equal(g["mask"][()], f["mask"][()][keep])
    assert g["mask"].dtype == np.bool_
    y = f["y"][()][keep].astype(np.float64)  # --include /y: normalized, written as F32
    np.testing.assert_allclose(g["y"][()], (y - y.min()) / (y.max() - y.min()), rtol=0, atol=1e-7)
PY

# .npz and safetensors (--samples): |b1 and BOOL come back as bool.
expect_exit 0 "$N" clean m.npz --normalize minmax --together x,mask,y --exclude y -o out.npz
check npz out.npz
expect_exit 0 "$N" clean m.safetensors --samples --nonfinite drop --normalize minmax \
    --together x,mask,y --exclude y -o out.safetensors
check safetensors out.safetensors

# --save-params has no entry for a follower; the mask's values are kept
# by --apply-params too.
expect_exit 0 "$N" clean m.h5 --normalize minmax --together /x,/mask,/y --exclude /y \
    -o out2.h5 --save-params p.json
expect_json p.json 'sorted(j["tensors"])' '["/x"]'
expect_exit 0 "$N" clean m.h5 --apply-params p.json --normalize minmax --together /x,/mask,/y --exclude /y \
    -o out3.h5
check hdf5 out3.h5

# Without --together a BOOL dataset is copied (--allow-misaligned: the
# drop from /x is wanted), and --include cannot make clean transform it.
expect_exit 0 "$N" clean m.h5 --allow-misaligned -o alone.h5
expect_stdout_contains "/mask: copied: BOOL is never transformed"
"$NA_PYTHON" - <<'PY' || fail "copied mask changed"
import h5py, numpy as np
with h5py.File("m.h5") as f, h5py.File("alone.h5") as g:
    assert g["mask"].dtype == np.bool_ and g["mask"].shape == (60,)
    np.testing.assert_array_equal(g["mask"][()], f["mask"][()])
    assert g["x"].shape == (57, 3)
PY
expect_exit 3 "$N" clean m.h5 --include /mask --zscore 1 -o inc2.h5
expect_stderr_contains "/mask: BOOL is never transformed (no NaN, outlier or scale in true/false); --together with its partners makes it lose the samples they drop"
[ ! -e inc2.h5 ] || fail "refused run wrote output"
pass
