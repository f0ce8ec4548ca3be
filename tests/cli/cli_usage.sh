#!/bin/bash
# Usage errors: exit 2 with "nanaudit: ... (try 'nanaudit CMD --help')",
# decided before any input is opened (the input here does not exist, so a
# 3 would mean it was opened). Plus --help and --version.
. "$(dirname "$0")/helpers.sh"

usage() { # usage "message part" args...
    local msg="$1"; shift
    expect_exit 2 "$NANAUDIT" "$@"
    expect_stderr_contains "$msg"
    expect_stdout_lacks "nanaudit"
    [ "$(wc -l <"$T/stderr")" -eq 1 ] || fail "usage error is not one line: $*"
}
X="$T/does-not-exist"
usage "nanaudit: no command given (try 'nanaudit --help')"
usage "nanaudit: unknown command 'frobnicate' (try 'nanaudit --help')" frobnicate
usage "nanaudit: no input files (try 'nanaudit scan --help')" scan
usage "nanaudit: no input files (try 'nanaudit info --help')" info
usage "nanaudit: unknown option '--bogus' (try 'nanaudit scan --help')" scan --bogus "$X"
usage "nanaudit: unknown option '-z' (try 'nanaudit scan --help')" scan -z "$X"
usage "nanaudit: unknown option '--zscore' (try 'nanaudit info --help')" info --zscore 3 "$X"
usage "nanaudit: --zscore needs an argument K" scan "$X" --zscore
usage "nanaudit: --zscore: 'abc' is not a number >= 0" scan --zscore abc "$X"
usage "nanaudit: --zscore: '-1' is not a number >= 0" scan --zscore -1 "$X"
usage "nanaudit: --zscore: 'inf' is not a number >= 0" scan --zscore inf "$X"
# (twelfth fresh-user round) strtod read 0x10 as 16 and skipped spaces;
# decimal only, as in policy files
usage "nanaudit: --zscore: '0x10' is not a number >= 0" scan --zscore 0x10 "$X"
usage "nanaudit: --zscore: ' 3' is not a number >= 0" scan --zscore ' 3' "$X"
# a number that underflows to 0 is refused as one that overflows is: K =
# 1e-400 became 0, the outlier test switched off (fifteenth fresh-user
# round); a subnormal result is the nearest double, kept
usage "nanaudit: --zscore: '1e-400' is not a number >= 0" scan --zscore 1e-400 "$X"
usage "nanaudit: --max-abs: '1e-400' is not a finite number >= 0" scan --max-abs 1e-400 "$X"
expect_exit 0 "$NANAUDIT" scan --format json --zscore 1e-310 "$NA_SRC/examples/clean.safetensors"
expect_json "$T/stdout" 'j["zscore"]' '1e-310'

usage "nanaudit: --max-abs: '0x1p3' is not" scan --max-abs 0x1p3 "$X"
usage "nanaudit: --nonfinite: 'value=0x1p-3'" clean --nonfinite value=0x1p-3 "$X" -o "$T/o"
usage "nanaudit: --max-locations: 'x' is not a count" scan --max-locations x "$X"
usage "nanaudit: --max-locations: '-2' is not a count" scan --max-locations=-2 "$X"
usage "nanaudit: --threads: '0' is not a thread count" scan --threads 0 "$X"
usage "nanaudit: --threads: '2x' is not a thread count" scan --threads 2x "$X"
usage "unknown kind 'bogus'" scan --fail-on nan,bogus "$X"
usage "nanaudit: --format: 'xml' is not text, json or github" scan --format xml "$X"
usage "nanaudit: --report: '' is not a file name" scan --report= "$X"
usage "nanaudit: --color: 'sometimes' is not auto, always or never" scan --color sometimes "$X"
usage "nanaudit: --max-header-bytes: '0' is not a byte count >= 1" scan --max-header-bytes 0 "$X"
usage "nanaudit: --max-header-bytes: '1e9' is not a byte count" scan --max-header-bytes 1e9 "$X"
usage "nanaudit: --dtype: 'F99' is not a dtype" scan --dtype F99 "$X"
usage "nanaudit: --dtype: 'f32' is not a dtype" info --dtype f32 "$X"
# (twelfth fresh-user round) F4 was exit 3 per input: a bad value is exit 2
for cmd in scan info clean; do
    usage "nanaudit: --dtype: 'F4' is not a dtype raw data can be read as (F4's values are 4 bits, not whole bytes)" $cmd --dtype F4 "$X"
done
usage "nanaudit: --shape: '2xx3' is not a shape" scan --dtype F32 --shape 2xx3 "$X"
usage "nanaudit: --shape: '-1' is not a shape" scan --dtype F32 --shape=-1 "$X"
usage "nanaudit: --endian: 'middle' is not little or big" scan --dtype F32 --endian middle "$X"
usage "nanaudit: --offset: '-4' is not a byte count" scan --dtype F32 --offset=-4 "$X"
usage "nanaudit: --shape needs --dtype" scan --shape 2x2 "$X"
usage "nanaudit: --endian needs --dtype" info --endian big "$X"
usage "nanaudit: --offset needs --dtype" scan --offset 8 "$X"
usage "nanaudit: --quiet takes no argument" scan --quiet=yes "$X"

# help and version: stdout, exit 0, no input needed
expect_exit 0 "$NANAUDIT" --help
expect_stdout_contains "Usage: nanaudit COMMAND"
expect_stdout_contains "scan [options] FILE|DIR|INDEX..."
expect_exit 0 "$NANAUDIT" scan --help
expect_stdout_contains "Usage: nanaudit scan [options] FILE|DIR|INDEX..."
expect_stdout_contains "ddof=0"
expect_stderr_empty
expect_exit 0 "$NANAUDIT" scan -h
expect_stdout_contains "--zscore K"
expect_exit 0 "$NANAUDIT" info --help
expect_stdout_contains "Usage: nanaudit info [options] FILE..."
expect_stdout_lacks "--zscore"
expect_exit 0 "$NANAUDIT" --version
expect_stdout_contains "nanaudit 0.1.0"
expect_exit 0 "$NANAUDIT" scan --version
# "--" ends the options: a file named like a flag is an input (exit 3: missing)
expect_exit 3 "$NANAUDIT" scan -- --zscore
expect_stderr_contains "nanaudit: --zscore: "

# a value option given twice is a usage error: the second replaced the
# first, and `--fail-on nan --fail-on outliers` let a NaN pass (exit 0,
# eighteenth fresh-user round); options that collect values repeat
F="$NA_SRC/examples/nan.safetensors"
[ -f "$F" ] || F="$(ls "$NA_SRC"/examples/*.safetensors | head -1)"
expect_exit 2 "$NANAUDIT" scan --fail-on nan --fail-on outliers "$F"
expect_stderr_contains "nanaudit: --fail-on given twice: it takes one value, which a second would replace (list every kind in one --fail-on: nan,inf,outliers)"
printf 'version: 1\ndefaults:\n  fail_on: [nan]\n' >"$T/a.yaml"
printf 'version: 1\ndefaults:\n  fail_on: none\n' >"$T/b.yaml"
expect_exit 2 "$NANAUDIT" scan --policy "$T/a.yaml" --policy="$T/b.yaml" "$F"
expect_stderr_contains "--policy given twice: it takes one value, which a second would replace (one policy file holds every rule)"
expect_exit 2 "$NANAUDIT" scan --zscore 3 --zscore 4 "$F"
expect_stderr_contains "--zscore given twice"
expect_exit 2 "$NANAUDIT" clean --nonfinite zero --nonfinite mean "$F" -o "$T/o.st"
expect_stderr_contains "--nonfinite given twice"
expect_exit 2 "$NANAUDIT" scan --max-nan-fraction 0.1 --max-nan-fraction 0.2 "$F"
expect_stderr_contains "--max-nan-fraction given twice"
# flags that undo each other are refused together (the last one won)
expect_exit 2 "$NANAUDIT" clean --samples --no-samples "$F" -o "$T/o.st"
expect_stderr_contains "--samples and --no-samples contradict each other: give one"
# flags and collecting options may repeat
"$NANAUDIT" scan -q -q --report "$T/a.json" --report "$T/b.json" "$F" >/dev/null 2>&1
[ $? -le 1 ] || fail "repeated -q / --report refused"
[ -s "$T/a.json" ] && [ -s "$T/b.json" ] || fail "both reports"
pass
