#!/bin/bash
# errpath_torch.sh - PyTorch / pickle error paths no other test triggered
# (audit 25a): malformed pickle opcode streams (formats/pickle.c bad()),
# legacy-layout header pickles, zip byteorder, view arithmetic overflows
# and storages missing or undersized (formats/torch.c), and clean's
# refusals to write back a shape change or a big-endian checkpoint
# (formats/torch_write.c). One line each, exit 3, nothing written.
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T" <<'PY' || fail "could not write the test files"
import collections, os, pickle, struct, sys, zipfile
sys.path.insert(0, os.path.join(os.environ["NA_SRC"], "tests", "tools"))
import numpy as np
import make_pt
from make_pt import Storage, Tensor, save
T = sys.argv[1]
os.makedirs(f"{T}/pk")
P2 = b"\x80\x02"
def su(s):
    b = s.encode(); return b"X" + struct.pack("<I", len(b)) + b
pid = b"(" + su("storage") + b"ctorch\nFloatStorage\n" + su("0") + su("cpu") + b"K\x04tQ"
RT = b"ctorch._utils\n_rebuild_tensor_v2\n"
cases = {
    "memo_empty": P2 + b"q\x00.",
    "nomark": P2 + b"t.",
    "dict_odd": P2 + b"(K\x01d.",
    "underflow": P2 + b"K\x01\x86.",
    "mark_tuple": P2 + b"(K\x01\x86.",
    "setitem_nondict": P2 + b"]K\x01K\x02s.",
    "setitems_odd": P2 + b"}(K\x01u.",
    "mark_setitem": P2 + b"}(K\x01s.",
    "appends_nolist": P2 + b"(K\x01e.",
    "append_nonlist": P2 + b"}K\x01a.",
    "mark_append": P2 + b"](a.",
    "unterm_line": P2 + b"I12",
    "bad_int": P2 + b"Iabc\n.",
    "big_int": P2 + b"I99999999999999999999999\n.",
    "bad_memo_put": P2 + b"K\x01pabc\n.",
    "bad_memo_get": P2 + b"gabc\n.",
    "unterm_global": P2 + b"ctorch\nFloat",
    "stackglobal_nostr": b"\x80\x04K\x01K\x02\x93.",
    "long_big": P2 + b"\x8b" + struct.pack("<i", 5000) + b"\x01" * 5000 + b".",
    "popmark": P2 + b"1.",
    "dup_empty": P2 + b"2.",
    "build_short": P2 + b"K\x01b.",
    "persid_unterm": P2 + b"Pabc",
    "persid_text": P2 + b"Pabc\n.",
    "inst_unterm": P2 + b"(itorch\nx",
    "rebuild_few": P2 + RT + b"(K\x01tR.",
    "rebuild_badargs": P2 + RT + b"(K\x01K\x02K\x03K\x04tR.",
    "v3_nodtype": P2 + b"ctorch._utils\n_rebuild_tensor_v3\n(" + pid + b"K\x00(K\x04t(K\x01t\x89}K\x05tR.",
    "reduce_nonglobal": P2 + b"K\x01)R.",
    "odict_args": P2 + b"ccollections\nOrderedDict\n(K\x01tR.",
    "param_notensor": P2 + b"ctorch._utils\n_rebuild_parameter\n(K\x01tR.",
    "fromtype_bad": P2 + b"ctorch._tensor\n_rebuild_from_type_v2\n(K\x01tR.",
    "size_notuple": P2 + b"ctorch\nSize\n(K\x01tR.",
    "pid_notstorage": P2 + b"(" + su("x") + b"tQ.",
    "pid_badview": P2 + b"(" + su("storage") + b"ctorch\nFloatStorage\n" + su("0") + su("cpu")
                   + b"K\x04(K\x01ttQ.",
}
for k, v in cases.items():
    open(f"{T}/pk/{k}.pkl", "wb").write(v)

# zip layout
s = Storage(np.arange(6, dtype=np.float32))
save({"w": Tensor(s, 0, (2, 3), (3, 1))}, f"{T}/ok.pt")
with zipfile.ZipFile(f"{T}/ok.pt") as zi, zipfile.ZipFile(f"{T}/byteorder.pt", "w") as zo:
    for n in zi.namelist():
        zo.writestr(n, b"middle" if n.endswith("byteorder") else zi.read(n))
with zipfile.ZipFile(f"{T}/ok.pt") as zi, zipfile.ZipFile(f"{T}/twopkl.pt", "w") as zo:
    for n in zi.namelist():
        zo.writestr(n, zi.read(n))
    zo.writestr("other/data.pkl", zi.read([n for n in zi.namelist() if n.endswith("/data.pkl")][0]))
save({"w": Tensor(Storage(np.arange(6, dtype=np.float32)), 2**62, (2,), (1,))}, f"{T}/offovf.pt")
save({"w": Tensor(Storage(np.arange(6, dtype=np.float32)), 0, (2,), (2**62,))}, f"{T}/strideovf.pt")
class Small(make_pt._Pickler):  # the persistent id declares 2 elements, the member has 6
    def persistent_id(self, obj):
        p = super().persistent_id(obj)
        return p if p is None else p[:4] + (2,) + p[5:]
orig, make_pt._Pickler = make_pt._Pickler, Small
save({"w": Tensor(Storage(np.arange(6, dtype=np.float32)), 0, (2, 3), (3, 1))}, f"{T}/numel.pt")
make_pt._Pickler = orig

# legacy layout
save({"w": Tensor(s, 0, (2, 3), (3, 1))}, f"{T}/legacy.pt", legacy=True)
raw = open(f"{T}/legacy.pt", "rb").read()
magic = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
p1001 = pickle.dumps(1001, protocol=2)
assert raw.startswith(magic + p1001)
open(f"{T}/badmagic.pt", "wb").write(pickle.dumps(12345, protocol=2) + raw[len(magic):])
open(f"{T}/proto.pt", "wb").write(magic + pickle.dumps(1002, protocol=2) + raw[len(magic + p1001):])
def legacy(path, obj, keys_pickle):
    pkl, st = make_pt._dump(obj, True, 2)
    with open(path, "wb") as f:
        f.write(magic + p1001)
        pickle.dump({"protocol_version": 1001, "little_endian": True,
                     "type_sizes": {"short": 2, "int": 4, "long": 4}}, f, protocol=2)
        f.write(pkl + keys_pickle)
        for k in sorted(st):
            d = st[k].data
            f.write(np.array([d.size], "<i8").tobytes() + d.tobytes())
w6 = lambda: {"w": Tensor(Storage(np.arange(6, dtype=np.float32)), 0, (6,), (1,))}
legacy(f"{T}/fifth.pt", w6(), pickle.dumps({"a": 1}, protocol=2))
legacy(f"{T}/missingkey.pt", w6(), pickle.dumps([], protocol=2))
make_pt.STORAGE_TYPES["int8"] = "QInt8Storage"
save({"c": Tensor(Storage(np.zeros(4, np.int8)), 0, (4,), (1,)),
      "w": Tensor(Storage(np.arange(6, dtype=np.float32), key="1"), 0, (6,), (1,))},
     f"{T}/legacy_qint8.pt", legacy=True)
make_pt.STORAGE_TYPES["int8"] = "CharStorage"

# one storage under two types (round 28b: audited as I32, the NaN torch.load
# gives the model was missed, exit 0)
a16 = np.arange(16, dtype=np.float32); a16[15] = np.nan
for lg in (False, True):
    save({"a": Tensor(Storage(a16, key="0"), 0, (15,), (1,)),
          "b": Tensor(Storage(a16.view(np.int32), key="0"), 0, (16,), (1,))},
         f"{T}/twotypes{'_legacy' if lg else ''}.pt", legacy=lg)

# round 31a: what torch.load does after a tensor is built, which a tensor
# no name reaches or other bytes would come from: BUILD on a tensor, a
# _rebuild_from_type_v2 state holding a tensor, a tensor in an
# OrderedDict's attributes; members named apart only by case; INT text
# read as CPython's C unpickler reads it (base 0: I010 is 8)
clean2 = Storage(np.array([1, 2], np.float32)); nan2 = Storage(np.array([np.nan, np.inf], np.float32))
save({"a": Tensor(clean2, 0, (2,), (1,), state=(Tensor(nan2, 0, (2,), (1,)), False, None))},
     f"{T}/build_tensor.pt")
save({"a": Tensor(clean2, 0, (2,), (1,), type_state={"data": Tensor(nan2, 0, (2,), (1,))})},
     f"{T}/type_state.pt")
od = collections.OrderedDict(b=Tensor(clean2, 0, (2,), (1,)))
od.a = Tensor(nan2, 0, (2,), (1,))
save(od, f"{T}/attr_tensor.pt")
save({"w": Tensor(Storage(np.array([1, 2], np.float32)), 0, (2,), (1,))}, f"{T}/case0.pt")
with zipfile.ZipFile(f"{T}/case0.pt") as zi, zipfile.ZipFile(f"{T}/case.pt", "w") as zo:
    for n in zi.namelist():
        zo.writestr(n, zi.read(n))
    zo.writestr("archive/DATA/0", np.array([np.nan, 1], np.float32).tobytes())
s10 = np.ones(12, np.float32); s10[8] = np.nan
save({"w": Tensor(Storage(s10), 8, (2,), (1,))}, f"{T}/octal0.pt")
with zipfile.ZipFile(f"{T}/octal0.pt") as zi, zipfile.ZipFile(f"{T}/octal.pt", "w") as zo:
    for n in zi.namelist():
        d = zi.read(n)
        if n.endswith("data.pkl"):
            i = d.index(b"QK\x08")  # the storage offset 8, BININT1
            d = d[:i + 1] + b"I010\n" + d[i + 3:]
        zo.writestr(n, d)

# for clean
a = np.arange(12, dtype=np.float32); a[5] = np.nan
# torch.save(..., pickle_protocol=1, legacy layout): the magic number is a
# text LONG (round 28b: "unrecognised content ... give --dtype")
save({"w": Tensor(Storage(a.copy()), 0, (4, 3), (3, 1))}, f"{T}/proto1.pt", legacy=True,
     protocol=1)
assert open(f"{T}/proto1.pt", "rb").read(27) == b"L119547037146038801333356L\n"
save({"w": Tensor(Storage(a), 0, (4, 3), (3, 1))}, f"{T}/nan.pt")
save({"w": Tensor(Storage(a.copy()), 0, (4, 3), (3, 1))}, f"{T}/nan_big.pt", byteorder="big")
save({"w": Tensor(Storage(a.copy()), 0, (4, 3), (3, 1))}, f"{T}/nan_biglegacy.pt",
     legacy=True, byteorder="big")
PY

one_line() { # CODE LINE CMD...
    local code="$1" line="$2"; shift 2
    expect_exit "$code" "$@"
    assert_eq "$(cat "$T/stderr")" "$line" "stderr of: $*"
}
pk() { # NAME PROBLEM (opcode at byte N)
    one_line 3 "nanaudit: $T/pk/$1.pkl: pickle: $2" "$NANAUDIT" scan "$T/pk/$1.pkl"
}
pk memo_empty "memo put with an empty stack (opcode at byte 2)"
pk nomark "no MARK on the stack (opcode at byte 2)"
pk dict_odd "odd number of items for a dict (opcode at byte 5)"
pk underflow "stack underflow (opcode at byte 4)"
pk mark_tuple "MARK inside a tuple (opcode at byte 5)"
pk setitem_nondict "SETITEM(S) on something that is not a dict (opcode at byte 7)"
pk setitems_odd "odd number of items for a dict (opcode at byte 6)"
pk mark_setitem "MARK inside SETITEM (opcode at byte 6)"
pk appends_nolist "APPEND(S) without a list below (opcode at byte 5)"
pk append_nonlist "APPEND(S) on something that is not a list (opcode at byte 5)"
pk mark_append "MARK inside APPEND (opcode at byte 4)"
pk unterm_line "truncated (unterminated line) (opcode at byte 2)"
pk bad_int "bad or too large integer text (opcode at byte 2)"
pk big_int "bad or too large integer text (opcode at byte 2)"
pk bad_memo_put "bad memo index text (opcode at byte 4)"
pk bad_memo_get "bad memo index text (opcode at byte 2)"
pk unterm_global "truncated (unterminated GLOBAL) (opcode at byte 2)"
pk stackglobal_nostr "STACK_GLOBAL without two strings (opcode at byte 6)"
pk long_big "LONG of more than 4096 bytes (opcode at byte 2)"
pk popmark "POP_MARK without a MARK (opcode at byte 2)"
pk dup_empty "DUP of an empty stack (opcode at byte 2)"
pk build_short "BUILD with a short stack (opcode at byte 4)"
pk persid_unterm "truncated (unterminated PERSID) (opcode at byte 2)"
pk persid_text "text persistent id (not written by torch.save) (opcode at byte 2)"
pk inst_unterm "truncated (unterminated INST) (opcode at byte 3)"
pk rebuild_few "tensor rebuild with too few arguments (opcode at byte 39)"
pk rebuild_badargs "tensor rebuild with bad arguments (storage, offset, size, stride) (opcode at byte 45)"
pk v3_nodtype "_rebuild_tensor_v3 without a dtype (opcode at byte 102)"
pk reduce_nonglobal "REDUCE of something that is not an accepted global (opcode at byte 5)"
pk odict_args "OrderedDict with arguments (opcode at byte 31)"
pk param_notensor "_rebuild_parameter without a tensor (opcode at byte 39)"
pk fromtype_bad "_rebuild_from_type_v2 with bad arguments (opcode at byte 43)"
pk size_notuple "torch.Size without a tuple (opcode at byte 18)"
pk pid_notstorage "persistent id is not ('storage', type, key, location, size) (opcode at byte 10)"
pk pid_badview "legacy storage view metadata is not (key, offset, size) (opcode at byte 56)"

pt() { # FILE PROBLEM: scan, info and clean refuse it alike; clean writes nothing
    local cmd
    for cmd in scan info; do
        one_line 3 "nanaudit: $T/$1: $2" "$NANAUDIT" "$cmd" "$T/$1"
    done
    expect_exit 3 "$NANAUDIT" clean -o "$T/out-$1" "$T/$1"
    expect_stderr_contains "nanaudit: $T/$1: $2"
    [ ! -e "$T/out-$1" ] || fail "clean wrote out-$1"
}
# two DIR/data.pkl: named both (audit 25a: "no DIR/data.pkl", the opposite)
one_line 3 "nanaudit: $T/build_tensor.pt: pickle: BUILD on a tensor (torch.load would replace its data with the state; torch.save does not write it) (opcode at byte 208)" "$NANAUDIT" scan "$T/build_tensor.pt"
expect_exit 3 "$NANAUDIT" scan "$T/type_state.pt"
expect_stderr_contains "type_state.pt: pickle: _rebuild_from_type_v2 with a state holding a tensor, which torch.load would put in place of its data: not audited, refused"
expect_exit 3 "$NANAUDIT" scan "$T/attr_tensor.pt"
expect_stderr_contains "attr_tensor.pt: pickle: BUILD state holds a tensor (an object's attribute, which no name reaches; torch.save does not write it)"
one_line 3 "nanaudit: $T/case.pt: zip members 'archive/data/0' and 'archive/DATA/0' differ only in case, which torch.load does not tell apart (refused)" "$NANAUDIT" scan "$T/case.pt"
expect_exit 1 "$NANAUDIT" scan --format json "$T/octal.pt" # offset 8, as torch.load reads I010
expect_json "$T/stdout" '[(t["name"], t["nan"], t["min"]) for t in j["files"][0]["tensors"]]' '[["w", 1, 1.0]]'
for f in twotypes.pt twotypes_legacy.pt; do
    pt $f "tensors 'a' and 'b' share storage '0' as FloatStorage and IntStorage; torch.load reads it as the first's type (torch.save refuses to write this): refused"
done
pt twopkl.pt "zip holds two data.pkl members ('archive/data.pkl' and 'other/data.pkl')"
pt byteorder.pt 'member '\''archive/byteorder'\'' is neither "little" nor "big"'
pt offovf.pt "tensor 'w': storage offset overflows"
pt strideovf.pt "tensor 'w': stride overflows"
pt numel.pt "tensor 'w': view reaches element 6 of a storage of 2 elements"
pt badmagic.pt "pickle without torch.save's magic number 0x1950a86a20f9469cfc6c: not a PyTorch checkpoint"
pt proto.pt "legacy torch.save protocol 1002 (only 1001 is known)"
pt fifth.pt "legacy checkpoint: the fifth pickle is not the list of storage keys"
pt missingkey.pt "tensor 'w': storage '0' is missing from the file"
pt legacy_qint8.pt "storage '0' has a type whose element size is unknown, so the storages after it cannot be found"
expect_exit 0 "$NANAUDIT" scan "$T/ok.pt" "$T/legacy.pt"
expect_exit 1 "$NANAUDIT" scan --format json "$T/proto1.pt"
expect_json "$T/stdout" '[(t["name"], t["shape"], t["nan"], t["max"]) for t in j["files"][0]["tensors"]]' \
    '[["w", [4, 3], 1, 11.0]]'

# clean: a shape change (drop) and a big-endian checkpoint cannot be
# written back into the pickle: exit 3, one line, no output
for f in nan_big.pt nan_biglegacy.pt; do
    one_line 3 "nanaudit: $T/$f: w: a big-endian checkpoint (byteorder \"big\"), which clean cannot write back; --exclude copies it unchanged; nothing written" \
        "$NANAUDIT" clean -o "$T/o-$f" "$T/$f"
    [ ! -e "$T/o-$f" ] || fail "clean wrote o-$f"
done
one_line 3 "nanaudit: $T/nan.pt: w: dropping samples changes its shape, which a PyTorch checkpoint's pickle holds and clean writes back unchanged: use --nonfinite zero|mean|value=X and --outliers clip|nan|mean instead; nothing written" \
    "$NANAUDIT" clean --samples --nonfinite drop --max-drop-fraction 1 -o "$T/o-nan.pt" "$T/nan.pt"
[ ! -e "$T/o-nan.pt" ] || fail "clean wrote o-nan.pt"
[ -z "$(ls -A "$T" | grep '^\.nanaudit-tmp')" ] || fail "a temporary file was left"
pass
