#!/bin/bash
# HDF5 link naming (issue 3: "hard links: each object audited once; soft
# links followed once"): an object reached both by a soft link and by a
# hard link is named by its hard-link path, whichever comes first in name
# order, so scan, info and clean's --exclude/--together agree on /x even
# when /a_soft (a SoftLink to /x) sorts before it. A soft link to an object
# no hard link reaches cannot be built with h5py; the dangling one is a note.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
with h5py.File("s.h5", "w") as f:
    f["a_soft"] = h5py.SoftLink("/x")          # sorts before /x
    x = np.arange(20.0).reshape(20, 1)
    x[2, 0] = np.nan
    f.create_dataset("x", data=x)
    f.create_dataset("y", data=np.arange(20.0) * 10)
    g = f.create_group("g")
    g["back"] = h5py.SoftLink("/y")
    f["gs"] = h5py.SoftLink("/g")              # a soft link to a group
PY
N="$NANAUDIT"
expect_exit 1 "$N" scan s.h5 --report s.json
expect_json s.json '[t["name"] for t in j["files"][0]["tensors"]]' '["/x", "/y"]'
expect_json s.json '[t["nan"] for t in j["files"][0]["tensors"]]' '[1, 0]'
expect_exit 0 "$N" info s.h5
expect_stdout_contains "/x"
expect_stdout_lacks "/a_soft"
expect_stdout_lacks "/g/back"
# clean: --exclude /x leaves /x alone (its NaN row stays), --together /x,/y
# drops the NaN row from both
expect_exit 0 "$N" clean s.h5 -o ex.h5 --exclude /x
expect_stderr_lacks "matches no tensor"
expect_exit 0 "$N" clean s.h5 -o tg.h5 --together /x,/y
expect_stderr_lacks "matches no tensor"
"$NA_PYTHON" - <<'PY' || fail "clean outputs"
import h5py, numpy as np
with h5py.File("ex.h5") as f:
    assert f["x"].shape == (20, 1) and np.isnan(f["x"][2, 0]), f["x"][:]
    assert f.get("a_soft", getlink=True).path == "/x"
with h5py.File("tg.h5") as f:
    keep = [i for i in range(20) if i != 2]
    assert f["x"][:, 0].tolist() == [float(i) for i in keep], f["x"][:]
    assert f["y"][:].tolist() == [i * 10.0 for i in keep], f["y"][:]
    assert f.get("gs", getlink=True).path == "/g"
PY
pass
