#!/bin/bash
# nanaudit info --format json (round 38a LOW: info had no machine-readable
# form): one JSON object on stdout with the facts of the text table, every
# entry checked against the file's own header (safetensors: the JSON header
# read in Python; HDF5: h5py), errors in the entries they belong to and
# exit_code equal to the process's.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
make_st m.safetensors '{"metadata":{"format":"pt","step":"1000"},"tensors":[
 {"name":"embed.weight","dtype":"BF16","shape":[4,2],"values":[1,2,3,4,5,6,7,8]},
 {"name":"z","dtype":"C64","shape":[2],"values":[1,2]},
 {"name":"s","dtype":"I64","shape":[],"values":[3]},
 {"name":"e","dtype":"F16","shape":[0,3],"values":[]}]}'
expect_exit 0 "$N" info --format json m.safetensors
expect_stderr_empty
"$NA_PYTHON" - "$T/stdout" <<'PY' || fail "safetensors entries differ from the header"
import json, struct, sys
j = json.load(open(sys.argv[1]))
assert j["schema_version"] == 1 and j["command"] == "info", j
assert j["tool"]["name"] == "nanaudit"
f, = j["files"]
raw = open("m.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
assert f["path"] == "m.safetensors" and f["format"] == "safetensors", f
assert f["status"] == "ok" and f["error"] is None and f["index"] is None, f
assert f["metadata"] == h.pop("__metadata__"), f["metadata"]
want = []
for name, e in h.items():
    b = e["data_offsets"][1] - e["data_offsets"][0]
    if e["dtype"] == "C64":  # listed as its parts, as scan lists them
        want += [(name + p, "F32", e["shape"], b // 2, "C64") for p in (".real", ".imag")]
    else:
        want.append((name, e["dtype"], e["shape"], b, None))
got = [(t["name"], t["dtype"], t["shape"], t["bytes"], t["stored_dtype"]) for t in f["tensors"]]
assert sorted(got) == sorted(want), (got, want)
for t in f["tensors"]:
    el = 1
    for d in t["shape"]:
        el *= d
    assert t["elements"] == el and t["status"] == "ok" and t["reason"] is None, t
    assert t["layout"] is None and t["aliases"] == [] and t["sequences"] is None, t
assert f["bytes"] == sum(w[3] for w in want), f["bytes"]
assert j["summary"] == {"files": 1, "tensors": 5, "bytes": f["bytes"], "errors": 0,
                        "exit_code": 0}, j["summary"]
assert j["error"] is None and j["indexes"] == [] and j["skipped"] == []
PY

# HDF5: datasets, their layout line, hard links, notes, a string dataset
# and a variable-length one, against h5py
"$NA_PYTHON" - <<'PY' || fail "making the HDF5 file"
import h5py, numpy as np
with h5py.File("g.h5", "w") as f:
    f.create_dataset("a/x", data=np.arange(12.0).reshape(3, 4), chunks=(1, 4), compression="gzip")
    f["b"] = f["a/x"]
    f["s"] = np.array([b"one", b"two"])
    v = f.create_dataset("v", (2,), dtype=h5py.vlen_dtype(np.float32))
    v[0] = [1, 2, 3]
    v[1] = [4]
    f["ext"] = h5py.ExternalLink("other.h5", "/y")
PY
expect_exit 0 "$N" info --format json g.h5
"$N" info g.h5 > text.txt || fail "text listing"
"$NA_PYTHON" - "$T/stdout" <<'PY' || fail "HDF5 entries differ from h5py"
import json, sys, h5py
j = json.load(open(sys.argv[1]))
f, = j["files"]
t = {e["name"]: e for e in f["tensors"]}
assert sorted(t) == ["/a/x", "/s", "/v"], sorted(t)
with h5py.File("g.h5") as h:
    x = h["a/x"]
    assert t["/a/x"]["shape"] == list(x.shape) and t["/a/x"]["dtype"] == "F64"
    assert t["/a/x"]["bytes"] == x.size * 8 and t["/a/x"]["elements"] == x.size
assert t["/a/x"]["aliases"] == ["/b"] and t["/a/x"]["aliases_more"] == 0, t["/a/x"]
text = open("text.txt").read()
assert t["/a/x"]["layout"] and "      " + t["/a/x"]["layout"] + "\n" in text, t["/a/x"]["layout"]
assert t["/a/x"]["layout"].startswith("chunked [1,4] 3/3 chunks allocated filters=deflate("), t["/a/x"]["layout"]
assert t["/s"]["status"] == "skipped" and t["/s"]["dtype"] is None and t["/s"]["reason"], t["/s"]
assert t["/v"]["status"] == "ok" and t["/v"]["sequences"] == 2 and t["/v"]["bytes"] is None, t["/v"]
assert t["/v"]["shape"] == [2], t["/v"]
assert f["notes"] == ["/ext: external link to other.h5:/y, not followed"], f["notes"]
assert j["summary"]["errors"] == 0 and j["summary"]["exit_code"] == 0
PY

# an HDF5 null dataspace: shape [] like a scalar, but 0 elements, as scan
# reports it (round 44a: elements 1)
expect_exit 0 "$N" info --format json "$NA_TEST_DATA/real/hdf5/hdfgroup-tnullspace.h5"
expect_json "$T/stdout" '[(t["shape"], t["elements"], t["bytes"]) for t in j["files"][0]["tensors"]]' '[[[], 0, 0]]'
expect_exit 0 "$N" scan --format json "$NA_TEST_DATA/real/hdf5/hdfgroup-tnullspace.h5"
expect_json "$T/stdout" '[t["elements"] for t in j["files"][0]["tensors"]]' '[0]'

# an index with a missing shard, a broken file, a file that is no data and
# a file name that is not UTF-8: exit 3, each error in its own entry
mkdir shards && cp "$NA_TEST_DATA"/shards/missing_shard/* shards/
printf 'notes\n' > shards/README.txt
make_st bad.safetensors '{"header":"{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}","tensors":[]}'
cp m.safetensors "$(printf 'n\xffme.safetensors')"
expect_exit 3 "$N" info --format json shards bad.safetensors "$(printf 'n\xffme.safetensors')"
expect_stderr_contains "nanaudit: shards/model.safetensors.index.json: missing shard file 'model-00002-of-00002.safetensors'"
expect_stderr_contains "nanaudit: bad.safetensors: "
"$NA_PYTHON" - "$T/stdout" <<'PY' || fail "error entries"
import json, sys
j = json.load(open(sys.argv[1]))
ix, = j["indexes"]
assert ix["path"] == "shards/model.safetensors.index.json" and ix["shards"] == 2, ix
assert ix["status"] == "error" and "missing shard file 'model-00002-of-00002" in ix["error"], ix
f = {e["path"]: e for e in j["files"]}
assert sorted(f) == ["bad.safetensors", "n\\xffme.safetensors",
                     "shards/model-00001-of-00002.safetensors"], sorted(f)
s = f["shards/model-00001-of-00002.safetensors"]
assert s["status"] == "ok" and s["index"] == ix["path"], s
b = f["bad.safetensors"]
assert b["status"] == "error" and b["error"] and b["format"] is None and b["tensors"] == [], b
assert j["skipped"] == [{"path": "shards/README.txt", "reason": j["skipped"][0]["reason"]}], j["skipped"]
assert j["summary"]["errors"] == 2 and j["summary"]["exit_code"] == 3, j["summary"]
assert j["error"] is None
PY

# a file that is no data, named alone, is its error; a directory of such
# files is the run's own error ("nothing to show"); exit 3, one JSON object
expect_exit 3 "$N" info --format json shards/README.txt
expect_json "$T/stdout" '[j["error"], j["summary"]["exit_code"], j["files"][0]["status"], j["files"][0]["tensors"], j["files"][0]["metadata"]]' '[null, 3, "error", [], {}]'
mkdir nodata && cp shards/README.txt nodata/
expect_exit 3 "$N" info --format json nodata
expect_json "$T/stdout" '[j["error"], j["files"], len(j["skipped"]), j["summary"]["errors"], j["summary"]["exit_code"]]' '["nodata: nothing to show: no supported data file", [], 1, 1, 3]'
expect_exit 3 "$N" info --format json missing.safetensors
expect_json "$T/stdout" '[j["files"][0]["path"], j["files"][0]["status"], j["summary"]["errors"]]' '["missing.safetensors", "error", 1]'
# text stays the default; github is scan's only
expect_exit 0 "$N" info --format text m.safetensors
expect_stdout_contains "m.safetensors (safetensors, "
expect_exit 2 "$N" info --format github m.safetensors
expect_stderr_contains "text or json"
pass
