#!/bin/bash
# What a fresh user broke in `nanaudit clean` of PyTorch checkpoints
# (formats/torch_write.c, formats/torch.c), one case each:
#  - a legacy checkpoint listing a storage key twice: torch.load fills the
#    storage from the last blob, the reader took the first, so scan audited
#    (and clean cleaned) bytes torch never loads. Refused, exit 3, in scan,
#    clean and --dry-run, as a duplicate zip member is.
#  - a stored storage member whose CRC-32 does not match its bytes (a
#    flipped bit): clean wrote a fresh, valid CRC-32 over the damage.
#    Refused, exit 3, when clean would rewrite that member; copied as it is
#    (CRC included) when it is --exclude'd.
#  - two views of the same bytes with other rows/features (x and
#    x.view(-1)) under --samples: --dry-run said fine, the real run wrote
#    both and failed verification (exit 4). Refused at open now, exit 3,
#    in both; without --samples (one statistic per tensor) both get the
#    same values and the copy is written.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

PYTHONPATH="$NA_SRC/tests/tools" "$NA_PYTHON" - <<'PY' || fail "making inputs"
import pickle, zipfile, zlib
import numpy as np
from make_pt import Storage, Tensor, _dump, save
# legacy, key '0' listed twice: torch.load reads the second blob (NaN at 1)
a = np.array([1, 2, 3, 4], np.float32)
b = np.array([10, np.nan, 30, 40], np.float32)
pkl, _ = _dump({"w": Tensor(Storage(a), 0, (4,), (1,))}, True, 2)
with open("legdup.pt", "wb") as f:
    pickle.dump(0x1950a86a20f9469cfc6c, f, protocol=2)
    pickle.dump(1001, f, protocol=2)
    pickle.dump({"protocol_version": 1001, "little_endian": True,
                 "type_sizes": {"short": 2, "int": 4, "long": 4}}, f, protocol=2)
    f.write(pkl)
    pickle.dump(["0", "0"], f, protocol=2)
    for d in (a, b):
        f.write(np.array([4], "<i8").tobytes() + d.tobytes())
# a flipped bit in storage 0 (w), its CRC-32 left as it was
rng = np.random.default_rng(5)
w = rng.normal(size=(8, 4)).astype(np.float32)
w[1, 1] = np.nan
save({"w": Tensor(Storage(w), 0, (8, 4), (4, 1)),
      "u": Tensor(Storage(np.array([1, np.nan], np.float32)), 0, (2,), (1,))}, "good.pt")
z = zipfile.ZipFile("good.pt")
i = z.getinfo("archive/data/0")
raw = bytearray(open("good.pt", "rb").read())
n, x = (int.from_bytes(raw[i.header_offset + k:i.header_offset + k + 2], "little") for k in (26, 28))
pos = i.header_offset + 30 + n + x
raw[pos + 5] ^= 0x40
open("badcrc.pt", "wb").write(raw)
got = zlib.crc32(bytes(raw[pos:pos + i.file_size]))
open("crcs", "w").write(f"{i.CRC:08x} {got:08x}\n")
# x (10, 6) and v = x.view(60) over one storage
s = Storage(rng.normal(size=60).astype(np.float32))
save({"x": Tensor(s, 0, (10, 6), (6, 1)), "v": Tensor(s, 0, (60,), (1,))}, "views.pt")
np.save("s.npy", s.data)
PY
N="$NANAUDIT"

# legacy duplicate key: scan, clean and --dry-run refuse it
msg="legdup.pt: legacy checkpoint: storage key '0' is listed twice (refused: torch.load fills the storage from the last copy, readers disagree on which wins)"
expect_exit 3 "$N" scan legdup.pt
expect_stdout_contains "error: legacy checkpoint: storage key '0' is listed twice"
expect_exit 3 "$N" clean legdup.pt --nonfinite zero -o l.pt
expect_stderr_contains "$msg"
expect_exit 3 "$N" clean legdup.pt --nonfinite zero --dry-run
expect_stderr_contains "$msg"
[ ! -e l.pt ] || fail "a refused legacy file was written"

# a damaged member clean would rewrite: refused in both modes, one line
read -r stored bytes < crcs
msg="badcrc.pt: w: its storage member 'archive/data/0' fails its CRC-32 check (stored $stored, bytes give $bytes): the input is damaged, and the copy would get a valid CRC-32 over it; --exclude copies it unchanged; nothing written"
expect_exit 3 "$N" clean badcrc.pt --nonfinite zero -o c.pt
expect_stderr_contains "$msg"
[ "$(wc -l < "$T/stderr")" -eq 1 ] || fail "more than one error line"
expect_exit 3 "$N" clean badcrc.pt --nonfinite zero --dry-run
expect_stderr_contains "$msg"
[ ! -e c.pt ] || fail "a refused damaged file was written"
# --exclude w: the other member is cleaned, w's bytes and stale CRC copied
expect_exit 0 "$N" clean badcrc.pt --nonfinite zero --exclude w -o c.pt
"$NA_PYTHON" - <<'PY' || fail "the --exclude'd damaged member"
import zipfile
import numpy as np
zi, zo = zipfile.ZipFile("badcrc.pt"), zipfile.ZipFile("c.pt")
assert zo.testzip() == "archive/data/0", zo.testzip()   # the input's damage, kept
assert zo.getinfo("archive/data/0").CRC == zi.getinfo("archive/data/0").CRC
ri, ro = open("badcrc.pt", "rb").read(), open("c.pt", "rb").read()
i = zi.getinfo("archive/data/0")
pos = i.header_offset + 30 + len(i.filename) + int.from_bytes(ri[i.header_offset + 28:i.header_offset + 30], "little")
assert ro[pos:pos + i.file_size] == ri[pos:pos + i.file_size]
assert np.frombuffer(zo.read("archive/data/1"), np.float32).tolist() == [1.0, 0.0]
PY
# the undamaged original is written as before
expect_exit 0 "$N" clean good.pt --nonfinite zero -o g.pt

# views of one storage with other rows and features
msg="views.pt: x: shares storage bytes with 'v' (another view of them): writing one would change the other; --exclude both copies them unchanged; nothing written"
expect_exit 3 "$N" clean views.pt --samples --normalize zscore -o v.pt
expect_stderr_contains "$msg"
expect_exit 3 "$N" clean views.pt --samples --normalize zscore --dry-run
expect_stderr_contains "$msg"
[ ! -e v.pt ] || fail "refused views were written"
ls -A | grep -q '^\.nanaudit' && fail "temporary file left"
# weights (one statistic per tensor): both views write the same values
expect_exit 0 "$N" clean views.pt --normalize zscore -o v.pt
"$NA_PYTHON" - <<'PY' || fail "views cleaned as weights"
import zipfile
import numpy as np
x = np.load("s.npy").astype(np.float64)
want = ((x - x.mean()) / x.std()).astype(np.float32)
got = np.frombuffer(zipfile.ZipFile("v.pt").read("archive/data/0"), np.float32)
np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
PY
pass
