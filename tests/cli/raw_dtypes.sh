#!/bin/bash
# raw_dtypes.sh - raw files (--dtype/--shape/--endian/--offset), written
# here with numpy: F32, F64, I16 and C64 in both byte orders, at an offset,
# plain and gzip-compressed (one and two gzip members), each compared with
# numpy computing in float64 (counts and min/max exact, mean/std to
# 1e-12*(|mean|+std), DESIGN.md); then every size rule with its message.
. "$(dirname "$0")/helpers.sh"

# check.py FILE.json WANT.npy NAME: the tensor NAME of the report against
# the array in WANT.npy (already decoded, any dtype).
cat >"$T/check.py" <<'PY'
import json, sys
import numpy as np
rep = json.load(open(sys.argv[1]))
want = np.load(sys.argv[2])
byte_order = sys.argv[4]
t = [x for x in rep["files"][0]["tensors"] if x["name"] == sys.argv[3]][0]
x = want.astype(np.float64)
fin = x[np.isfinite(x)]
def eq(k, v):
    if t[k] != v:
        sys.exit(f"{sys.argv[3]}: {k} = {t[k]!r}, numpy says {v!r}")
eq("shape", list(want.shape)); eq("elements", int(want.size)); eq("byte_order", byte_order)
eq("nan", int(np.isnan(x).sum())); eq("pos_inf", int(np.isposinf(x).sum()))
eq("neg_inf", int(np.isneginf(x).sum())); eq("finite", int(fin.size))
eq("zeros", int((fin == 0).sum()))
eq("min", float(fin.min())); eq("max", float(fin.max()))
mean, std = float(fin.mean()), float(fin.std())
tol = 1e-12 * (abs(mean) + std)
if abs(t["mean"] - mean) > tol or abs(t["std"] - std) > tol:
    sys.exit(f"{sys.argv[3]}: mean/std {t['mean']} {t['std']} vs numpy {mean} {std}")
flat = np.flatnonzero(np.isnan(x))[:5]
eq("nan_locations", [list(map(int, np.unravel_index(i, x.shape))) for i in flat])
PY

# gen.py: writes each case's raw file and its reference .npy
"$NA_PYTHON" - "$T" <<'PY' || fail "generating the raw files"
import gzip, sys
import numpy as np
T = sys.argv[1]
rng = np.random.default_rng(7)
def save(name, arr, order, offset=b"", gz=0):
    a = arr.astype(arr.dtype.newbyteorder(order))
    data = offset + a.tobytes()
    if gz == 1:
        data = gzip.compress(data, mtime=0)
    elif gz == 2:  # two members, split in the middle of an element
        h = len(data) // 2 + 1
        data = gzip.compress(data[:h], mtime=0) + gzip.compress(data[h:], mtime=0)
    open(f"{T}/{name}", "wb").write(data)
    np.save(f"{T}/{name}.npy", arr)
f32 = rng.normal(3.0, 2.0, (20, 30)).astype(np.float32)
f32[1, 2] = np.nan; f32[5, 0] = np.inf; f32[7, 7] = -np.inf; f32[0, 0] = 0
save("f32le.bin", f32, "<"); save("f32be.bin", f32, ">")
f64 = (1e8 + rng.normal(0, 1, (4, 5, 6))).astype(np.float64)
f64[3, 4, 5] = np.nan
save("f64be_off.bin", f64, ">", offset=b"HEADER-16-BYTES!")
i16 = np.array([[-3, 0, 300], [32767, -32768, 7]], dtype=np.int16)
save("i16be.bin", i16, ">"); save("i16le.bin", i16, "<")
big = rng.normal(0, 1, 300000).astype(np.float32)
big[123456] = np.nan
save("big.bin", big, "<"); save("big1.bin.gz", big, "<", gz=1); save("big2.bin.gz", big, ">", gz=2)
c = np.array([1 + 2j, 3 - 4j, complex(np.nan, 0.5), -1j], dtype=np.complex64)
save("c64be.bin", c, ">")
np.save(f"{T}/c64be.bin.real.npy", c.real); np.save(f"{T}/c64be.bin.imag.npy", c.imag)
PY

# audit FILE EXIT NAME ORDER ARGS...: exit code, then the numbers of NAME
audit() {
    local f="$1" code="$2" name="$3" order="$4"; shift 4
    expect_exit "$code" "$NANAUDIT" scan --format json "$@" "$T/$f"
    cp "$T/stdout" "$T/$f.json"
    expect_json "$T/$f.json" 'j["files"][0]["format"]' '"raw"'
    "$NA_PYTHON" "$T/check.py" "$T/$f.json" "$T/$f.npy" "$name" "$order" || fail "$f: numbers differ"
}
audit f32le.bin 1 data little --dtype F32 --shape 20x30
audit f32be.bin 1 data big --dtype F32 --shape 20,30 --endian big
audit f64be_off.bin 1 data big --dtype F64 --endian big --offset 16 --shape 4x5x6
audit i16be.bin 0 data big --dtype I16 --endian big --shape 2x3
audit i16le.bin 0 data little --dtype I16 --shape 2x3
# gzip: shape from the inflated size; two members; big-endian inside gzip
audit big.bin 1 data little --dtype F32
audit big1.bin.gz 1 data little --dtype F32
audit big2.bin.gz 1 data big --dtype F32 --endian big
expect_json "$T/big2.bin.gz.json" 'j["files"][0]["tensors"][0]["shape"]' '[300000]'
# the same data plain and gzipped gives the same statistics
a="$(json_get "$T/big.bin.json" '{k: v for k, v in j["files"][0]["tensors"][0].items()}')"
b="$(json_get "$T/big1.bin.gz.json" '{k: v for k, v in j["files"][0]["tensors"][0].items()}')"
assert_eq "$b" "$a" "gzip vs plain"
# C64: two F32 tensors data.real and data.imag
expect_exit 1 "$NANAUDIT" scan --format json --dtype C64 --endian big "$T/c64be.bin"
cp "$T/stdout" "$T/c.json"
expect_json "$T/c.json" '[t["name"] for t in j["files"][0]["tensors"]]' '["data.real", "data.imag"]'
expect_json "$T/c.json" '[t["dtype"] for t in j["files"][0]["tensors"]]' '["F32", "F32"]'
cp "$T/c64be.bin.real.npy" "$T/cr.npy"; cp "$T/c64be.bin.imag.npy" "$T/ci.npy"
"$NA_PYTHON" "$T/check.py" "$T/c.json" "$T/cr.npy" data.real big || fail "C64 real part"
"$NA_PYTHON" "$T/check.py" "$T/c.json" "$T/ci.npy" data.imag big || fail "C64 imaginary part"

# size rules: exit 3, both byte counts in the message
expect_exit 3 "$NANAUDIT" scan --dtype F32 --shape 20x31 "$T/f32le.bin"
expect_stderr_contains "shape [20,31] of F32 needs 2480 bytes, but the data after offset 0 is 2400 bytes"
expect_exit 3 "$NANAUDIT" scan --dtype F64 --offset 4 "$T/f32le.bin"
expect_stderr_contains "data size 2396 bytes is not a multiple of the F64 element size (8 bytes)"
expect_exit 3 "$NANAUDIT" scan --dtype F32 --offset 5000 "$T/f32le.bin"
expect_stderr_contains "--offset 5000 is past the end of the file (2400 bytes)"
expect_exit 3 "$NANAUDIT" scan --dtype F32 --shape 1000 "$T/big1.bin.gz"
expect_stderr_contains "shape [1000] of F32 needs 4000 bytes, but the data after offset 0 is 1200000 bytes"
# nothing after --offset (a header whose payload was lost) is an error as
# an empty file is (it was a [0] tensor, exit 0: sixteenth fresh-user
# round), unless --length 0 or a --shape with a 0 says it is meant
expect_exit 3 "$NANAUDIT" scan --dtype F32 --offset 2400 "$T/f32le.bin"
expect_stderr_contains "no data after --offset 2400 (the file has 2400 bytes); give --shape with a 0 dimension or --length 0 if no data is right"
expect_exit 0 "$NANAUDIT" scan --dtype F32 --offset 2400 --length 0 "$T/f32le.bin"
# 2^64 - 1 was the "not given" value: read to the end of the file, where
# 2^64 - 2 is past it (eighteenth fresh-user round)
expect_exit 2 "$NANAUDIT" scan --dtype F32 --length 18446744073709551615 "$T/f32le.bin"
expect_stderr_contains "--length: '18446744073709551615' bytes is more than any file holds"
expect_exit 3 "$NANAUDIT" scan --dtype F32 --length 18446744073709551614 "$T/f32le.bin"
expect_exit 0 "$NANAUDIT" scan --dtype F32 --offset 2400 --shape 0x4 "$T/f32le.bin"
pass
