#!/bin/bash
# `nanaudit scan --mad K` (issue 4): the modified z-score replaces the
# z-score test. Text and JSON say which test ran with its median and MAD;
# usage errors are exit 2 with one line, decided before any input is
# opened; the CUDA backend has no median, so --device cuda is refused and
# auto stays on the CPU. Exact numbers against numpy are in
# tests/conformance/test_scan_mad.py.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
# median 3, |x - 3| = 2 1 0 1 97 -> MAD 1; 100 has M = 0.6745*97 = 65.4
save_file({"x": np.array([1, 2, 3, 4, 100], np.float64),
           # MAD 0 (three zeros of five): MeanAD = (0+0+0+1+50)/5 = 10.2;
           # 50/(1.253314*10.2) = 3.91 > 3.5, 1/12.78 is not
           "z": np.array([0, 0, 0, 1, 50], np.float32),
           "c": np.full(4, 7.0, np.float32)}, "m.safetensors")
PY
N="$NANAUDIT"

expect_exit 0 "$N" scan --mad 3.5 m.safetensors
expect_stdout_contains "note x: 1 outlier with modified z-score |0.6745 (x - 3) / 1| > 3.5 (median, MAD) (first at [4])"
expect_stdout_contains "note z: 1 outlier with |x - 0| / (1.253314 * 10.2) > 3.5 (median, MeanAD: MAD is 0) (first at [4])"
expect_stdout_contains "2 outliers (modified z-score > 3.5: median, MAD)"
expect_stdout_lacks "beyond mean"

expect_exit 0 "$N" scan --mad 3.5 --format json m.safetensors
cp "$T/stdout" m.json
expect_json m.json 'j["mad"]' '3.5'
expect_json m.json 'j["zscore"]' '0.0'
expect_json m.json '[t["outliers"] for t in j["files"][0]["tensors"] if t["name"] == "x"][0]' \
    '{"method": "mad", "threshold": 3.5, "median": 3.0, "mad": 1.0, "meanad": null, "count": 1, "locations": [[4]]}'
expect_json m.json '[t["outliers"]["meanad"] for t in j["files"][0]["tensors"] if t["name"] == "z"][0]' '10.2'
expect_json m.json '[t["outliers"] for t in j["files"][0]["tensors"] if t["name"] == "c"][0]' \
    '{"method": "mad", "threshold": 3.5, "median": 7.0, "mad": 0.0, "meanad": 0.0, "count": 0, "locations": []}'
expect_json m.json 'j["device"]' '"cpu"'

# A median selected among tied zeros of both signs is +0 (the radix keys
# order -0 first: the report said "median": -0.0 and "(x + 0)", round 40a)
"$NA_PYTHON" -c "
import numpy as np
from safetensors.numpy import save_file
save_file({'nz': np.array([-5, -3, -0.0, -0.0, -0.0, 0, 3, 5, 100], np.float32)}, 'nz.safetensors')"
expect_exit 0 "$N" scan --mad 3.5 nz.safetensors
expect_stdout_contains "note nz: 1 outlier with modified z-score |0.6745 (x - 0) / 3| > 3.5 (median, MAD) (first at [8])"
expect_exit 0 "$N" scan --mad 3.5 --format json nz.safetensors
cp "$T/stdout" nz.json
expect_json nz.json 'j["files"][0]["tensors"][0]["outliers"]["median"].hex()' '"0x0.0p+0"'

# --fail-on outliers gates on the --mad count
expect_exit 1 "$N" scan --mad 3.5 --fail-on outliers m.safetensors
expect_exit 0 "$N" scan --mad 80 --fail-on outliers m.safetensors

# without --mad: the z-score test, as before
expect_exit 0 "$N" scan --zscore 1 --format json m.safetensors
cp "$T/stdout" z.json
expect_json z.json 'j["files"][0]["tensors"][0]["outliers"]["method"]' '"zscore"'
expect_json z.json '"mad" in j' 'false'

# usage errors: exit 2, one line, nothing on stdout
expect_exit 2 "$N" scan --zscore 3 --mad 3.5 m.safetensors
expect_stderr_contains "give one of --zscore and --mad"
[ -s "$T/stdout" ] && fail "stdout not empty on a usage error"
expect_exit 2 "$N" scan --mad 3.5 --device cuda m.safetensors
expect_stderr_contains "--mad runs on the CPU only (the CUDA backend has no median); use --device cpu or auto"
expect_exit 2 "$N" scan --mad 0 m.safetensors
expect_stderr_contains "--mad: '0' is not a number > 0"
expect_exit 2 "$N" scan --mad abc m.safetensors
expect_stderr_contains "--mad: 'abc' is not a number > 0"
expect_exit 2 "$N" scan m.safetensors --mad
expect_stderr_contains "--mad needs an argument K"
# decided before any input is opened: a missing file does not turn it into 3
expect_exit 2 "$N" scan --zscore 3 --mad 3.5 missing.safetensors

expect_exit 0 "$N" scan --help
expect_stdout_contains "--mad K"
pass
