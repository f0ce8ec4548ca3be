#!/bin/bash
# Regression test for issue 4: scan --zscore K / --mad K on a tensor whose
# mean, std (or MeanAD, the MAD == 0 fallback) overflows a double flagged
# nothing and said nothing: values spanning -1.7e308..1.7e308 make the
# partial sums overflow; numpy's np.std is inf there, ours NaN ('-' in the
# table, null in JSON), and |x - mean| > K*std is never true. Now a note
# per tensor, text and JSON (outliers.note), in clean's words for the same
# statistic (clean refuses it, exit 3). Not a finding: --fail-on outliers
# keeps exit 0 (man page).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import warnings
import numpy as np
warnings.simplefilter("ignore")  # numpy's own overflow warnings
M = 1.7e308
std = np.array([-M, M, 1, 2, 3, 1e300])      # mean finite, std overflows
mean = np.array([M, 1.6e308, 1.5e308, 1, 2, 3])  # the sum overflows
mad = np.array([0, 0, 0, 0, 0, M, M, -M, -M])    # MAD 0, MeanAD overflows
np.save("std.npy", std)
np.save("mean.npy", mean)
np.save("mad.npy", mad)
np.save("ok.npy", np.array([1.0, 2, 3, 4, 100]))
# numpy's statistics are not finite either
assert np.isfinite(std.mean()) and not np.isfinite(std.std())
assert not np.isfinite(mean.mean()) and not np.isfinite(mean.std())
med = np.median(mad)
assert np.median(np.abs(mad - med)) == 0 and not np.isfinite(np.mean(np.abs(mad - med)))
PY
WHY="overflows a double, as numpy's does (values near 1.8e308, or spread by 1e154 or more)"

# the std: a note line, exit 0 with --fail-on outliers
expect_exit 0 "$N" scan --zscore 1 --fail-on outliers std.npy
expect_stdout_contains "  note data: outlier test not applied: the standard deviation (--zscore) $WHY"
expect_stdout_contains "0 outliers; OK (exit 0)"
expect_exit 0 "$N" scan --zscore 1 --fail-on outliers --format json std.npy
cp "$T/stdout" s.json
expect_json s.json 'j["files"][0]["tensors"][0]["outliers"]["note"]' \
    "\"outlier test not applied: the standard deviation (--zscore) $WHY\""
expect_json s.json 'j["files"][0]["tensors"][0]["outliers"]["count"]' '0'
expect_json s.json 'j["files"][0]["tensors"][0]["std"]' 'null'
# -q lists the tensor: the note is the reason to look
expect_exit 0 "$N" scan -q --zscore 1 std.npy
expect_stdout_contains "note data: outlier test not applied"

# the mean
expect_exit 0 "$N" scan --zscore 1 --format json mean.npy
cp "$T/stdout" m.json
expect_json m.json 'j["files"][0]["tensors"][0]["outliers"]["note"]' \
    "\"outlier test not applied: the mean (--zscore) $WHY\""

# --mad: MAD 0 and the MeanAD fallback overflows
expect_exit 0 "$N" scan --mad 3.5 --fail-on outliers mad.npy
expect_stdout_contains "  note data: outlier test not applied: the mean absolute deviation (--mad) $WHY"
expect_exit 0 "$N" scan --mad 3.5 --format json mad.npy
cp "$T/stdout" d.json
expect_json d.json 'j["files"][0]["tensors"][0]["outliers"]["mad"]' '0.0'
expect_json d.json 'j["files"][0]["tensors"][0]["outliers"]["count"]' '0'

# a tensor whose test applies: no note, 100 is flagged
expect_exit 1 "$N" scan --zscore 1.5 --fail-on outliers --format json ok.npy
cp "$T/stdout" o.json
expect_json o.json '"note" in j["files"][0]["tensors"][0]["outliers"]' 'false'
expect_json o.json 'j["files"][0]["tensors"][0]["outliers"]["count"]' '1'
expect_exit 0 "$N" scan --zscore 0 std.npy
expect_stdout_lacks "note"

# the CI formats carry the note too, never as a failure: a GitHub
# ::notice, a Markdown row with Fails "no", JUnit <system-out>
expect_exit 0 "$N" scan --zscore 3 --format github std.npy --report n.md --report n.xml
expect_stdout_contains "::notice file=std.npy,title=nanaudit outliers%3A data::outlier test not applied: the standard deviation (--zscore) $WHY"
expect_stdout_lacks "::error"
grep -qF "| std\.npy | data | outliers | | no | outlier test not applied" n.md || fail "markdown row"
grep -qF "<system-out>outliers: outlier test not applied: the standard deviation (--zscore)" n.xml || fail "junit system-out"
grep -q "<failure" n.xml && fail "junit failure for a note"

# clean refuses the same statistic in the same words
expect_exit 3 "$N" clean --zscore 1 std.npy -o out.npy
expect_stderr_contains "data: feature 0: the standard deviation (--zscore) $WHY"
pass
