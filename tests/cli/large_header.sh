#!/bin/bash
# large_header.sh - a safetensors header with 1,000,000 tensor entries
# (78 MB of JSON, under the 100,000,000-byte cap) is parsed and audited:
# every tensor counted, the exit code 0. Prints the CPU time, wall time
# and peak memory (/usr/bin/time -v's "Maximum resident set size") so the
# figures land in the test log; asserts only a loose CPU bound that a
# quadratic parse (hours) would break, not a benchmark figure. ctest
# label "large".
. "$(dirname "$0")/helpers.sh"

"$NA_PYTHON" - "$T/m.safetensors" <<'PY' || fail "writing the 1,000,000-tensor file"
import struct, sys
n = 1_000_000
parts = ['{"__metadata__":{"n":"1000000"}']
parts += [f',"layers.{i}.w":{{"dtype":"F32","shape":[1],"data_offsets":[{4*i},{4*i+4}]}}'
          for i in range(n)]
h = ("".join(parts) + "}").encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    f.write(struct.pack("<f", 1.5) * (n - 1) + struct.pack("<f", float("nan")))
PY

TIME=()
[ -x /usr/bin/time ] && TIME=(/usr/bin/time -f '%U %S %e %M' -o "$T/time.txt")
expect_exit 1 "${TIME[@]}" "$NANAUDIT" scan -q --threads 2 "$T/m.safetensors"
expect_stdout_contains "1 file, 1000000 tensors, 1000000 elements: 1 NaN" # exact since tester19
expect_stdout_contains "layers.999999.w"
if [ -s "$T/time.txt" ]; then
    # the last line: time adds "Command exited with non-zero status 1" first
    read -r user sys wall rss < <(tail -n 1 "$T/time.txt")
    echo "1,000,000 tensors: ${user}s user + ${sys}s system CPU, ${wall}s wall, peak RSS $((rss / 1024)) MiB"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%d", u + s }')
    [ "$cpu" -lt 120 ] || fail "1,000,000 tensors took ${cpu}s of CPU"
else
    echo "note: /usr/bin/time missing: peak memory not measured"
fi
# info (headers only) lists them all
expect_exit 0 "$NANAUDIT" info "$T/m.safetensors"
assert_eq "$(grep -c 'layers\.' "$T/stdout")" 1000000 "tensors listed by info"
pass
