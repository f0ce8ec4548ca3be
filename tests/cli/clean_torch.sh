#!/bin/bash
# `nanaudit clean` writes PyTorch checkpoints (issue 4: the format it
# reads): a copy of the input with each cleaned tensor's bytes replaced in
# place and the CRC-32 of each changed zip member written again (local
# header, data descriptor, central header); the pickle and every other
# byte unchanged. Values against a numpy reference; tied weights stay
# tied; torch.load reads the output when torch is installed. Refusals:
# a dtype or shape change, a non-contiguous view, storage shared with a
# tensor cleaned otherwise or not at all, a re-compressed storage.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

PYTHONPATH="$NA_SRC/tests/tools" "$NA_PYTHON" - <<'PY' || fail "making inputs"
import zipfile
import numpy as np
from make_pt import Storage, Tensor, save
rng = np.random.default_rng(11)
w = rng.normal(size=(64, 32)).astype(np.float32)
w[3, 4], w[10, 1], w[20, 2] = np.nan, np.inf, 50.0
emb = rng.normal(size=(100, 16)).astype(np.float32)
emb[7, 7] = 9.0
h = rng.normal(size=(8, 8)).astype(np.float16)
h[0, 0] = np.nan
se = Storage(emb)
sd = {"layer.weight": Tensor(Storage(w), 0, (64, 32), (32, 1)),
      "layer.bias": Tensor(Storage(rng.normal(size=32).astype(np.float32)), 0, (32,), (1,)),
      "emb.weight": Tensor(se, 0, (100, 16), (16, 1)),
      "head.weight": Tensor(se, 0, (100, 16), (16, 1)),   # tied: same storage, same view
      "half": Tensor(Storage(h), 0, (8, 8), (8, 1)),
      "ids": Tensor(Storage(np.arange(10, dtype=np.int32)), 0, (10,), (1,)),
      "step": Tensor(Storage(np.array([7], dtype=np.int64)), 0, (), ())}
save(sd, "m.pt")
save(sd, "legacy.pt", legacy=True)
np.save("w.npy", w); np.save("emb.npy", emb); np.save("h.npy", h)
b = Storage(np.arange(100, dtype=np.float32))
save({"t": Tensor(b, 0, (10, 10), (1, 10))}, "view.pt")             # transposed
save({"a": Tensor(b, 0, (10, 10), (10, 1)), "a2": Tensor(b, 10, (2, 10), (10, 1))}, "share.pt")
# the same members re-compressed, and stored with data descriptors (an
# unseekable output makes zipfile set bit 3)
zin = zipfile.ZipFile("m.pt")
with zipfile.ZipFile("defl.pt", "w", zipfile.ZIP_DEFLATED) as zo:
    for i in zin.infolist():
        zo.writestr(i.filename, zin.read(i.filename))
class Unseekable:
    def __init__(self, f): self.f = f
    def write(self, b): return self.f.write(b)
    def flush(self): self.f.flush()
with open("dd.pt", "wb") as f, zipfile.ZipFile(Unseekable(f), "w", zipfile.ZIP_STORED) as zo:
    for i in zin.infolist():
        zo.writestr(i.filename, zin.read(i.filename))
assert all(i.flag_bits & 8 for i in zipfile.ZipFile("dd.pt").infolist())
PY
N="$NANAUDIT"

# The numpy reference of --nonfinite zero --zscore 3 --outliers clip for
# weights (one statistic per tensor), and the checks of an output OUT
# (zip: CRCs, member names and order, every member but the three cleaned
# storages byte for byte).
check() { # OUT SRC
    "$NA_PYTHON" - "$1" "$2" <<'PY' || fail "checking $1"
import sys, zipfile, zlib
import numpy as np
out, src = sys.argv[1], sys.argv[2]
def ref(x):
    x = np.where(np.isfinite(x), x, 0).astype(np.float64)
    m, s = x.mean(), x.std()
    return np.clip(x, m - 3 * s, m + 3 * s)
zo, zi = zipfile.ZipFile(out), zipfile.ZipFile(src)
assert zo.testzip() is None, "a CRC-32 does not match"
assert zo.namelist() == zi.namelist(), zo.namelist()
got = {}
for i in zi.infolist():
    a, b = zi.read(i.filename), zo.read(i.filename)
    key = i.filename.split("/data/")[-1] if "/data/" in i.filename else None
    got[key] = b
    if b != a:
        assert key is not None, f"{i.filename} changed"
# storage keys follow pickle order in make_pt: w, bias, emb, half, ids, step
ws = np.frombuffer(got["0"], np.float32).reshape(64, 32)
np.testing.assert_allclose(ws, ref(np.load("w.npy")), rtol=1e-6, atol=1e-6)
es = np.frombuffer(got["2"], np.float32).reshape(100, 16)
np.testing.assert_allclose(es, ref(np.load("emb.npy")), rtol=1e-6, atol=1e-6)
hs = np.frombuffer(got["3"], np.float16).reshape(8, 8)
np.testing.assert_allclose(hs, ref(np.load("h.npy").astype(np.float64)).astype(np.float16), rtol=1e-3)
assert np.isfinite(ws).all() and ws.max() < 50 and np.isfinite(hs).all()
assert np.frombuffer(got["4"], np.int32).tolist() == list(range(10))
# with data descriptors (bit 3), the descriptor's CRC-32 is the new one too
raw = open(out, "rb").read()
for i in zo.infolist():
    if i.flag_bits & 8:
        n, x = int.from_bytes(raw[i.header_offset + 26:i.header_offset + 28], "little"), \
               int.from_bytes(raw[i.header_offset + 28:i.header_offset + 30], "little")
        d = i.header_offset + 30 + n + x + i.compress_size
        if raw[d:d + 4] == b"PK\x07\x08":
            d += 4
        assert int.from_bytes(raw[d:d + 4], "little") == zlib.crc32(zo.read(i.filename)), i.filename
assert len(raw) == len(open(src, "rb").read())
PY
}

expect_exit 0 "$N" clean m.pt --nonfinite zero --zscore 3 --outliers clip -o out.pt
expect_stdout_contains "layer.weight: F32 -> F32, 2048 elements (weights: one statistic)"
expect_stdout_contains "written: out.pt (verified)"
check out.pt m.pt
expect_exit 0 "$N" clean dd.pt --nonfinite zero --zscore 3 --outliers clip -o out_dd.pt
check out_dd.pt dd.pt
expect_exit 0 "$N" scan out.pt --report s.json
expect_json s.json '[t["nan"] + t["pos_inf"] + t["neg_inf"] for t in j["files"][0]["tensors"]]' \
    '[0, 0, 0, 0, 0, 0, 0]'
# a legacy (pre-1.6) checkpoint: its storages are rewritten in place
expect_exit 0 "$N" clean legacy.pt --nonfinite zero --zscore 3 --outliers clip -o out_l.pt
expect_exit 0 "$N" scan out_l.pt --report l.json
expect_exit 0 "$N" scan out.pt --report z.json
"$NA_PYTHON" - <<'PY' || fail "legacy output differs from the zip one"
import json
a, b = (json.load(open(f))["files"][0]["tensors"] for f in ("l.json", "z.json"))
keys = ("name", "dtype", "shape", "nan", "min", "max", "mean", "std")
assert [[t[k] for k in keys] for t in a] == [[t[k] for k in keys] for t in b]
PY

# Checkpoints written by other software (tests/data/real/SOURCES.md):
# each cleaned copy scans without NaN or Inf; torch.load reads it below.
real=()
for f in "$NA_TEST_DATA"/real/pytorch/burn-*.pt "$NA_TEST_DATA"/real/pytorch/candle-test*.pt \
    "$NA_TEST_DATA"/real/pytorch/weightlens-*.pth "$NA_TEST_DATA"/real/pytorch/picklescan-*.bin; do
    case "$f" in *burn-broken.pt) continue ;; esac
    o="real_$(basename "$f")"
    expect_exit 0 "$N" clean "$f" --nonfinite zero --zscore 3 --outliers clip -o "$o"
    expect_exit 0 "$N" scan "$o" --zscore 0
    real+=("$o")
done
[ "${#real[@]}" -ge 20 ] || fail "only ${#real[@]} real checkpoints"
# a Fortran-order tensor (candle) is a non-contiguous view: refused
expect_exit 3 "$N" clean "$NA_TEST_DATA/real/pytorch/candle-fortran_tensor_3d.pth" --nonfinite zero -o f.pth
expect_stderr_contains "tensor_fortran: a non-contiguous view"

# torch.load reads the output (when this machine has torch)
TPY=${NA_TORCH_PYTHON:-$NA_SRC/.venv-torch/bin/python}
[ -x "$TPY" ] || TPY=/usr/bin/python3
if "$TPY" -c 'import torch' 2>/dev/null; then
    "$TPY" - "${real[@]}" <<'PY' || fail "torch.load of the output"
import sys
import numpy as np, torch
for f in sys.argv[1:]:
    torch.load(f, map_location="cpu")
for f in ("out.pt", "out_l.pt", "out_dd.pt"):
    sd = torch.load(f)
    assert sd["emb.weight"].data_ptr() == sd["head.weight"].data_ptr(), "tie lost"
    assert all(torch.isfinite(v.float()).all() for v in sd.values())
    assert sd["ids"].tolist() == list(range(10)) and sd["step"].item() == 7
PY
else
    echo "note: no torch here; torch.load not tried"
fi

# Refusals: one line naming the tensor, exit 3, nothing written, no
# temporary file; --dry-run refuses the same way.
refused() { # MESSAGE ARGS...
    local msg="$1" name dry
    shift
    name=${msg#*: }
    name=${name%%: *}
    printf '%s' "$msg" >msg.txt
    for dry in "" --dry-run; do
        rm -f rep.json
        expect_exit 3 "$N" clean "$@" -o r.pt $dry --report rep.json
        expect_stderr_contains "$msg"
        [ ! -e r.pt ] || fail "refused run wrote r.pt"
        # the --report entry says "error" and why (it said "cleaned",
        # reason null: eighteenth fresh-user round)
        expect_json rep.json "[(t['status'], t['reason'].startswith(open('msg.txt').read().split(': ', 2)[2])) for t in j['tensors'] if t['name'] == '$name']" \
            '[["error", true]]'
    done
}
refused "m.pt: ids: would become F32, but a PyTorch checkpoint's pickle names each tensor's dtype (I32)" \
    m.pt --normalize minmax
refused "m.pt: layer.weight: would become F16" m.pt --nonfinite zero --out-dtype F16
refused "m.pt: layer.weight: dropping samples changes its shape" \
    m.pt --samples --nonfinite drop --max-drop-fraction 1 --allow-misaligned
refused "m.pt: emb.weight: shares storage bytes with 'head.weight', which is not cleaned: writing one would change the other; --exclude both copies them unchanged" \
    m.pt --nonfinite zero --exclude head.weight
refused "share.pt: a: shares storage bytes with 'a2' (another view of them)" share.pt --normalize zscore
refused "view.pt: t: a non-contiguous view, which clean cannot write back in place; --exclude copies it unchanged" \
    view.pt --normalize zscore
refused "defl.pt: layer.weight: its storage is a compressed zip member" defl.pt --nonfinite zero
ls -A | grep -q '^\.nanaudit' && fail "temporary file left"
# excluding the refused tensors writes the rest
expect_exit 0 "$N" clean m.pt --normalize zscore --exclude ids --exclude step --nonfinite zero -o ok.pt
expect_exit 0 "$N" clean share.pt --normalize zscore --exclude a --exclude a2 -o ok2.pt
cmp share.pt ok2.pt || fail "nothing cleaned, yet the copy differs"
pass
