#!/bin/bash
# Memory of a scan per file and per tensor. A dataset of one .npy per
# sample is a directory of 10^5-10^6 files: each file's report entry took
# ~12 KB (room for 8 tensors of 64 dimensions each, the shape arrays
# inline), and the JSON report was built as a jansson tree of the whole
# run on top (~17 KB a file together: 50,000 files 877 MB, a million
# would not fit in 24 GiB). Entries now hold their shapes in an
# allocation of ndim values and the JSON report is written as it is
# walked; the growth between 2,000 and 20,000 files (and between 10,000
# and 100,000 tensors of one safetensors file) is measured as the peak
# resident size of the runs. The JSON reports stay complete (checked
# below), and are byte-identical to the tree's (compared over the test
# data when the writer changed).
. "$(dirname "$0")/helpers.sh"
if is_sanitized; then # the sanitizer's shadow memory and quarantine, not ours
    echo "SKIP report_memory: sanitizer build"
    exit 0
fi
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making the inputs"
import io, os
import numpy as np
from safetensors.numpy import save_file
b = io.BytesIO()
np.save(b, np.arange(16, dtype=np.float32))
one = b.getvalue()
for d, n in (("small", 2000), ("big", 20000)):
    os.mkdir(d)
    for i in range(n):
        with open(f"{d}/s{i:06d}.npy", "wb") as f:
            f.write(one)
for name, n in (("few", 10000), ("many", 100000)):
    save_file({f"layer.{i}.w": np.full(4, i, np.float32) for i in range(n)},
              f"{name}.safetensors")
PY
# peak RSS (KiB) of one run, its report on stdout to FILE
peak() {
    "$NA_PYTHON" - "$@" <<'PY'
import resource, subprocess, sys
out = sys.argv[1]
with open(out, "wb") as f:
    r = subprocess.run(sys.argv[2:], stdout=f)
assert r.returncode == 0, r.returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
for fmt in text json; do
    a=$(peak small.$fmt "$NANAUDIT" scan --format "$fmt" small) || fail "scan small ($fmt)"
    b=$(peak big.$fmt "$NANAUDIT" scan --format "$fmt" big) || fail "scan big ($fmt)"
    per=$(( (b - a) * 1024 / 18000 ))
    echo "# $fmt: 2000 files $a KiB, 20000 files $b KiB: $per bytes per file"
    [ "$per" -lt 3000 ] || fail "$fmt: $per bytes per file (was ~12000 text, ~17000 JSON)"
    a=$(peak few.$fmt "$NANAUDIT" scan --format "$fmt" few.safetensors) || fail "few ($fmt)"
    b=$(peak many.$fmt "$NANAUDIT" scan --format "$fmt" many.safetensors) || fail "many ($fmt)"
    per=$(( (b - a) * 1024 / 90000 ))
    echo "# $fmt: 10000 tensors $a KiB, 100000 tensors $b KiB: $per bytes per tensor"
    # the safetensors header's jansson tree (~1.5 KB a tensor) is most of it
    [ "$per" -lt 2600 ] || fail "$fmt: $per bytes per tensor (was ~3300 text, ~6400 JSON)"
done
grep -q '^20000 files, 20000 tensors, 320000 elements: 0 NaN' big.text || fail "big.text summary"
"$NA_PYTHON" - <<'PY' || fail "JSON reports"
import json
r = json.load(open("big.json"))
assert r["summary"]["files"] == 20000 and r["summary"]["tensors"] == 20000, r["summary"]
assert [f["path"] for f in r["files"]] == sorted(f"big/s{i:06d}.npy" for i in range(20000))
assert all(f["tensors"][0]["shape"] == [16] and f["tensors"][0]["max"] == 15.0
           for f in r["files"])
m = json.load(open("many.json"))
t = m["files"][0]["tensors"]
assert len(t) == 100000 and m["summary"]["elements"] == 400000
assert sorted(x["mean"] for x in t) == [float(i) for i in range(100000)]
PY
pass
