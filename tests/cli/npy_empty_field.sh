#!/bin/bash
# A structured .npy/.npz field named '' (round 30a HIGH): numpy drops it as
# padding only when its type is void without fields or a subarray
# (numpy/lib/format.py, descr_to_dtype); ('', '<f4') is a field np.load
# returns as a[''], and a titled (('t', ''), '<f4') too. nanaudit dropped
# every '' field, so a NaN there passed with exit 0. It is audited as
# NAME. (nested: NAME..a); the padding cases stay unaudited, as numpy
# never returns them.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making the inputs"
import io, struct, zipfile
import numpy as np
def npy(descr, data):
    h = ("{'descr': %s, 'fortran_order': False, 'shape': (1,)}" % descr).encode("latin1")
    h += b" " * ((-(10 + len(h) + 1)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
nan1 = np.array([np.nan, 1], "<f4").tobytes()
files = {
    "f4.npy": npy("[('', '<f4'), ('y', '<f4')]", nan1),
    "title.npy": npy("[(('t', ''), '<f4'), ('y', '<f4')]", nan1),
    "nested.npy": npy("[('', [('a', '<f4')]), ('y', '<f4')]", nan1),
    "void.npy": npy("[('', '|V4'), ('y', '<f4')]", nan1),
    "sub.npy": npy("[('', '<f4', (1,)), ('y', '<f4')]", nan1),
}
for name, b in files.items():
    open(name, "wb").write(b)
with zipfile.ZipFile("m.npz", "w") as z:
    z.writestr("arr.npy", files["f4.npy"])
# what numpy returns
assert np.isnan(np.load("f4.npy")[""]).all() and np.isnan(np.load("title.npy")[""]).all()
assert np.isnan(np.load("nested.npy")[""]["a"]).all()
assert np.load("void.npy").dtype.names == ("y",) and np.load("sub.npy").dtype.names == ("y",)
PY
for f in f4 title; do
    expect_exit 1 "$NANAUDIT" scan --format json "$f.npy"
    expect_json "$T/stdout" '[(t["name"], t["nan"]) for t in j["files"][0]["tensors"]]' '[["data.", 1], ["data.y", 0]]'
done
expect_exit 1 "$NANAUDIT" scan --format json nested.npy
expect_json "$T/stdout" '[(t["name"], t["nan"]) for t in j["files"][0]["tensors"]]' '[["data..a", 1], ["data.y", 0]]'
for f in void sub; do
    expect_exit 0 "$NANAUDIT" scan --format json "$f.npy"
    expect_json "$T/stdout" '[t["name"] for t in j["files"][0]["tensors"]]' '["data.y"]'
done
expect_exit 1 "$NANAUDIT" scan --format json m.npz
expect_json "$T/stdout" '[(t["name"], t["nan"]) for t in j["files"][0]["tensors"]]' '[["arr.", 1], ["arr.y", 0]]'
pass
