#!/bin/bash
# HDF5 variable-length numeric data (h5py.vlen_dtype(np.float32): each
# element of the dataset a sequence of its own length). scan refused it
# ("variable-length numeric data is not supported", exit 3) while clean
# copied it with exit 0, so a NaN inside a sequence was never found. Now
# scan audits the concatenation of the sequences in row-major order of the
# elements (numpy: np.concatenate of d[...].ravel()) as a 1-D tensor:
# every count and statistic, outliers and locations (indices into the
# concatenation) checked against numpy, for F32, F64, >f4, int16, F16,
# empty sequences, all empty, a 2-D dataset of sequences, and a chunked
# gzip dataset larger than one 64 MiB window, so that windows and the
# reader's batches (NANAUDIT_HDF5_VLEN_BATCH) cut sequences. The report
# says it is variable-length (a note, JSON "variable_length"); info shows
# the dataset's shape and "variable-length, N sequences"; clean copies it
# unchanged, exit 1 when it holds NaN/Inf. Sequences of compounds, arrays
# or sequences, and ones in attributes or compound members, stay errors;
# of strings, skipped. A damaged global heap, a damaged length, a sequence
# larger than one read: one line naming the dataset, exit 3.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np
from h5py import h5d, h5s, h5t
rng = np.random.default_rng(5)
REF = {}  # what was written: name -> concatenation, name/shape -> shape
def put(f, name, seqs, dt, shape=None, **kw):
    shape = shape or (len(seqs),)
    d = f.create_dataset(name, shape, dtype=h5py.vlen_dtype(dt), **kw)
    seqs = [np.asarray(s, dtype=dt) for s in seqs]
    REF[name] = (np.concatenate(seqs) if seqs else np.zeros(0)).astype(dt)
    REF[name + "/shape"] = np.array(shape)
    if len({len(s) for s in seqs}) == 1:  # h5py would take them as one array
        for i, s in enumerate(seqs):
            d[np.unravel_index(i, shape)] = s
        return
    a = np.empty(len(seqs), dtype=object)
    a[:] = seqs
    d[...] = a.reshape(shape)
with h5py.File("v.h5", "w") as f:
    put(f, "f32", [[1, 2, 3], [], [4, np.nan, 5, np.inf, 6], [-1.5e-40, 0, 100], [7]], "<f4")
    put(f, "f64", [rng.normal(size=n) for n in (10, 0, 3, 40, 1)], "<f8")
    put(f, "be", [[1, 2], [3], [], [4, 5, 6, -np.inf]], ">f4")
    put(f, "i16", [[1, -2, 3], [30000], [], [0, 0, -32768]], "<i2")
    put(f, "f16", [[1, 6e-8, 2], [np.nan], [65504, -3e-6]], "<f2")
    put(f, "empty", [[], [], [], []], "<f4")
    put(f, "grid", [[1], [2, 3], [], [4, 5, 6], [np.nan], [8, 9]], "<f4", shape=(2, 3))
    gz = [rng.normal(size=rng.integers(0, 30)) for _ in range(3000)]
    gz[1234] = [np.nan, 50.0, 1.0]
    put(f, "gz", gz, "<f4", chunks=(256,), compression="gzip")
    # not supported (fail closed) or not numbers (skipped)
    sp = h5s.create_simple((2,))
    for name, tid in [("nest", h5t.vlen_create(h5t.vlen_create(h5t.NATIVE_FLOAT))),
                      ("arr", h5t.vlen_create(h5t.array_create(h5t.NATIVE_FLOAT, (2,)))),
                      ("cmp", h5t.vlen_create(h5py.h5t.py_create(np.dtype([("a", "<f4")])))),
                      ("str", h5t.vlen_create(h5py.h5t.py_create(np.dtype("S4"))))]:
        h5d.create(f.id, name.encode(), tid, sp)
    f.create_dataset("rec", (2,), dtype=np.dtype([("a", "<f4"), ("b", h5py.vlen_dtype(np.float32))]))
    f["plain"] = np.arange(3.0)
    va = np.empty(2, dtype=object)
    va[0], va[1] = np.array([1, 2], np.float32), np.array([3], np.float32)
    f["plain"].attrs.create("va", va, dtype=h5py.vlen_dtype(np.float32))
# the supported ones alone, for exact comparison
with h5py.File("v.h5", "r") as f, h5py.File("ok.h5", "w") as g:
    for k in ("f32", "f64", "be", "i16", "f16", "empty", "grid", "gz"):
        f.copy(f[k], g, k)
np.savez("ok.npz", **REF)
REF.clear()
# larger than one 64 MiB window of F64 (8388608 values), chunked + gzip;
# a sequence spans the window boundary, NaN on both sides of it
n = 120000
lens = rng.integers(0, 150, n)
pre = np.concatenate([[0], np.cumsum(lens)])
W = 8388608
r = np.searchsorted(pre, W, side="right") - 1
if pre[r] == W:
    lens[r - 1] += 1
    pre = np.concatenate([[0], np.cumsum(lens)])
    r = np.searchsorted(pre, W, side="right") - 1
assert pre[r] < W < pre[r + 1], (pre[r], pre[r + 1])
vals = rng.normal(size=pre[-1])
vals[[W - 1, W, W + 1]] = np.nan
vals[5] = np.inf
with h5py.File("big.h5", "w") as f:
    put(f, "big", np.split(vals, pre[1:-1]), "<f8", chunks=(4096,), compression="gzip")
np.savez("big.npz", **REF)
REF.clear()
# where the lengths come from H5Dread (compact storage), shuffle + gzip
# (which libhdf5 leaves out of vlen chunks: filter mask 1) and a sparse
# dataset (3 of 50 chunks written, 20 blocks of 256 rows of which most
# hold no value: stepped over)
from h5py import h5p
with h5py.File("more.h5", "w") as f:
    put(f, "fl", [[1, 2], [np.nan], [], [3, 4, 5], [-7]], "<f4", chunks=(2,), shuffle=True,
        compression="gzip")
    dcpl = h5p.create(h5p.DATASET_CREATE); dcpl.set_layout(h5d.COMPACT)
    h5d.create(f.id, b"compact", h5t.vlen_create(h5t.NATIVE_DOUBLE), h5s.create_simple((3,)),
               dcpl=dcpl)
    f["compact"][0] = np.array([1.5, np.inf]); f["compact"][2] = np.array([2.5, 3, 4])
    REF["compact"] = np.array([1.5, np.inf, 2.5, 3, 4]); REF["compact/shape"] = np.array([3])
    sp = f.create_dataset("sparse", (5000,), dtype=h5py.vlen_dtype(np.float32), chunks=(100,))
    sp[10] = np.array([1, 2, 3], np.float32); sp[4950] = np.array([np.nan, 9], np.float32)
    sp[4999] = np.array([4], np.float32)
    REF["sparse"] = np.array([1, 2, 3, np.nan, 9, 4], np.float32)
    REF["sparse/shape"] = np.array([5000])
np.savez("more.npz", **REF)
with h5py.File("huge.h5", "w") as f:  # nothing written: more rows than kept
    f.create_dataset("s", (2**32 + 1,), dtype=h5py.vlen_dtype(np.float32), chunks=(2**20,))
PY

# numpy's view: the concatenation of the sequences written (h5py reads
# them back so too: np.concatenate of d[...].ravel(), except that it
# labels a >f4 sequence native), statistics over the finite values,
# population std, z-score outliers at K
cat > ref.py <<'PY'
import json, sys, numpy as np
rep, ref, K = json.load(open(sys.argv[1])), np.load(sys.argv[2]), float(sys.argv[3])
tens = {t["name"]: t for t in rep["files"][0]["tensors"]}
assert sorted(tens) == sorted("/" + k for k in ref.files if "/" not in k), sorted(tens)
for name in (k for k in ref.files if "/" not in k):
    t, x, shape = tens["/" + name], ref[name], [int(n) for n in ref[name + "/shape"]]
    base = x.dtype
    v = x.astype(np.float64)
    fin = v[np.isfinite(v)]
    def eq(k, want):
        assert t[k] == want, (name, k, t[k], want)
    eq("status", "ok")
    eq("dtype", {"f": "F", "i": "I", "u": "U"}[base.kind] + str(8 * base.itemsize))
    eq("byte_order", "big" if base.byteorder == ">" else "little")
    eq("shape", [len(x)]); eq("elements", len(x))
    eq("variable_length", {"sequences": int(np.prod(shape)), "shape": shape})
    eq("nan", int(np.isnan(v).sum())); eq("pos_inf", int((v == np.inf).sum()))
    eq("neg_inf", int((v == -np.inf).sum())); eq("finite", len(fin))
    eq("zeros", int((v == 0).sum()))
    tiny = np.finfo(base).tiny if base.kind == "f" else 0
    eq("subnormal", int(((fin != 0) & (np.abs(fin) < tiny)).sum()))
    eq("nan_locations", [[int(i)] for i in np.flatnonzero(np.isnan(v))[:5]])
    eq("inf_locations", [[int(i)] for i in np.flatnonzero(np.isinf(v))[:5]])
    if len(fin) == 0:
        for k in ("min", "max", "mean", "std"):
            eq(k, None)
        continue
    eq("min", float(fin.min())); eq("max", float(fin.max()))
    eq("abs_max", float(np.abs(fin).max()))
    m, s = fin.mean(), fin.std()
    assert abs(t["mean"] - m) <= 1e-12 * (abs(m) + s), (name, t["mean"], m)
    assert abs(t["std"] - s) <= 1e-12 * (abs(m) + s), (name, t["std"], s)
    out = np.flatnonzero(np.isfinite(v) & (np.abs(v - m) > K * s)) if s > 0 else []
    eq("outliers", dict(t["outliers"], count=len(out),
                        locations=[[int(i)] for i in out[:5]]))
print("ok")
PY

# --- scan: every statistic against numpy -----------------------------------
expect_exit 1 "$N" scan --format json --zscore 2 ok.h5
cp stdout ok.json
"$NA_PYTHON" ref.py ok.json ok.npz 2 >/dev/null || fail "ok.h5 differs from numpy"
expect_json ok.json '[t["name"] for t in j["files"][0]["tensors"]]' \
    '["/be", "/empty", "/f16", "/f32", "/f64", "/grid", "/gz", "/i16"]'
expect_exit 1 "$N" scan --format json --zscore 2 more.h5
"$NA_PYTHON" ref.py stdout more.npz 2 >/dev/null || fail "more.h5 differs from numpy"
NANAUDIT_HDF5_VLEN_BATCH=24 expect_exit 1 "$N" scan --format json --zscore 2 more.h5
"$NA_PYTHON" ref.py stdout more.npz 2 >/dev/null || fail "more.h5 in batches of 24 bytes differs"
expect_exit 3 "$N" scan huge.h5
assert_eq "$(cat "$T/stderr")" "nanaudit: huge.h5: /s: 4294967297 variable-length sequences: more than the 4294967296 whose lengths the reader keeps" "scan of huge.h5"
expect_json ok.json 'j["files"][0]["tensors"][3]["nan_locations"]' '[[4]]'
expect_json ok.json 'j["files"][0]["tensors"][3]["inf_locations"]' '[[6]]'
expect_json ok.json 'j["files"][0]["tensors"][1]["variable_length"]' '{"sequences": 4, "shape": [4]}'
expect_json ok.json 'j["files"][0]["notes"][3]' \
    '"/f32: variable-length: 5 sequences, 12 values, audited as their concatenation"'
expect_json ok.json 'j["files"][0]["notes"][1]' \
    '"/empty: variable-length: 4 sequences, 0 values, audited as their concatenation"'
expect_json ok.json '[k for k in j["files"][0]["tensors"][0] if k == "variable_length"]' \
    '["variable_length"]'
# the reader's batches of sequences (512 bytes: the longest is 320) cut
# the rows differently: the same report
NANAUDIT_HDF5_VLEN_BATCH=512 expect_exit 1 "$N" scan --format json --zscore 2 ok.h5
cmp -s stdout ok.json || fail "NANAUDIT_HDF5_VLEN_BATCH=512 changed the report"
# text: the note, the shape of the concatenation
expect_exit 1 "$N" scan ok.h5
expect_stdout_contains "  note: /grid: variable-length: 6 sequences, 9 values, audited as their concatenation"
expect_stdout_contains "FAIL /f32: 1 NaN value (first at [4])"
expect_stderr_empty
# not supported: errors (exit 3); strings: skipped; a plain dataset has
# no "variable_length"
expect_exit 3 "$N" scan --format json v.h5
cp stdout v.json
expect_json v.json '{t["name"]: t.get("reason", t["status"]) for t in j["files"][0]["tensors"]
                    if t["name"] in ("/nest", "/arr", "/cmp", "/str", "/rec.a", "/rec.b", "/plain")}' \
    '{"/arr": "/arr: variable-length sequences of arrays are not supported", "/cmp": "/cmp: variable-length sequences of compound elements are not supported", "/nest": "/nest: variable-length sequences of variable-length sequences are not supported", "/plain": "ok", "/rec.a": "ok", "/rec.b": "/rec.b: variable-length numeric data in a compound member is not supported", "/str": "variable-length non-numeric data (string data)"}'
expect_json v.json '"variable_length" in [t for t in j["files"][0]["tensors"] if t["name"] == "/plain"][0]' 'false'
expect_exit 3 "$N" scan --attributes v.h5
expect_stderr_contains "v.h5: /plain@va: variable-length numeric data in an attribute is not supported"

# --- info: base dtype, the dataset's shape, a variable-length marker ----------
expect_exit 0 "$N" info ok.h5
expect_stdout_contains "variable-length, 6 sequences"
expect_stdout_lacks "not auditable"
L=$(grep '^  /grid ' stdout | tr -s ' ')
assert_eq "$L" " /grid F32 [2,3] variable-length, 6 sequences" "info's /grid line"
L=$(grep '^  /be ' stdout | tr -s ' ')
assert_eq "$L" " /be F32 [4] variable-length, 4 sequences" "info's /be line"

# --- a dataset larger than one window --------------------------------------
expect_exit 1 "$N" scan --format json --zscore 4 big.h5
cp stdout big.json
"$NA_PYTHON" ref.py big.json big.npz 4 >/dev/null || fail "big.h5 differs from numpy"
expect_json big.json 'j["files"][0]["tensors"][0]["nan_locations"]' '[[8388607], [8388608], [8388609]]'
NANAUDIT_HDF5_VLEN_BATCH=65536 expect_exit 1 "$N" scan --format json --zscore 4 big.h5
cmp -s stdout big.json || fail "NANAUDIT_HDF5_VLEN_BATCH=65536 changed the report of big.h5"

# --- clean: copied unchanged, its NaN/Inf counted, exit 1 -------------------
expect_exit 1 "$N" clean -q ok.h5 -o ok.out.h5 --format json
expect_json stdout '{t["name"]: (t["status"], t["warnings"]) for t in j["tensors"] if t["name"] in ("/f32", "/empty")}' \
    '{"/empty": ["copied", []], "/f32": ["copied", ["2 NaN/Inf value(s) left as they are (copied unchanged)"]]}'
expect_json stdout '[t["shape"] for t in j["tensors"] if t["name"] == "/grid"]' '[[2, 3]]'
expect_json stdout 'j["exit_code"]' '1'
expect_exit 1 "$N" scan --format json --zscore 2 ok.out.h5
"$NA_PYTHON" ref.py stdout ok.npz 2 >/dev/null || fail "the copy differs"
expect_exit 0 "$N" clean -q ok.h5 -o ok.x.h5 --exclude /f32 --exclude /f16 --exclude /be \
    --exclude /grid --exclude /gz
expect_stdout_lacks "warning"

# --- damaged files: one line naming the dataset, exit 3 ---------------------
# Every stored descriptor (length, heap collection address, object index) is
# checked against the global heap before libhdf5 reads a sequence: libhdf5
# 1.10.8 reads a length shorter than its heap object without a word (a NaN in
# the rest was missed, exit 0), and a longer length or an index naming no
# object made it read outside its buffers.
"$NA_PYTHON" - <<'PY' || fail "damaging"
import h5py, numpy as np, struct, zlib
def three(f, name, **kw):
    d = f.create_dataset(name, (3,), dtype=h5py.vlen_dtype(np.float32), **kw)
    d[0] = np.arange(3, dtype=np.float32)
    s1 = np.arange(10, dtype=np.float32); s1[8] = np.nan  # past a cut length
    d[1] = s1
    d[2] = np.arange(4, dtype=np.float32)
    return d
with h5py.File("one.h5", "w") as f:
    off = three(f, "s").id.get_offset()
with h5py.File("ub.h5", "w", userblock_size=512) as f:  # heap addresses from byte 512
    ub_off = three(f, "s").id.get_offset()
with h5py.File("gzc.h5", "w") as f:
    three(f, "s", chunks=(2,), compression="gzip")
    three(f, "sh", chunks=(2,), compression="gzip", shuffle=True)
b = open("one.h5", "rb").read()
g = b.find(b"GCOL")
open("gcol.h5", "wb").write(b[:g] + b"XXXX" + b[g + 4:])
def desc(src, name, at, fmt, v):  # one field of a stored descriptor
    c = bytearray(open(src, "rb").read()); struct.pack_into(fmt, c, at, v)
    open(name, "wb").write(c)
# element 1's length (4 bytes at the start of its 16-byte descriptor)
for name, n in (("len32.h5", 0xFFFFFFFF), ("len28.h5", 1 << 28), ("len17.h5", 100000),
                ("len5.h5", 5), ("len11.h5", 11)):
    desc("one.h5", name, off + 16, "<I", n)
desc("ub.h5", "ublen5.h5", ub_off + 16, "<I", 5)
desc("one.h5", "idx9.h5", off + 16 + 12, "<I", 9)     # object 9: none
desc("one.h5", "idx0.h5", off + 16 + 12, "<I", 0)     # object 0: free space
desc("one.h5", "addr0.h5", off + 16 + 4, "<Q", 0)     # 10 values, no heap ID
desc("one.h5", "addr1.h5", off + 16 + 4, "<Q", 1 << 40)  # past the end of the file
desc("one.h5", "addr8.h5", off + 16 + 4, "<Q", 8)     # inside the superblock
# chunks found by their grid slot (more than 1024 of them: 1500 chunks of 2)
# and a 2-D chunked dataset, whose damaged descriptors are named by the
# element's row-major index: element 2401 is in chunk 1200 at 1, (1, 2) is 5
with h5py.File("many.h5", "w") as f:
    d = f.create_dataset("s", (3000,), dtype=h5py.vlen_dtype(np.float32), chunks=(2,))
    for i in range(3000):
        d[i] = np.full(i % 3 + 1, i, dtype=np.float32)
    e = f.create_dataset("t", (2, 3), dtype=h5py.vlen_dtype(np.float32), chunks=(1, 2))
    for i in range(6):
        e[divmod(i, 3)] = np.arange(i + 1, dtype=np.float32)
for name, ds, coord, k in (("many5.h5", "s", (2400,), 1), ("grid5.h5", "t", (1, 2), 0)):
    open(name, "wb").write(open("many.h5", "rb").read())
    with h5py.File(name, "r+") as f:
        d = f[ds]
        mask, raw = d.id.read_direct_chunk(coord)
        r = bytearray(raw); struct.pack_into("<I", r, 16 * k, 5)
        d.id.write_direct_chunk(coord, bytes(r), mask)
# heap object 2's size
c = bytearray(b); p = g + 16
while True:
    idx, _, _, sz = struct.unpack_from("<HHIQ", c, p)
    if idx == 2:
        struct.pack_into("<Q", c, p + 8, 1 << 40); break
    p += 16 + (sz + 7) // 8 * 8
open("objsz.h5", "wb").write(c)
# the collection's size
c = bytearray(b); struct.pack_into("<Q", c, g + 8, 1 << 40); open("colsz.h5", "wb").write(c)
# a gzip chunk whose descriptor of element 1 says 5 values
open("gzc5.h5", "wb").write(open("gzc.h5", "rb").read())
with h5py.File("gzc5.h5", "r+") as f:
    d = f["s"]
    mask, raw = d.id.read_direct_chunk((0,))
    r = bytearray(zlib.decompress(raw)); struct.pack_into("<I", r, 16, 5)
    d.id.write_direct_chunk((0,), zlib.compress(bytes(r)), mask)
PY
one_line() { # FILE LINE: scan exit 3, exactly LINE on stderr
    expect_exit 3 "$N" scan "$1"
    assert_eq "$(cat "$T/stderr")" "$2" "scan of $1"
}
# the undamaged files: sequence 1's NaN is found
for f in one.h5 ub.h5 gzc.h5; do
    expect_exit 1 "$N" scan "$f"
    expect_stdout_contains "  /s      F32    [17]         17    1    0"
done
expect_stdout_contains "  /sh     F32    [17]         17    1    0"
DL="(a damaged length)"
one_line len5.h5 "nanaudit: len5.h5: /s: sequence 1: 5 values of 4 bytes, but its heap object holds 40 bytes $DL"
one_line len11.h5 "nanaudit: len11.h5: /s: sequence 1: 11 values of 4 bytes, but its heap object holds 40 bytes $DL"
one_line len17.h5 "nanaudit: len17.h5: /s: sequence 1: 100000 values of 4 bytes, but its heap object holds 40 bytes $DL"
one_line len28.h5 "nanaudit: len28.h5: /s: sequence 1: 268435456 values of 4 bytes, but its heap object holds 40 bytes $DL"
one_line len32.h5 "nanaudit: len32.h5: /s: sequence 1: 4294967295 values of 4 bytes, but its heap object holds 40 bytes $DL"
one_line ublen5.h5 "nanaudit: ublen5.h5: /s: sequence 1: 5 values of 4 bytes, but its heap object holds 40 bytes $DL"
one_line gzc5.h5 "nanaudit: gzc5.h5: /s: sequence 1: 5 values of 4 bytes, but its heap object holds 40 bytes $DL"
expect_exit 0 "$N" scan many.h5
expect_stdout_contains "  /s      F32    [6000]      6000    0    0"
one_line many5.h5 "nanaudit: many5.h5: /s: sequence 2401: 5 values of 4 bytes, but its heap object holds 8 bytes $DL"
one_line grid5.h5 "nanaudit: grid5.h5: /t: sequence 5: 5 values of 4 bytes, but its heap object holds 24 bytes $DL"
GA=$("$NA_PYTHON" -c 'import struct,sys; b=open("one.h5","rb").read(); print(b.find(b"GCOL"))')
HID="(a damaged heap ID)"
one_line idx9.h5 "nanaudit: idx9.h5: /s: sequence 1: its heap ID names object 9 of the global heap collection at address $GA, which holds no such object $HID"
one_line idx0.h5 "nanaudit: idx0.h5: /s: sequence 1: its heap ID names object 0 of the global heap collection at address $GA, which holds no such object $HID"
one_line addr0.h5 "nanaudit: addr0.h5: /s: sequence 1: 10 values but no heap object (a damaged descriptor)"
one_line addr1.h5 "nanaudit: addr1.h5: /s: sequence 1: its global heap collection at address 1099511627776 lies past the end of the file $HID"
one_line addr8.h5 "nanaudit: addr8.h5: /s: sequence 1: bad global heap collection signature at address 8 (a damaged heap ID or heap)"
one_line gcol.h5 "nanaudit: gcol.h5: /s: sequence 0: bad global heap collection signature at address $GA (a damaged heap ID or heap)"
one_line objsz.h5 "nanaudit: objsz.h5: /s: sequence 0: object 2 of the global heap collection at address $GA says 1099511627776 bytes, more than the collection holds (a damaged heap)"
one_line colsz.h5 "nanaudit: colsz.h5: /s: sequence 0: the global heap collection at address $GA says it holds 1099511627776 bytes, past the end of the file (a damaged heap)"
# a batch smaller than one sequence (NANAUDIT_HDF5_VLEN_BATCH: bytes one read may take)
NANAUDIT_HDF5_VLEN_BATCH=16 one_line one.h5 \
    "nanaudit: one.h5: /s: sequence 1 holds 40 bytes, more than the 16 one read may take"
mkdir out
for f in gcol.h5 len5.h5; do
    expect_exit 3 "$N" clean "$f" -o "out/$f"
    expect_stderr_contains "$f: /s: sequence "
    assert_eq "$(ls -A out)" "" "clean of $f left a file"
done
pass
