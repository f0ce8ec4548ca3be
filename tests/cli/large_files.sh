#!/bin/bash
# large_files.sh - files over 4 GiB, made sparse so the test costs no disk
# (ctest label "large": run by the normal build's ctest, not under the
# sanitizers; ~10 s of CPU, most of it the kernel handing out zero pages).
#  - a 6 GiB safetensors file with one F32 tensor of 1,610,612,736
#    elements, zero except three values at byte offsets past 2^32 (a NaN
#    at 5 GiB, -2 at 4 GiB, 7 at the very end): counts, locations, min,
#    max, mean and std are exact, so no offset was cut to 32 bits;
#  - a 4 GiB file audited under `ulimit -v 1048576` (1 GiB of address
#    space): files are mapped in windows, never whole (DESIGN.md).
. "$(dirname "$0")/helpers.sh"

# sparse_st OUT N: F32 tensor "w" of N elements, zero but for IDX=VALUE
# pairs from the remaining arguments (element indices).
sparse_st() {
    "$NA_PYTHON" - "$@" <<'PY' || fail "writing sparse file $1"
import json, struct, sys
out, n = sys.argv[1], int(sys.argv[2])
h = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    start = 8 + len(h)
    for pair in sys.argv[3:]:
        i, v = pair.split("=")
        f.seek(start + 4 * int(i))
        f.write(struct.pack("<f", float(v)))
    f.truncate(start + 4 * n)
PY
}

N6=1610612736 # 6 GiB of F32
sparse_st "$T/six.safetensors" "$N6" 1342177280=nan 1073741824=-2 $((N6 - 1))=7
size=$(stat -c %s "$T/six.safetensors")
[ "$size" -gt 6442450944 ] || fail "six.safetensors is $size bytes"
expect_exit 1 "$NANAUDIT" scan --format json --threads 2 "$T/six.safetensors"
cp "$T/stdout" "$T/six.json"
W='j["files"][0]["tensors"][0]'
expect_json "$T/six.json" "$W[\"elements\"]" "$N6"
expect_json "$T/six.json" "$W[\"nan\"]" 1
expect_json "$T/six.json" "$W[\"nan_locations\"]" '[[1342177280]]'
expect_json "$T/six.json" "$W[\"zeros\"]" $((N6 - 3))
expect_json "$T/six.json" "[$W[\"min\"], $W[\"max\"], $W[\"abs_max\"]]" '[-2.0, 7.0, 7.0]'
expect_json "$T/six.json" "$W[\"outliers\"][\"count\"]" 2
expect_json "$T/six.json" "$W[\"outliers\"][\"locations\"]" "[[1073741824], [$((N6 - 1))]]"
# mean and std over the N6 - 1 finite values, against numpy's formula
expect_json "$T/six.json" "abs($W[\"mean\"] - 5 / ($N6 - 1)) <= 1e-12 * 5 / $N6" 'true'
expect_json "$T/six.json" "abs($W[\"std\"] - (53 / ($N6 - 1) - (5 / ($N6 - 1)) ** 2) ** 0.5) <= 1e-12 * 2e-4" 'true'
expect_exit 0 "$NANAUDIT" info "$T/six.safetensors"
expect_stdout_contains "$N6"
rm -f "$T/six.safetensors"

N4=1073741824 # 4 GiB of F32, in 1 GiB of address space
sparse_st "$T/four.safetensors" "$N4" $((N4 - 1))=inf
rc=0
( ulimit -v 1048576 && exec "$NANAUDIT" scan --format json --threads 2 "$T/four.safetensors" ) \
    >"$T/four.json" 2>"$T/stderr" </dev/null || rc=$?
assert_eq "$rc" 1 "exit code under ulimit -v 1048576 ($(head -c 300 "$T/stderr"))"
expect_json "$T/four.json" "$W[\"elements\"]" "$N4"
expect_json "$T/four.json" "[$W[\"pos_inf\"], $W[\"zeros\"]]" "[1, $((N4 - 1))]"
expect_json "$T/four.json" "$W[\"inf_locations\"]" "[[$((N4 - 1))]]"
pass
