#!/usr/bin/env bash
# hdf5_deflate_damaged.sh - deflate chunks that do not inflate to their
# chunk's size (round 43b, two HIGH). libhdf5's deflate filter hands the
# chunk cache whatever a stream gives: a stream that ends short left the
# rest of the chunk uninitialised, read as data (statistics changing from
# run to run, NaN hidden: exit 0), and a small stream that inflates to far
# more grew its buffer without a limit (4 GiB from a 4 MB file). Each is
# now exit 3 naming the dataset and the chunk, before libhdf5 reads it,
# in bounded memory; valid pipelines (shuffle, Fletcher32 on either side,
# scale-offset before deflate, big-endian data that H5Dread converts)
# still read as h5py reads them.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "writing the files with h5py"
import zlib
import h5py
import numpy as np

def mk(name, payloads, n=1000, chunk=100, **kw):
    with h5py.File(name, "w") as h:
        d = h.create_dataset("d", shape=(n,), dtype="f4", chunks=(chunk,),
                             compression="gzip", **kw)
        for off, payload in payloads:
            d.id.write_direct_chunk((off,), payload)

ones = np.ones(100, "f4").tobytes()
mk("short.h5", [(0, zlib.compress(b"\0" * 10))])
mk("short2.h5", [(0, zlib.compress(ones)), (100, zlib.compress(ones[:8]))], n=200)
# 50 values, then a second stream of 50 NaN that libhdf5 never reads
mk("concat.h5", [(0, zlib.compress(np.arange(50, dtype="f4").tobytes())
                  + zlib.compress(np.full(50, np.nan, "f4").tobytes()))])
z = zlib.compressobj(9)
bomb = b"".join(z.compress(b"\0" * (1 << 20)) for _ in range(256)) + z.flush()
mk("bomb.h5", [(0, bomb)])            # 256 MiB out of one 400-byte chunk
mk("bomb_shuffle.h5", [(0, bomb)], shuffle=True)
mk("garbage.h5", [(0, b"\x78\x9c" + b"\xff" * 50)])

# valid files through the checked H5Dread path (small or converted chunks)
rng = np.random.default_rng(43)
x = rng.normal(size=(3000, 7)).astype("f4")
x[5, 3] = np.nan
with h5py.File("valid.h5", "w") as h:
    h.create_dataset("small", data=x, chunks=(10, 7), compression="gzip")
    h.create_dataset("fl", data=x, chunks=(10, 7), compression="gzip", fletcher32=True)
    h.create_dataset("shuf", data=x, chunks=(10, 7), compression="gzip", shuffle=True)
    h.create_dataset("be", data=x.astype(">f8"), chunks=(1000, 7), compression="gzip")
    h.create_dataset("so", data=np.round(x[:, :3] * 100).astype("i4"), chunks=(100, 3),
                     compression="gzip", scaleoffset=0)
PY
N="$NANAUDIT"
for serial in "" 1; do
    export NANAUDIT_HDF5_SERIAL=$serial
    expect_exit 3 "$N" scan short.h5
    assert_eq "$(cat "$T/stderr")" "nanaudit: short.h5: /d: reading elements 0..999 failed: chunk at [0] inflates to 10 bytes, not the chunk's 400 (a damaged chunk)" "short ($serial)"
    expect_exit 3 "$N" scan short2.h5
    expect_stderr_contains "short2.h5: /d: reading elements 0..199 failed: chunk at [100] inflates to 8 bytes, not the chunk's 400 (a damaged chunk)"
    expect_exit 3 "$N" scan concat.h5
    expect_stderr_contains "concat.h5: /d: reading elements 0..999 failed: chunk at [0] inflates to 200 bytes, not the chunk's 400 (a damaged chunk)"
    for f in bomb bomb_shuffle; do
        /usr/bin/time -f "%M" -o "$T/rss" "$N" scan "$f.h5" >"$T/stdout" 2>"$T/stderr"
        [ $? = 3 ] || fail "$f: exit $? (want 3)"
        expect_stderr_contains "$f.h5: /d: reading elements 0..999 failed: chunk at [0] inflates to more than the chunk's 400 bytes (a damaged chunk)"
        [ "$(tail -n 1 "$T/rss")" -lt 204800 ] || fail "$f: peak RSS $(tail -n 1 "$T/rss") KiB"
    done
    expect_exit 3 "$N" scan garbage.h5
    expect_stderr_contains "garbage.h5: /d: reading elements 0..999 failed: chunk at [0]: its 52 stored bytes are not a whole zlib stream ("
    # clean refuses the same input, writes nothing
    expect_exit 3 "$N" clean short.h5 -o out.h5
    [ ! -e out.h5 ] || fail "clean wrote out.h5 from a damaged chunk"
    expect_exit 1 "$N" scan --format json valid.h5
    "$NA_PYTHON" - "$T/stdout" <<'PY' || fail "valid pipelines differ from h5py ($serial)"
import json, sys
import h5py
import numpy as np
j = json.load(open(sys.argv[1]))
got = {t["name"]: t for t in j["files"][0]["tensors"]}
with h5py.File("valid.h5") as h:
    for name in ("/small", "/fl", "/shuf", "/be", "/so"):
        a = h[name][()].astype("f8")
        t = got[name]
        assert t["status"] == "ok", t
        assert t["nan"] == int(np.isnan(a).sum()), (name, t["nan"])
        f = a[np.isfinite(a)]
        assert t["min"] == f.min() and t["max"] == f.max(), name
        assert abs(t["mean"] - f.mean()) <= 1e-12 * (abs(f.mean()) + f.std()), name
PY
    # partial edge chunks stored unfiltered (H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS:
    # no filter-mask bit says so): valid, read as h5py reads them (round 44a:
    # "not a whole zlib stream" on the checked path, "deflate: data error"
    # on the parallel one)
    for f in small big; do
        cp "$NA_TEST_DATA/hdf5/partial_nofilter_$f.h5" "pn_$f.h5"
        expect_exit 1 "$N" scan --format json "pn_$f.h5"
        "$NA_PYTHON" - "$T/stdout" "pn_$f.h5" <<'PY' || fail "pn_$f.h5 differs from h5py ($serial)"
import json, sys
import h5py
import numpy as np
t = json.load(open(sys.argv[1]))["files"][0]["tensors"][0]
with h5py.File(sys.argv[2]) as h:
    a = h["d"][()].astype("f8")
f = a[np.isfinite(a)]
assert t["status"] == "ok" and t["nan"] == 1, t
assert t["min"] == f.min() and t["max"] == f.max() and abs(t["mean"] - f.mean()) < 1e-12, t
PY
        expect_exit 0 "$N" clean -q --nonfinite zero "pn_$f.h5" -o "pn_$f.out.h5"
        "$NA_PYTHON" -c '
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1])["d"][()]
b = h5py.File(sys.argv[2])["d"][()]
assert np.array_equal(np.nan_to_num(a, nan=0.0), b)' "pn_$f.h5" "pn_$f.out.h5" || fail "clean of pn_$f.h5"
        rm -f "pn_$f.out.h5"
    done
done
unset NANAUDIT_HDF5_SERIAL
pass
