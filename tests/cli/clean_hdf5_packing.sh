#!/bin/bash
# clean --normalize on HDF5 datasets with CF packing attributes (issue 4):
# scale_factor, add_offset, valid_min, valid_max and valid_range describe
# the stored values (CF 1.11 sections 8.1, 2.5.1); a CF reader would
# multiply normalized values by scale_factor. A normalized dataset loses
# them, with one report warning; other attributes stay; without
# --normalize (and on datasets clean leaves alone) they are kept.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
x = (np.arange(200, dtype=np.int16) - 100).reshape(100, 2)
with h5py.File("p.h5", "w") as f:
    for n in ("t", "u"):
        d = f.create_dataset(n, data=x)
        d.attrs["scale_factor"] = np.float32(0.01)
        d.attrs["add_offset"] = np.float32(273.15)
        d.attrs["valid_min"] = np.int16(-100)
        d.attrs["valid_max"] = np.int16(100)
        d.attrs["valid_range"] = np.array([-100, 100], np.int16)
        d.attrs["units"] = "K"
    f.create_dataset("plain", data=x.astype(np.float64))
PY
N="$NANAUDIT"
PACK='("scale_factor", "add_offset", "valid_min", "valid_max", "valid_range")'
expect_exit 0 "$N" clean p.h5 -o n.h5 --normalize minmax --exclude /u --report n.json
expect_stdout_contains "scale_factor, add_offset, valid_min, valid_max, valid_range dropped: values are normalized"
expect_json n.json '[t["name"] for t in j["tensors"] if "scale_factor, add_offset, valid_min, valid_max, valid_range dropped: values are normalized" in t.get("warnings", [])]' '["/t"]'
"$NA_PYTHON" - "$PACK" <<'PY' || fail "normalized output"
import sys, h5py, numpy as np
pack = eval(sys.argv[1])
with h5py.File("n.h5") as f:
    t, u = f["t"], f["u"]
    assert not any(k in t.attrs for k in pack), dict(t.attrs)
    assert t.attrs["units"] == "K"
    assert all(k in u.attrs for k in pack), dict(u.attrs)  # excluded: copied whole
    v = t[:]
    assert v.dtype == np.float32 and v.min() == 0.0 and v.max() == 1.0, (v.dtype, v.min(), v.max())
PY
# --dry-run: the same warning (one rule decides it: cli/clean.c
# warn_packing), the same report entry, and nothing written but the report
before="$(ls -A)"
expect_exit 0 "$N" clean p.h5 --dry-run --normalize minmax --exclude /u --report d.json
expect_stdout_contains "    warning: scale_factor, add_offset, valid_min, valid_max, valid_range dropped: values are normalized"
expect_stdout_contains "dry run: no output written"
expect_json d.json '[(t["name"], t["warnings"]) for t in j["tensors"]]' \
    '[["/plain", []], ["/t", ["scale_factor, add_offset, valid_min, valid_max, valid_range dropped: values are normalized"]], ["/u", []]]'
expect_json d.json '[j["written"], j["dry_run"], j["output"]]' '[false, true, null]'
assert_eq "$(ls -A | grep -vx d.json)" "$before" "files after --dry-run"
# the warning names the attributes the dataset has (round 28a: it said
# scale_factor/add_offset for one with only valid_range and valid_min)
"$NA_PYTHON" -c "
import h5py, numpy as np
with h5py.File('vr.h5', 'w') as f:
    d = f.create_dataset('v', data=np.arange(60, dtype='f4').reshape(30, 2))
    d.attrs['valid_range'] = np.array([-5, 5], 'f4'); d.attrs['valid_min'] = np.float32(-5)" ||
    fail "vr.h5"
expect_exit 0 "$N" clean vr.h5 -o vr.out.h5 --normalize minmax --report vr.json
expect_json vr.json 'j["tensors"][0]["warnings"]' '["valid_min, valid_range dropped: values are normalized"]'
expect_json vr.json 'sorted(__import__("h5py").File("vr.out.h5")["v"].attrs)' '[]'
# without --normalize: kept
expect_exit 0 "$N" clean p.h5 -o k.h5 --zscore 3 --report k.json
expect_stdout_lacks "dropped: values are normalized"
"$NA_PYTHON" - "$PACK" <<'PY' || fail "output without --normalize"
import sys, h5py
pack = eval(sys.argv[1])
with h5py.File("k.h5") as f:
    for n in ("t", "u"):
        a = f[n].attrs
        assert all(k in a for k in pack), dict(a)
        assert abs(float(a["scale_factor"]) - 0.01) < 1e-6, a["scale_factor"]
PY
pass
