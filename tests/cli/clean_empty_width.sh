#!/bin/bash
# Regression (issue 4, fresh-user report): a (0, 3) array reported
# "features": 1 and "0 samples x 1" (the width was elements / shape[0],
# 1 when shape[0] is 0), so --save-params on (0, 8) wrote 1 feature and
# applying it to (N, 8) data failed. The width is now the product of the
# trailing dimensions: (0, 3) has 3 features, (0, 0, 3) and (5, 0) none.
# A header alone can declare (0, 2^40): more than 2^20 features without
# data are not given statistics; the tensor is copied unchanged (it holds
# no value), or with --include is an error (exit 3, as a dtype clean
# cannot write). Trailing dimensions
# whose product exceeds 2^64 likewise.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" -c '
import numpy as np
np.save("e03.npy", np.zeros((0, 3)))
np.save("e003.npy", np.zeros((0, 0, 3)))
np.save("e50.npy", np.zeros((5, 0)))
np.save("e08.npy", np.zeros((0, 8)))
np.save("d48.npy", np.arange(32.0).reshape(4, 8))
def hdr(name, shape):   # a header only: numpy would write the same bytes
    h = "{\x27descr\x27: \x27<f8\x27, \x27fortran_order\x27: False, \x27shape\x27: %s, }" % (shape,)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    open(name, "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
hdr("h40.npy", (0, 2**40))
hdr("h20.npy", (0, 2**20 + 1))
hdr("h128.npy", (0, 2**40, 2**40, 2**48))
' || fail "making inputs"

# empty NAME SAMPLES WIDTH FEATURES [OPTS]: the text line and "features"
empty() {
    local f="$1" s="$2" w="$3" nf="$4"
    shift 4
    expect_exit 0 "$N" clean "$f.npy" -o "o_$f.npy" --report "$f.json" --save-params "p_$f.json" "$@"
    expect_stdout_contains "data: F64 -> F64, $s samples x $w, $nf feature(s), 1 pass"
    expect_json "$f.json" 'j["tensors"][0]["features"]' "$nf"
    expect_json "p_$f.json" 'j["tensors"]["data"]["features"]' "$nf"
    expect_json "p_$f.json" 'len(j["tensors"]["data"]["n_min"])' "$nf"
    cmp -s "$f.npy" "o_$f.npy" || fail "$f: output differs from the input"
    rm -f "o_$f.npy"
}
empty e03 0 3 3
empty e003 0 0 0
empty e50 5 0 0
empty e08 0 8 8
empty e03 0 3 1 --global

# the (0, 8) fit applies to (4, 8) data; (5, 0)'s to (5, 0)
expect_exit 0 "$N" clean d48.npy -o o48.npy --apply-params p_e08.json
cmp -s d48.npy o48.npy || fail "apply of the (0, 8) fit changed the data"
expect_exit 0 "$N" clean e50.npy -o o50.npy --apply-params p_e50.json
# ... but a fit without samples has no statistics to normalize with
expect_exit 0 "$N" clean e08.npy -o z08.npy --normalize zscore --save-params z08.json
expect_exit 2 "$N" clean d48.npy -o o48z.npy --normalize zscore --apply-params z08.json
expect_stderr_contains "z08.json: bad --apply-params file: tensor 'data': \"n_mean\"[0] is null, but feature 0 is not passthrough and --normalize zscore uses it (4 sample(s) kept here; null: the fit had no value of the feature at that step)"
[ ! -e o48z.npy ] || fail "o48z.npy written"
# ... while data without samples has nothing to normalize: the (0, 8)
# fit applies to (0, 8) data again (it was refused with the nulls above)
expect_exit 0 "$N" clean e08.npy -o z08b.npy --normalize zscore --apply-params z08.json
cmp -s e08.npy z08b.npy || fail "apply of the (0, 8) zscore fit to (0, 8) data changed it"
expect_exit 0 "$N" clean e08.npy -o m08.npy --normalize minmax --save-params m08.json
expect_exit 0 "$N" clean e08.npy -o m08b.npy --normalize minmax --apply-params m08.json
cmp -s e08.npy m08b.npy || fail "apply of the (0, 8) minmax fit to (0, 8) data changed it"

# hostile headers: no 2^40 statistics; copied unchanged, or refused
for f in h40:1099511627776 h20:1048577; do
    expect_exit 0 "$N" clean "${f%%:*}.npy" -o "o_${f%%:*}.npy"
    expect_stdout_contains "data: copied: no data and ${f#*:} elements per sample, more features than clean keeps statistics for without data (1048576)"
    cmp -s "${f%%:*}.npy" "o_${f%%:*}.npy" || fail "$f: copy differs"
done
# beyond numpy's signed 64-bit sizes (2^128 per sample): np.load refuses
# the header, and so does the reader (a copy would not load either)
expect_exit 3 "$N" clean h128.npy -o o_h128.npy
expect_stderr_contains "h128.npy: shape (0, 1099511627776, 1099511627776, 281474976710656): more elements than numpy's 64-bit sizes hold (2^63 - 1)"
[ ! -e o_h128.npy ] || fail "o_h128.npy written"
expect_exit 3 "$N" clean h40.npy -o o.npy --include data
expect_stderr_contains "h40.npy: data: no data and 1099511627776 elements per sample, more features than clean keeps statistics for without data (1048576)"
[ ! -e o.npy ] || fail "output written after an error"
pass
