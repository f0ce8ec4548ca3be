#!/bin/bash
# HDF5 string datasets beside the data (issue 4, the seventh fresh-user
# round: "--together: '/ids' is not cleaned (string data)", and
# --allow-misaligned left /ids at 100 rows beside /x at 97). Named by
# --together, a dataset whose values clean does not read (variable- and
# fixed-length strings, UTF-8, rank 2, a vlen sequence, chunked and
# compressed) loses the samples its partners drop: checked against numpy,
# with its type, creation properties and attributes kept; not named, the
# drop is refused with the --together hint; references, scalars and other
# row counts are refused with one line. The same for .npz arrays of a
# fixed-size dtype (strings, bytes, void); object and Fortran-order ones
# are refused.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py
import numpy as np
rng = np.random.default_rng(11)
x = rng.normal(size=(100, 3))
x[[5, 17, 40], [1, 0, 2]] = np.nan
x[63, 0] = 40.0                       # an outlier at --zscore 4
with h5py.File("lab.h5", "w") as f:
    f["x"] = x
    f["y"] = np.arange(100, dtype=np.int64)
    f.create_dataset("ids", data=np.array(["id%03d" % i for i in range(100)], dtype=object),
                     dtype=h5py.string_dtype(), chunks=(64,), compression="gzip")
    f["ids"].attrs["note"] = "sample ids"
    f["fixed"] = np.array([b"r%05d" % i for i in range(100)])
    f.create_dataset("utf8", data=np.array(["é%d" % i for i in range(100)], dtype=object),
                     dtype=h5py.string_dtype("utf-8"))
    f.create_dataset("pairs", data=np.array([["a%d" % i, "b%d" % i] for i in range(100)],
                                            dtype=object), dtype=h5py.string_dtype())
    seq = f.create_dataset("seq", (100,), dtype=h5py.vlen_dtype(np.int32))
    for i in range(100):
        seq[i] = np.arange(i % 4, dtype=np.int32)
    f["short"] = np.array([b"s%d" % i for i in range(50)])
    f["scalar"] = b"one string"
with h5py.File("lzf.h5", "w") as f:  # h5py's lzf: not in libhdf5
    f["x"] = x
    f.create_dataset("s", data=np.array(["s%d" % i for i in range(100)], dtype=object),
                     dtype=h5py.string_dtype(), compression="lzf")
with h5py.File("refs.h5", "w") as f:
    f["x"] = x
    f.create_dataset("refs", data=[f["x"].ref] * 100, dtype=h5py.ref_dtype)
keep = np.isfinite(x).all(1)
np.save("keep.npy", keep)
xk = x[keep]
k2 = np.abs(xk - xk.mean(0)) <= 4 * xk.std(0)
keepz = keep.copy()
keepz[np.flatnonzero(keep)[~k2.all(1)]] = False
np.save("keepz.npy", keepz)
PY
N="$NANAUDIT"

# Not named: the drop would misalign them, and --together is the hint.
expect_exit 2 "$N" clean lab.h5 -o out.h5 --include /x
expect_stderr_contains "dropping 3 samples from '/x' would misalign it with '/fixed', '/ids', '/pairs' and 3 more (all have 100 rows); use --allow-misaligned if they are unrelated, --together to drop from all"
expect_exit 2 "$N" clean lab.h5 -o out.h5 --together /x,/y,/fixed,/ids
expect_stderr_contains "dropping 3 samples from '/x' would misalign it with '/pairs', '/seq' and '/utf8' (all have 100 rows); use --allow-misaligned if they are unrelated, --together to drop from all"
[ ! -e out.h5 ] || fail "refused run wrote output"

ALL=/x,/y,/ids,/fixed,/utf8,/pairs,/seq
check() { # OUT KEEP: every member of ALL in OUT is the input's rows KEEP
    "$NA_PYTHON" - "$1" "$2" <<'PY' || fail "aligned output $1"
import sys
import h5py
import numpy as np
keep = np.load(sys.argv[2])
with h5py.File("lab.h5") as f, h5py.File(sys.argv[1]) as g:
    n = int(keep.sum())
    for k in ["y", "ids", "fixed", "utf8", "pairs"]:
        assert g[k].dtype == f[k].dtype, (k, g[k].dtype)
        assert g[k].shape == (n,) + f[k].shape[1:], (k, g[k].shape)
        np.testing.assert_array_equal(g[k][()], f[k][()][keep])
    assert h5py.check_string_dtype(g["utf8"].dtype).encoding == "utf-8"
    assert [list(a) for a in g["seq"][()]] == [list(a) for a in f["seq"][()][keep]]
    assert g["ids"].chunks == (64,) and g["ids"].compression == "gzip"
    assert g["ids"].attrs["note"] == "sample ids"
    # not named: copied whole
    for k in ["short", "scalar"]:
        assert g[k].shape == f[k].shape and g[k].dtype == f[k].dtype, k
    np.testing.assert_array_equal(g["short"][()], f["short"][()])
    assert g["scalar"][()] == b"one string"
PY
}

# Non-finite drop: three rows gone from every member.
expect_exit 0 "$N" clean lab.h5 --together $ALL --exclude /y -o out.h5 --report rep.json
check out.h5 keep.npy
expect_stdout_contains "/ids: copied: string data, named by --together: loses the samples its partners drop, values copied"
expect_stdout_contains "dropped 3 samples (non-finite 0, outliers 0, together 3), first 5 17 40"
expect_json rep.json '[[e["name"], e["status"], e.get("out_shape"), e.get("samples_dropped", {}).get("together")] for e in j["tensors"] if e["name"] in ("/ids", "/pairs", "/short", "/x")]' \
    '[["/ids", "copied", [97], 3], ["/pairs", "copied", [97, 2], 3], ["/short", "copied", null, null], ["/x", "cleaned", [97, 3], 0]]'
expect_json rep.json '[e["samples_dropped"]["first"] for e in j["tensors"] if e["name"] == "/seq"]' '[[5, 17, 40]]'
expect_json rep.json '[e["dtype"] for e in j["tensors"] if e["name"] in ("/ids", "/x")]' '[null, "F64"]'

# Outliers too, and a glob for the group; -q still shows the followers.
expect_exit 0 "$N" clean lab.h5 --zscore 4 --together '/[xyifup]*,/seq' --exclude /y -o outz.h5 -q
check outz.h5 keepz.npy
expect_stdout_contains "/fixed: copied: string data, named by --together"

# --dry-run: the same report, no file.
expect_exit 0 "$N" clean lab.h5 --together $ALL --exclude /y -o dry.h5 --dry-run
expect_stdout_contains "dropped 3 samples (non-finite 0, outliers 0, together 3), first 5 17 40"
[ ! -e dry.h5 ] || fail "--dry-run wrote output"

# Nothing dropped: the string dataset is copied whole (H5Ocopy).
expect_exit 0 "$N" clean lab.h5 --nonfinite zero --together /x,/ids -o zero.h5
"$NA_PYTHON" - <<'PY' || fail "nothing dropped"
import h5py, numpy as np
with h5py.File("lab.h5") as f, h5py.File("zero.h5") as g:
    np.testing.assert_array_equal(g["ids"][()], f["ids"][()])
    assert g["x"].shape == (100, 3)
PY

# Refused, one line each, nothing written.
expect_exit 2 "$N" clean refs.h5 --together /x,/refs -o bad.h5
expect_stderr_contains "refs.h5: --together: '/refs' is not cleaned (references), so it cannot lose samples with its partners"
# and the misalignment hint does not suggest --together for it
expect_exit 2 "$N" clean refs.h5 -o bad.h5
expect_stderr_contains "would misalign it with '/refs' (both have 100 rows), which clean copies unchanged (references); use --allow-misaligned if they are unrelated"
expect_exit 3 "$N" clean lzf.h5 --together /x,/s -o bad.h5
expect_stderr_contains "lzf.h5: /s: HDF5 filter 32000 (lzf) is not available in this libhdf5 (plugins are searched in HDF5_PLUGIN_PATH); clean cannot copy its rows; nothing written"
expect_exit 2 "$N" clean lab.h5 --together /x,/scalar -o bad.h5
expect_stderr_contains "--together: '/scalar' is a scalar (string data): it has no sample axis to lose samples from"
expect_exit 2 "$N" clean lab.h5 --together /x,/short -o bad.h5
expect_stderr_contains "--together: '/short' has 50 samples and '/x' 100; grouped tensors must share the sample axis"
[ ! -e bad.h5 ] || fail "refused run wrote output"

# Compound records (tester round 8: exit 4, "/sr.a: no dataset of that
# name"): a compound of strings follows as whole records when every field
# is named; strings beside cleaned numeric fields keep their rows with
# them; a field left out is refused.
"$NA_PYTHON" - <<'PY' || fail "making compound inputs"
import h5py
import numpy as np
rng = np.random.default_rng(5)
x = rng.normal(size=(50, 2))
x[[3, 9, 20], 0] = np.nan
sr = np.zeros(50, dtype=[("a", "S3"), ("b", h5py.string_dtype())])
sr["a"] = [b"a%d" % i for i in range(50)]
sr["b"] = ["b%d" % i for i in range(50)]
rec = np.zeros(50, dtype=[("name", h5py.string_dtype()), ("k", "<i4"), ("v", "<f8")])
rec["name"] = ["n%d" % i for i in range(50)]
rec["k"] = np.arange(50)
rec["v"] = np.arange(50) * 0.5
rec["v"][7] = np.nan
with h5py.File("sr.h5", "w") as f:
    f["x"] = x
    f.create_dataset("sr", data=sr, chunks=(16,))
with h5py.File("rec.h5", "w") as f:
    f["x"] = x
    f["rec"] = rec
PY
expect_exit 0 "$N" clean sr.h5 --together '/x,/sr*' -o sr.out.h5
expect_stdout_contains "/sr.b: copied: string data, named by --together"
expect_exit 2 "$N" clean sr.h5 --together /x,/sr.a -o bad.h5
expect_stderr_contains "dropping 3 samples from '/x' would misalign it with '/sr.b' (both have 50 rows); use --allow-misaligned if they are unrelated, --together to drop from both"
expect_exit 2 "$N" clean sr.h5 --together /x,/sr.a -o bad.h5 --allow-misaligned
expect_stderr_contains "sr.h5: /sr: 1 of its 2 fields follow --together, and clean drops whole records: name them all ('/sr.*'); nothing written"
expect_exit 0 "$N" clean rec.h5 --together '/x,/rec*' --max-drop-fraction 0.2 -o rec.out.h5
expect_stdout_contains "/rec.name: copied: string data, named by --together"
"$NA_PYTHON" - <<'PY' || fail "compound rows"
import h5py
import numpy as np
with h5py.File("sr.h5") as a, h5py.File("sr.out.h5") as b:
    keep = np.isfinite(a["x"][()]).all(1)
    assert b["sr"].dtype == a["sr"].dtype and b["sr"].chunks == (16,)
    np.testing.assert_array_equal(b["sr"][()], a["sr"][()][keep])
with h5py.File("rec.h5") as a, h5py.File("rec.out.h5") as b:
    r = a["rec"][()]
    keep = np.isfinite(a["x"][()]).all(1) & np.isfinite(r["v"])
    assert keep.sum() == 46 and b["rec"].dtype == a["rec"].dtype
    got = b["rec"][()]
    assert list(got["name"]) == list(r["name"][keep])
    np.testing.assert_array_equal(got["k"], r["k"][keep])
    np.testing.assert_array_equal(got["v"], r["v"][keep])
    np.testing.assert_array_equal(b["x"][()], a["x"][()][keep])
PY

# .npz (savez and savez_compressed): fixed-size strings, bytes, void and
# rank-2 strings follow; other members stay byte-identical raw copies.
"$NA_PYTHON" - <<'PY' || fail "making npz inputs"
import numpy as np
x = np.load("keep.npy")  # rows kept
rng = np.random.default_rng(11)
v = rng.normal(size=(100, 3))
v[~x, 0] = np.nan
ids = np.array(["é%03d" % i for i in range(100)])
for name, save in (("lab.npz", np.savez), ("labc.npz", np.savez_compressed)):
    save(name, x=v, ids=ids, b=np.array([b"r%d" % i for i in range(100)]),
         v=np.frombuffer(bytes(range(256)) * 3, "V3")[:100].copy(),
         pairs=np.array([["a%d" % i, "b%d" % i] for i in range(100)]),
         other=np.arange(7))
np.savez("obj.npz", x=v, o=np.array([{"a": i} for i in range(100)], dtype=object))
np.savez("fort.npz", x=v, f=np.asfortranarray(np.array([["a%d" % i, "b"] for i in range(100)])))
PY
for z in lab.npz labc.npz; do
    expect_exit 0 "$N" clean $z --together x,ids,b,v,pairs -o out.$z
    expect_stdout_contains "ids: copied: dtype <U4 is not numeric data (string, bytes, void or datetime), named by --together: loses the samples its partners drop, values copied"
    "$NA_PYTHON" - $z out.$z <<'PY' || fail "npz rows of $z"
import sys, zipfile
import numpy as np
keep = np.load("keep.npy")
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert list(a) == list(b), (list(a), list(b))
for k in ["ids", "b", "v", "pairs"]:
    assert b[k].dtype == a[k].dtype and b[k].shape == (97,) + a[k].shape[1:], k
    np.testing.assert_array_equal(b[k], a[k][keep])
np.testing.assert_array_equal(b["x"], a["x"][keep])
za, zb = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])
assert zb.testzip() is None
assert za.read("other.npy") == zb.read("other.npy")
assert za.getinfo("ids.npy").compress_type == zb.getinfo("ids.npy").compress_type
hdr = zb.read("ids.npy")[:128]
assert hdr[6] == 1 and (10 + int.from_bytes(hdr[8:10], "little")) % 64 == 0, hdr
PY
done
# A header written without numpy's spacing (other writers) still works.
"$NA_PYTHON" - <<'PY' || fail "making hdr.npz"
import zipfile
import numpy as np
def npy(header, data):
    h = header.encode("latin1")
    h += b" " * (64 - (10 + len(h) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data
x = np.arange(40.0).reshape(20, 2)
x[[2, 5], 0] = np.nan
ids = np.array(["a%02d" % i for i in range(20)])
with zipfile.ZipFile("hdr.npz", "w") as z:
    z.writestr("x.npy", npy("{'descr':'<f8','fortran_order':False,'shape':(20,2)}", x.tobytes()))
    z.writestr("ids.npy", npy("{'descr':'<U3','fortran_order':False,'shape':(20,)}", ids.tobytes()))
PY
expect_exit 0 "$N" clean hdr.npz --together x,ids -o hdr.out.npz
"$NA_PYTHON" - <<'PY' || fail "hdr.out.npz"
import numpy as np
a, b = np.load("hdr.npz"), np.load("hdr.out.npz")
keep = np.isfinite(a["x"]).all(1)
np.testing.assert_array_equal(b["ids"], a["ids"][keep])
assert b["ids"].shape == (18,)
PY
expect_exit 2 "$N" clean obj.npz --together x,o -o bad.npz
expect_stderr_contains "obj.npz: --together: 'o' is not cleaned (object array (dtype |O) holds pickled Python objects: never unpickled, not audited), so it cannot lose samples with its partners"
expect_exit 2 "$N" clean obj.npz -o bad.npz
expect_stderr_contains "obj.npz: dropping 3 samples from 'x' would misalign it with 'o' (both have 100 rows), which clean copies unchanged (object array (dtype |O) holds pickled Python objects: never unpickled, not audited); use --allow-misaligned if they are unrelated"
expect_exit 2 "$N" clean fort.npz --together x,f -o bad.npz
expect_stderr_contains "fort.npz: f: a Fortran-order array, whose rows are not contiguous; leave it out of --together; nothing written"
[ ! -e bad.npz ] || fail "refused run wrote output"
ls -a | grep -q nanaudit-tmp && fail "temporary file left"
pass
