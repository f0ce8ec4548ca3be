#!/bin/bash
# torch_files.sh - PyTorch checkpoints (torch.c, pickle.c): the real files
# of tests/data/real/pytorch (SOURCES.md) with their known contents, the
# malicious ones refused without executing anything (a payload that would
# create a marker file; the file never appears), and each error path with
# its one-line message and exit 3.
. "$(dirname "$0")/helpers.sh"
R="$NA_TEST_DATA/real/pytorch"
M="$R/malicious"

# special_values: 1 NaN and 2 Inf (+ and -), exit 1 under the default policy
expect_exit 1 "$NANAUDIT" scan --format json "$R/burn-special_values.pt"
cp "$T/stdout" "$T/sv.json"
expect_json "$T/sv.json" 'j["files"][0]["format"]' '"pytorch"'
expect_json "$T/sv.json" '[j["files"][0]["tensors"][0][k] for k in ("nan","pos_inf","neg_inf","elements")]' '[1, 1, 1, 5]'
expect_json "$T/sv.json" 'j["files"][0]["tensors"][0]["nan_locations"]' '[[0]]'
expect_json "$T/sv.json" 'j["files"][0]["tensors"][0]["inf_locations"]' '[[1], [2]]'
# corrupted_spike: one 1e6 outlier in the 4608-element conv weight
expect_exit 0 "$NANAUDIT" scan --format json "$R/weightlens-corrupted_spike.pth"
cp "$T/stdout" "$T/sp.json"
expect_json "$T/sp.json" '[t["name"] for t in j["files"][0]["tensors"]]' '["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]'
expect_json "$T/sp.json" '[(t["elements"], t["max"], t["outliers"]["count"]) for t in j["files"][0]["tensors"] if t["name"] == "conv2.weight"]' '[[4608, 1000000.0, 1]]'
expect_json "$T/sp.json" 'sum(t["outliers"]["count"] for t in j["files"][0]["tensors"])' '1'
# corrupted_zero: the same tensor all zeros
expect_exit 0 "$NANAUDIT" scan --format json "$R/weightlens-corrupted_zero.pth"
cp "$T/stdout" "$T/z.json"
expect_json "$T/z.json" '[f["kind"] for t in j["files"][0]["tensors"] for f in t["findings"]]' '["zero_tensor"]'
expect_json "$T/z.json" '[t["zeros"] for t in j["files"][0]["tensors"] if t["name"] == "conv2.weight"]' '[4608]'
# nested training checkpoint: names flattened, non-tensor entries as metadata
expect_exit 0 "$NANAUDIT" info "$R/burn-checkpoint.pt"
expect_stdout_contains "optimizer_state_dict.state.0.momentum_buffer"
expect_stdout_contains "metadata: epoch = 42"
# Fortran strides (1, 2, 6) of a (2, 3, 4) int64 tensor holding 1..24
expect_exit 0 "$NANAUDIT" scan --format json "$R/candle-fortran_tensor_3d.pth"
cp "$T/stdout" "$T/f.json"
expect_json "$T/f.json" '[j["files"][0]["tensors"][0][k] for k in ("shape","min","max","mean")]' '[[2, 3, 4], 1.0, 24.0, 12.5]'
# legacy (pre-1.6) formats, shared storage views; the DistilBERT state dict
# holds 38 tensors (its pickle has 38 keys; SOURCES.md says 71)
expect_exit 0 "$NANAUDIT" scan --format json "$R/burn-legacy_shared_storage.pt" "$R/burn-legacy_with_offsets.pt" "$R/picklescan-pytorch_model.bin"
cp "$T/stdout" "$T/l.json"
expect_json "$T/l.json" '[len(f["tensors"]) for f in j["files"]]' '[3, 3, 38]'
expect_json "$T/l.json" '[t["shape"] for t in j["files"][0]["tensors"]]' '[[10], [20], [10]]'
expect_json "$T/l.json" '[t["mean"] for t in j["files"][1]["tensors"]][1:]' '[2.2, 3.2]'
# every valid real file audits (exit 0, or 1 for the NaN file)
for f in "$R"/*.pt "$R"/*.pth "$R"/*.bin; do
    case "$f" in *burn-broken.pt) continue ;; *special_values*) want=1 ;; *) want=0 ;; esac
    expect_exit "$want" "$NANAUDIT" scan "$f"
done
expect_exit 3 "$NANAUDIT" scan "$R/burn-broken.pt"
expect_stderr_contains "unrecognised content"

# malicious fixtures: refused by name, never executed
expect_exit 3 "$NANAUDIT" scan "$M/modelscan-unsafe_zip_pytorch.pt"
expect_stderr_contains "references posix.system: not a plain tensor checkpoint; nothing was executed"
expect_exit 3 "$NANAUDIT" scan "$M/modelaudit-malicious_eval.pt"
expect_stderr_contains "references builtins.eval: not a plain tensor checkpoint; nothing was executed"
expect_exit 3 "$NANAUDIT" scan "$M/picklescan-pytorch_magic_bypass.pt"
expect_stderr_contains "references __builtin__.eval: not a plain tensor checkpoint; nothing was executed"
expect_exit 3 "$NANAUDIT" scan "$M/picklescan-GHSA-jgw4-cr84-mqxg.bin"
expect_stderr_contains "references asyncio.unix_events._UnixSubprocessTransport._start: not a plain tensor checkpoint"
expect_exit 3 "$NANAUDIT" scan "$M/picklescan-bad_pytorch.pt"
expect_stderr_contains "unrecognised content"

# A payload that would create a marker file: in a torch zip, in a legacy
# file, hidden after a valid tensor, and as a bare protocol-4 pickle.
MARK="$T/pwned"
"$NA_PYTHON" - "$T" "$MARK" <<'EOF' || fail "could not write the hostile files"
import collections, os, sys
sys.path.insert(0, os.path.join(os.environ["NA_SRC"], "tests", "tools"))
import numpy as np
from make_pt import Evil, Storage, Tensor, save, save_pickle, save_zip_pickle
T, mark = sys.argv[1], sys.argv[2]
cmd = "touch " + mark
save_zip_pickle({"w": Evil(cmd)}, os.path.join(T, "evil-zip.pt"))
t = Tensor(Storage(np.arange(4, dtype=np.float32)), 0, (4,), (1,))
save(collections.OrderedDict(w=t, z=Evil(cmd)), os.path.join(T, "evil-after.pt"))
save(collections.OrderedDict(w=t, z=Evil(cmd)), os.path.join(T, "evil-legacy.pt"), legacy=True)
save_pickle(Evil(cmd), os.path.join(T, "evil.pkl"), protocol=4)
EOF
for f in evil-zip.pt evil-after.pt evil-legacy.pt evil.pkl; do
    expect_exit 3 "$NANAUDIT" scan "$T/$f"
    expect_stderr_contains "$f: references posix.system: not a plain tensor checkpoint; nothing was executed"
    expect_exit 3 "$NANAUDIT" info "$T/$f"
done
[ ! -e "$MARK" ] || fail "a pickle payload was executed: $MARK exists"
# the payloads are real: Python's own pickle does run them
"$NA_PYTHON" -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$T/evil.pkl"
[ -e "$MARK" ] || fail "the control payload did not run; the test proves nothing"

# error paths of the zip and legacy layouts
"$NA_PYTHON" - "$T" <<'EOF' || fail "could not write the broken files"
import collections, os, sys, zipfile
sys.path.insert(0, os.path.join(os.environ["NA_SRC"], "tests", "tools"))
import numpy as np
from make_pt import Storage, Tensor, save
T = sys.argv[1]
s = Storage(np.arange(6, dtype=np.float32))
save({"w": Tensor(s, 0, (2, 3), (3, 1))}, os.path.join(T, "ok.pt"))
save({"w": Tensor(s, 4, (2, 3), (3, 1))}, os.path.join(T, "outside.pt"))
save({"b": Tensor(s, 0, (10**6, 10**6), (0, 0))}, os.path.join(T, "broadcast.pt"))
save({"w": Tensor(s, 0, (2, 3), (3, 1))}, os.path.join(T, "legacy.pt"), legacy=True)
with zipfile.ZipFile(os.path.join(T, "ok.pt")) as zi, \
     zipfile.ZipFile(os.path.join(T, "nostorage.pt"), "w") as zo:
    for n in zi.namelist():
        if "/data/" not in n:
            zo.writestr(n, zi.read(n))
# a storage type nanaudit cannot decode (complex128 is read since the fifth
# fresh-user round, torch_complex128.sh): torch.QInt8Storage behind a plain
# _rebuild_tensor_v2, as a hand-made file can hold
import make_pt
make_pt.STORAGE_TYPES["int8"] = "QInt8Storage"
# (a storage of its own for w: s keeps the key "0" its first save gave it,
# which c's storage gets too, and one key under two types is refused)
save({"c": Tensor(Storage(np.zeros(4, np.int8)), 0, (4,), (1,)),
      "w": Tensor(Storage(np.arange(6, dtype=np.float32)), 0, (6,), (1,))},
     os.path.join(T, "qint8.pt"))
make_pt.STORAGE_TYPES["int8"] = "CharStorage"
raw = open(os.path.join(T, "legacy.pt"), "rb").read()
open(os.path.join(T, "legacy-cut.pt"), "wb").write(raw[:-8])
open(os.path.join(T, "legacy-cut2.pt"), "wb").write(raw[:-29])  # in the element count
open(os.path.join(T, "pickle-cut.pt"), "wb").write(raw[:40])
EOF
expect_exit 0 "$NANAUDIT" scan "$T/ok.pt" "$T/legacy.pt"
expect_exit 3 "$NANAUDIT" scan "$T/outside.pt"
expect_stderr_contains "outside.pt: tensor 'w': view reaches byte 40 of a storage of 24 bytes"
expect_exit 3 "$NANAUDIT" scan "$T/broadcast.pt"
expect_stderr_contains "tensor 'b': a view of 1000000000000 elements over a storage of 24 bytes (more than 16 times its storage; a broadcast view?) is not audited"
expect_exit 3 "$NANAUDIT" scan "$T/nostorage.pt"
expect_stderr_contains "nostorage.pt: tensor 'w': storage member 'archive/data/0' is missing"
expect_exit 3 "$NANAUDIT" scan --format json "$T/qint8.pt"
cp "$T/stdout" "$T/c.json"
expect_stderr_contains "unsupported torch storage type QInt8Storage in tensor 'c'"
expect_json "$T/c.json" '[t["status"] for t in j["files"][0]["tensors"]]' '["error", "ok"]'
expect_exit 3 "$NANAUDIT" scan "$T/legacy-cut.pt"
expect_stderr_contains "legacy-cut.pt: tensor 'w': data truncated: its storage (key '0') needs 6 elements × 4 bytes from byte"
# the tensor named, not only the pickle's storage key (round 40a)
expect_exit 3 "$NANAUDIT" scan "$T/legacy-cut2.pt"
expect_stderr_contains "legacy-cut2.pt: tensor 'w': data truncated: its storage (key '0', 1 of 1) should start at byte"
expect_exit 3 "$NANAUDIT" scan "$T/pickle-cut.pt"
expect_stderr_contains "pickle-cut.pt: pickle: truncated"

# HF sharded pytorch_model.bin.index.json: a zip shard and a legacy shard,
# checked against the index like safetensors shards (formats/index.c)
mkdir "$T/sh"
"$NA_PYTHON" - "$T/sh" <<'EOF2' || fail "could not write the shards"
import collections, json, os, sys
sys.path.insert(0, os.path.join(os.environ["NA_SRC"], "tests", "tools"))
import numpy as np
from make_pt import Storage, Tensor, save
d = sys.argv[1]
a = Tensor(Storage(np.arange(6, dtype=np.float32)), 0, (2, 3), (3, 1))
b = Tensor(Storage(np.array([1.0, np.nan])), 0, (2,), (1,))
save(collections.OrderedDict([("enc.w", a)]), f"{d}/pytorch_model-00001-of-00002.bin")
save(collections.OrderedDict([("dec.b", b)]), f"{d}/pytorch_model-00002-of-00002.bin", legacy=True)
wm = {"enc.w": "pytorch_model-00001-of-00002.bin", "dec.b": "pytorch_model-00002-of-00002.bin"}
json.dump({"metadata": {"total_size": 40}, "weight_map": wm},
          open(f"{d}/pytorch_model.bin.index.json", "w"))
wm["enc.extra"] = "pytorch_model-00001-of-00002.bin"
json.dump({"weight_map": wm}, open(f"{d}/bad.index.json", "w"))
EOF2
expect_exit 1 "$NANAUDIT" scan --format json "$T/sh/pytorch_model.bin.index.json"
cp "$T/stdout" "$T/sh.json"
expect_json "$T/sh.json" '[(f["format"], f["status"]) for f in j["files"]]' '[["index", "ok"], ["pytorch", "ok"], ["pytorch", "ok"]]'
expect_json "$T/sh.json" 'j["files"][2]["tensors"][0]["nan_locations"]' '[[1]]'
expect_exit 3 "$NANAUDIT" scan "$T/sh/bad.index.json"
expect_stderr_contains "tensor 'enc.extra' is in the index (shard 'pytorch_model-00001-of-00002.bin') but not in that shard"

# a storage whose persistent id declares more elements than its member
# holds: torch.load refuses it, so does nanaudit (round 43b: audited)
PYTHONPATH="$NA_SRC/tests/tools" "$NA_PYTHON" - "$T" <<'PY' || fail "making numel.pt"
import sys
import numpy as np
from make_pt import Storage, Tensor, save
s = Storage(np.arange(3, dtype=np.float32), numel=2**31 - 1)
save({"w": Tensor(s, 0, (3,), (1,))}, f"{sys.argv[1]}/numel.pt")
save({"w": Tensor(s, 0, (3,), (1,))}, f"{sys.argv[1]}/numel_legacy.pt", legacy=True)
PY
expect_exit 3 "$NANAUDIT" scan "$T/numel.pt"
assert_eq "$(cat "$T/stderr")" "nanaudit: $T/numel.pt: tensor 'w': storage '0' holds 12 bytes, less than the 2147483647 elements of 4 bytes its persistent id declares (torch.load refuses it)" "numel.pt"
expect_exit 3 "$NANAUDIT" scan "$T/numel_legacy.pt"
pass
