#!/bin/bash
# clean of HDF5 datasets with no storage written (they read as their fill
# value everywhere and may declare 2^40 rows in a few KiB; audit 25a: a
# 1.4 KB file of 2^34 rows kept clean busy for minutes, the time going
# with the declared rows). No step changes a constant except
# normalization of a finite value and another --out-dtype, so such a
# dataset is copied as it is (still unallocated), with its NaN counted
# (exit 1); with --normalize, --out-dtype, --together or --apply-params
# it is cleaned as any dataset. (large_clean_rowmap.sh: the row map of
# 2^40 rows.)
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("big.h5", "w") as f:
    f.create_dataset("e", shape=(2**34,), dtype="f4", chunks=(1024,))
    f.create_dataset("n", shape=(2**34, 2), dtype="f4", chunks=(1024, 2), fillvalue=np.nan)
    f["x"] = np.arange(10.0)
with h5py.File("small.h5", "w") as f:
    f.create_dataset("u", shape=(100,), dtype="f4", chunks=(16,), fillvalue=5.0)
    f["y"] = np.arange(100.0)
PY
mkdir out
expect_exit 1 timeout 60 "$NANAUDIT" clean --report big.json -o out/big.h5 big.h5
expect_stdout_contains "  /e: copied: no storage written: every value is the fill value (0), which no step changes; copied unchanged"
expect_stdout_contains "  /n: copied: no storage written: every value is the fill value (NaN), which no step changes; copied unchanged"
expect_stdout_contains "    warning: 34359738368 NaN/Inf value(s) left as they are (copied unchanged)"
expect_stdout_contains "written: out/big.h5 (verified)"
expect_json big.json '[(t["name"], t["status"]) for t in j["tensors"]]' '[["/e", "copied"], ["/n", "copied"], ["/x", "cleaned"]]'
"$NA_PYTHON" - <<'PY' || fail "big.h5 copy"
import h5py, numpy as np
with h5py.File("out/big.h5") as f:
    assert f["e"].shape == (2**34,) and f["e"].id.get_storage_size() == 0, f["e"]
    assert f["n"].shape == (2**34, 2) and np.isnan(f["n"].fillvalue) and f["n"].id.get_storage_size() == 0
    assert f["e"][2**34 - 1] == 0 and np.isnan(f["n"][5, 1])
    assert np.array_equal(f["x"][:], np.arange(10.0))
PY
# the same values written out are cleaned with no change: the same output
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("dense.h5", "w") as f:
    f.create_dataset("u", data=np.full(100, 5.0, "f4"), chunks=(16,), fillvalue=5.0)
    f["y"] = np.arange(100.0)' || fail "dense.h5"
expect_exit 0 "$NANAUDIT" clean --zscore 3 -o out/s.h5 small.h5
expect_stdout_contains "  /u: copied: no storage written: every value is the fill value (5), which no step changes"
expect_exit 0 "$NANAUDIT" clean --zscore 3 -o out/d.h5 dense.h5
expect_stdout_contains "  /u: F32 -> F32, 100 samples x 1, 1 feature(s)"
"$NA_PYTHON" -c '
import h5py, numpy as np
a, b = h5py.File("out/s.h5"), h5py.File("out/d.h5")
assert np.array_equal(a["u"][:], b["u"][:]) and a["u"].dtype == b["u"].dtype, (a["u"][:5], b["u"][:5])
assert np.array_equal(a["y"][:], b["y"][:])' || fail "unwritten and dense outputs differ"
# every option gives what the same values written out give: values,
# dtype, exit code (round 26: --nonfinite zero/value=X of a NaN fill and
# --out-dtype of a NaN or CF missing fill were skipped)
"$NA_PYTHON" - <<'PY' || fail "making fill files"
import h5py, numpy as np
for name, fill in (("nan", np.nan), ("inf", np.inf), ("cf", -999.0), ("int", 7)):
    dt = "i2" if name == "int" else "f4"
    for kind in ("u", "w"):
        with h5py.File(f"{kind}_{name}.h5", "w") as f:
            if kind == "u":
                d = f.create_dataset("d", shape=(1000, 3), dtype=dt, fillvalue=fill, chunks=(100, 3))
            else:
                d = f.create_dataset("d", data=np.full((1000, 3), fill, dt), fillvalue=fill,
                                     chunks=(100, 3))
            if name == "cf":
                d.attrs["_FillValue"] = np.float32(fill)
PY
same() { # FILL OPTIONS...: the unwritten and the dense file clean alike
    local fill=$1 ru=0 rw=0
    shift
    "$NANAUDIT" clean -q --force -o out/ou.h5 "u_$fill.h5" "$@" >/dev/null 2>&1 || ru=$?
    "$NANAUDIT" clean -q --force -o out/ow.h5 "w_$fill.h5" "$@" >/dev/null 2>&1 || rw=$?
    assert_eq "$ru" "$rw" "exit of $fill $*"
    [ "$ru" -ge 2 ] && return
    "$NA_PYTHON" -c '
import sys, h5py, numpy as np
a, b = h5py.File("out/ou.h5")["d"], h5py.File("out/ow.h5")["d"]
assert a.dtype == b.dtype and np.array_equal(a[...], b[...], equal_nan=True), (a.dtype, b.dtype, a[0], b[0])' ||
        fail "outputs of $fill $* differ"
}
for fill in nan inf; do
    for opt in "--nonfinite zero" "--nonfinite value=5" "--nonfinite mean" "--nonfinite keep" \
               "--out-dtype F64" "--out-dtype I32 --nonfinite zero" "--out-dtype I32" \
               "--normalize zscore" "--mad 3 --outliers clip --nonfinite zero"; do
        same "$fill" $opt
    done
done
for opt in "" "--out-dtype F64" "--out-dtype I8" "--normalize minmax" "--missing none --normalize minmax"; do
    same cf $opt
done
for opt in "" "--normalize zscore" "--out-dtype F32" "--zscore 1 --outliers clip"; do
    same int $opt
done
rm -f out/ou.h5 out/ow.h5
# normalization, another dtype and --together clean it
expect_exit 0 "$NANAUDIT" clean --normalize minmax -o out/m.h5 small.h5
expect_stdout_contains "constant feature(s) (max == min) mapped to LO"
"$NA_PYTHON" -c '
import h5py, numpy as np
f = h5py.File("out/m.h5"); assert np.array_equal(f["u"][:], np.zeros(100, "f4")), f["u"][:5]' || fail "minmax"
expect_exit 0 "$NANAUDIT" clean --out-dtype F64 --include /u -o out/o.h5 small.h5
expect_stdout_contains "  /u: F32 -> F64, 100 samples x 1"
expect_exit 0 "$NANAUDIT" clean --together /u,/y --nonfinite drop -o out/t.h5 small.h5
expect_stdout_contains "  /u: F32 -> F32, 100 samples x 1"
assert_eq "$(ls -A out | grep -c nanaudit)" 0 "temporary files left"
pass
