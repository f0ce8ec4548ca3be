#!/bin/bash
# duplicate_names.sh - a file whose tensors would share a name is refused
# (exit 3, one line naming both), in scan, info and clean (nothing
# written). Found by the twelfth fresh-user round: a PyTorch state dict
# with "a.b" and {"a": {"b": ...}} was scanned as two tensors named a.b,
# and clean's --save-params kept one entry, so --apply-params on the same
# file gave the first tensor the other's statistics ([0, 1] became
# [0.2, 0.4]) without a word. The same for an .npz with members x.npy and
# x, a complex tensor c (c.real, c.imag) beside a tensor c.real, and an
# HDF5 compound /x's field a beside a dataset /x.a.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
P="$NA_TEST_DATA/dup/flatten_collision.pt"
MSG="tensors 1 and 2 (in file order) are both named 'a.b': reports and parameter files could not tell them apart"

expect_exit 3 "$N" scan "$P"
assert_eq "$(cat "$T/stderr")" "nanaudit: $P: $MSG" "scan's stderr"
expect_exit 3 "$N" info "$P"
assert_eq "$(cat "$T/stderr")" "nanaudit: $P: $MSG" "info's stderr"
mkdir out
expect_exit 3 "$N" clean "$P" --nonfinite zero -o out/c.pt --save-params out/p.json
expect_stderr_contains "$P: $MSG"
assert_eq "$(ls -A out)" "" "clean wrote something"

# an .npz whose members x.npy and x are both the array x (np.load lists them so)
"$NA_PYTHON" - <<'PY' || fail "making the npz"
import io, zipfile, numpy as np
def npy(a):
    b = io.BytesIO(); np.save(b, a); return b.getvalue()
with zipfile.ZipFile("two.npz", "w") as z:
    z.writestr("x.npy", npy(np.array([1.0, 2.0], np.float32)))
    z.writestr("x", npy(np.array([np.nan, 2.0], np.float32)))
    z.writestr("y.npy", npy(np.array([3.0], np.float32)))
with zipfile.ZipFile("fine.npz", "w") as z:  # x and y: no clash
    z.writestr("x.npy", npy(np.array([1.0, 2.0], np.float32)))
    z.writestr("y", npy(np.array([3.0], np.float32)))
PY
expect_exit 3 "$N" scan two.npz
assert_eq "$(cat "$T/stderr")" "nanaudit: two.npz: tensors 1 and 2 (in file order) are both named 'x': reports and parameter files could not tell them apart" "npz"
expect_exit 0 "$N" scan fine.npz
expect_stdout_contains "2 tensors, 3 elements"

# safetensors: a C64 tensor c is audited as c.real and c.imag
make_st "$T/c.safetensors" '{"tensors":[
 {"name":"c","dtype":"C64","shape":[2],"values":[1,2]},
 {"name":"c.real","dtype":"F32","shape":[1],"values":[5]}]}'
expect_exit 3 "$N" scan "$T/c.safetensors"
expect_stderr_contains "are both named 'c.real': reports and parameter files could not tell them apart"
make_st "$T/d.safetensors" '{"tensors":[
 {"name":"c","dtype":"C64","shape":[2],"values":[1,2]},
 {"name":"c.re","dtype":"F32","shape":[1],"values":[5]}]}'
expect_exit 0 "$N" scan "$T/d.safetensors"
expect_stdout_contains "3 tensors"

# HDF5: a compound /x's field a is /x.a, as a dataset x.a is (last: the
# rest ran in a build without HDF5)
skip_without_hdf5
"$NA_PYTHON" - <<'PY' || fail "making the h5"
import h5py, numpy as np
with h5py.File("cmp.h5", "w") as f:
    f.create_dataset("x", data=np.zeros(3, dtype=[("a", "<f4"), ("b", "<f4")]))
    f.create_dataset("x.a", data=np.ones(3, np.float32))
    f.create_dataset("x.c", data=np.ones(3, np.float32))
with h5py.File("cmp2.h5", "w") as f:
    f.create_dataset("x", data=np.zeros(3, dtype=[("a", "<f4"), ("b", "<f4")]))
    f.create_dataset("x.c", data=np.ones(3, np.float32))
PY
expect_exit 3 "$N" scan cmp.h5
assert_eq "$(cat "$T/stderr")" "nanaudit: cmp.h5: tensors 1 and 3 (in file order) are both named '/x.a': reports and parameter files could not tell them apart" "h5"
expect_exit 0 "$N" scan cmp2.h5
expect_stdout_contains "3 tensors"
pass
