#!/bin/bash
# Regression test for issue 4: a tensor of N samples of width 0, shape
# (5, 0), counted as 0 samples: beside a (5, 3) dataset --together
# refused the group ("'/e' has 0 samples and '/x' 5"), and its shape
# stayed (5, 0) in an output whose other datasets lost rows. It has 5
# samples and shares the sample axis: --together drops the same rows, to
# (k, 0) with k the rows kept (HDF5, also chunked; .npz; safetensors with
# --samples), and without --together dropping rows of /x is refused as a
# misalignment with it. References: h5py and numpy (x[keep]).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
x = np.arange(15.0).reshape(5, 3)
x[2, 1] = np.nan
e = np.zeros((5, 0), np.float32)
np.savez("a.npz", x=x, e=e)
save_file({"x": x, "e": e}, "a.safetensors")
np.save("x.npy", x)
# a header alone declaring (2^40, 0): no 2^40 sample states
h = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, 0), }" % 2**40
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
open("h.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
PY

# check_np FILE LOADER: x is x[keep], e is (4, 0)
check_np() {
    "$NA_PYTHON" -c "
import numpy as np
$2
x = np.load('x.npy'); keep = np.isfinite(x).all(axis=1)
assert d['e'].shape == (int(keep.sum()), 0) == (4, 0), d['e'].shape
assert d['e'].dtype == np.float32
assert np.array_equal(d['x'], x[keep])" || fail "$1: not numpy's x[keep] and (4, 0)"
}

# .npz: the group loses row 2 in both
expect_exit 0 "$N" clean a.npz -o o.npz --together x,e --max-drop-fraction 0.5 --report r.json
expect_stdout_contains "  e: F32 -> F32, 5 samples x 0, 0 feature(s), 1 pass"
expect_json r.json '[t["samples_dropped"] for t in j["tensors"] if t["name"] == "e"][0]' \
    '{"nonfinite": 0, "outliers": 0, "together": 1, "total": 1, "first": [2]}'
check_np o.npz "d = dict(np.load('o.npz'))"
# a dry run says the same
expect_exit 0 "$N" clean a.npz --dry-run --together x,e --max-drop-fraction 0.5
expect_stdout_contains "dropped 1 sample (non-finite 0, outliers 0, together 1), first 2"
# without --together: refused as a misalignment, nothing written
expect_exit 2 "$N" clean a.npz -o o2.npz --max-drop-fraction 0.5
expect_stderr_contains "nanaudit: a.npz: dropping 1 sample from 'x' would misalign it with 'e' (both have 5 rows); use --allow-misaligned if they are unrelated, --together to drop from both"
[ -e o2.npz ] && fail "o2.npz written"
expect_exit 0 "$N" clean a.npz -o o3.npz --max-drop-fraction 0.5 --allow-misaligned
"$NA_PYTHON" -c "
import numpy as np
assert np.load('o3.npz')['e'].shape == (5, 0)" || fail "--allow-misaligned changed e"

# safetensors, weights by default: (5, 0) is a weight and stays; with
# --samples it is 5 samples
expect_exit 0 "$N" clean a.safetensors -o o.safetensors --samples --together x,e \
    --max-drop-fraction 0.5
check_np o.safetensors "from safetensors.numpy import load_file; d = load_file('o.safetensors')"

# a (2^40, 0) header: no 2^40 sample states; copied unchanged, or with
# --include an error (exit 3), as a dtype clean cannot write
expect_exit 0 "$N" clean h.npy -o oh.npy
cmp -s h.npy oh.npy || fail "h.npy not copied unchanged"
expect_exit 3 "$N" clean h.npy -o oh2.npy --include data
expect_stderr_contains "nanaudit: h.npy: data: no data and 1099511627776 samples, more than clean keeps sample states for without data (1073741824)"

# HDF5: contiguous and chunked (5, 0) datasets beside /x and /y
skip_without_hdf5
"$NA_PYTHON" - <<'PY' || fail "making the HDF5 input"
import h5py, numpy as np
x = np.load("x.npy")
with h5py.File("a.h5", "w") as f:
    f["x"] = x
    f["y"] = np.arange(5, dtype=np.int64)
    f["e"] = np.zeros((5, 0), np.float32)
    f.create_dataset("ec", shape=(5, 0), dtype="f4", chunks=(2, 1), maxshape=(None, None))
PY
expect_exit 0 "$N" clean a.h5 -o o.h5 --together '/x,/y,/e,/ec' --max-drop-fraction 0.5
"$NA_PYTHON" -c "
import h5py, numpy as np
x = np.load('x.npy'); keep = np.isfinite(x).all(axis=1)
with h5py.File('o.h5') as f:
    assert np.array_equal(f['x'][:], x[keep])
    assert f['y'][:].tolist() == np.arange(5)[keep].tolist()
    for k in ('e', 'ec'):
        assert f[k].shape == (4, 0) and f[k].dtype == np.float32, (k, f[k].shape)
    assert f['ec'].chunks == (2, 1) and f['ec'].maxshape == (None, None)
" || fail "HDF5 output against h5py"
expect_exit 2 "$N" clean a.h5 -o o2.h5 --together '/x,/y' --max-drop-fraction 0.5
expect_stderr_contains "dropping 1 sample from '/x' would misalign it with '/e' and '/ec' (all have 5 rows); use --allow-misaligned if they are unrelated, --together to drop from all"
pass
