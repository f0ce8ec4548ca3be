#!/bin/bash
# torch_complex128.sh - complex128 tensors of PyTorch checkpoints are
# audited as NAME.real and NAME.imag (F64), as complex128 .npy/.npz and
# HDF5 data are and as DESIGN.md defines for complex values (fifth
# fresh-user round). They were refused ("unsupported torch storage type
# ComplexDoubleStorage"), and in a legacy (pre-1.6) file the storages
# after one could not be found at all ("element size is unknown"), so the
# NaN of every later tensor went unreported. Values against numpy: zip
# and legacy layouts, little- and big-endian, a strided (transposed) view.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T" <<'EOF2' || fail "could not write the checkpoints"
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.environ["NA_SRC"], "tests", "tools"))
from make_pt import Storage, Tensor, save
T = sys.argv[1]
c = np.array([1 + 2j, complex(np.nan, 0), 3 - 1j, complex(4, np.inf), -2 + 0.5j, 7j])
s = Storage(c)
w = Storage(np.array([np.nan, 1, 2], np.float32))
obj = {"c": Tensor(s, 0, (2, 3), (3, 1)), "ct": Tensor(s, 0, (3, 2), (1, 3)),
       "w": Tensor(w, 0, (3,), (1,))}
save(obj, os.path.join(T, "zip.pt"))
save(obj, os.path.join(T, "big.pt"), byteorder="big")
save(obj, os.path.join(T, "legacy.pt"), legacy=True)
EOF2

for f in zip big legacy; do
    expect_exit 1 "$NANAUDIT" scan --format json "$T/$f.pt"
    cp "$T/stdout" "$T/$f.json"
    "$NA_PYTHON" - "$T/$f.json" <<'EOF2' || fail "$f.pt: values differ from numpy"
import json, sys
import numpy as np
j = json.load(open(sys.argv[1]))
ts = {t["name"]: t for t in j["files"][0]["tensors"]}
c = np.array([1 + 2j, complex(np.nan, 0), 3 - 1j, complex(4, np.inf), -2 + 0.5j, 7j])
want = {"c": c.reshape(2, 3), "ct": c.reshape(2, 3).T}
assert list(ts) == ["c.real", "c.imag", "ct.real", "ct.imag", "w"], list(ts)
for name, a in want.items():
    for part, x in (("real", a.real), ("imag", a.imag)):
        t = ts[name + "." + part]
        v = x[np.isfinite(x)]
        got = (t["dtype"], t["shape"], t["nan"], t["pos_inf"], t["finite"], t["min"], t["max"])
        exp = ("F64", list(x.shape), int(np.isnan(x).sum()), int(np.isposinf(x).sum()),
               int(v.size), float(v.min()), float(v.max()))
        assert got == exp, (name, part, got, exp)
        assert abs(t["mean"] - v.mean()) <= 1e-12 * (abs(v.mean()) + v.std()), (name, part)
        assert abs(t["std"] - v.std()) <= 1e-12 * (abs(v.mean()) + v.std()), (name, part)
        nl = [list(map(int, i)) for i in np.argwhere(np.isnan(x))]
        assert t["nan_locations"] == nl, (name, part, t["nan_locations"], nl)
assert ts["w"]["nan"] == 1 and ts["w"]["nan_locations"] == [[0]]
EOF2
done
expect_exit 1 "$NANAUDIT" scan "$T/legacy.pt"
expect_stdout_contains "FAIL c.real: 1 NaN value (first at [0, 1])"
expect_stdout_contains "FAIL c.imag: 1 +Inf value (first at [1, 0])"
expect_stdout_contains "FAIL ct.real: 1 NaN value (first at [1, 0])"
expect_stdout_contains "FAIL w: 1 NaN value (first at [0])"
expect_exit 0 "$NANAUDIT" info "$T/zip.pt"
expect_stdout_contains "c.real   F64    [2,3]  48"
# a sharded checkpoint's index names the complex tensor once ("c"): its
# parts match it, as a safetensors C64 tensor's do (cli/shards.c)
mkdir "$T/sh"
cp "$T/zip.pt" "$T/sh/pytorch_model-00001-of-00001.bin"
printf '{"weight_map": {"c": "%s", "ct": "%s", "w": "%s"}}' pytorch_model-00001-of-00001.bin \
    pytorch_model-00001-of-00001.bin pytorch_model-00001-of-00001.bin \
    >"$T/sh/pytorch_model.bin.index.json"
expect_exit 1 "$NANAUDIT" scan "$T/sh/pytorch_model.bin.index.json"
expect_stdout_contains "FAIL c.real: 1 NaN value (first at [0, 1])"
expect_stderr_lacks "index"
expect_exit 0 "$NANAUDIT" info "$T/sh/pytorch_model.bin.index.json"
pass
