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
