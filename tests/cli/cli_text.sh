#!/bin/bash
# The text report: aligned table, finding lines, summary line, --quiet,
# colour (--color, NO_COLOR, never on a pipe by default) and escaping of
# hostile tensor names and metadata (no terminal escape injection).
. "$(dirname "$0")/helpers.sh"

make_st "$T/a.safetensors" '{"tensors":[
 {"name":"weight","dtype":"F32","shape":[2,3],"values":[1,2,3,4,5,"nan"]},
 {"name":"b","dtype":"BF16","shape":[2],"values":[1,2]}]}'
make_st "$T/clean.safetensors" '{"tensors":[{"name":"c","dtype":"F32","shape":[1],"values":[7]}]}'

expect_exit 1 "$NANAUDIT" scan "$T/a.safetensors" "$T/clean.safetensors"
expect_stdout_contains "$T/a.safetensors (safetensors)"
expect_stdout_contains "  tensor  dtype  shape  elements  nan  inf  min  max  mean      std  outliers"
expect_stdout_contains "  weight  F32    [2,3]         6    1    0    1    5     3  1.41421         0"
expect_stdout_contains "  b       BF16   [2]           2    0    0    1    2   1.5      0.5         0"
expect_stdout_contains "  FAIL weight: 1 NaN value (first at [1, 2])"
expect_stdout_contains "$T/clean.safetensors (safetensors)"
expect_stdout_contains "2 files, 3 tensors, 9 elements: 1 NaN, 0 Inf, 0 outliers; FAILED (exit 1)"
grep -q $'\x1b' "$T/stdout" && fail "colour on a pipe by default"

# --quiet: findings, errors and the summary only
expect_exit 1 "$NANAUDIT" scan --quiet "$T/a.safetensors" "$T/clean.safetensors"
expect_stdout_lacks "tensor  dtype"
expect_stdout_lacks "clean.safetensors"
expect_stdout_contains "FAIL weight: 1 NaN value"
assert_eq "$(wc -l <"$T/stdout" | tr -d ' ')" 3 "lines of --quiet output"
expect_exit 0 "$NANAUDIT" scan -q "$T/clean.safetensors"
assert_eq "$(cat "$T/stdout")" "1 file, 1 tensor, 1 element: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)" "quiet clean"

# colour: always forces, never and NO_COLOR (auto) disable; always beats NO_COLOR
expect_exit 1 "$NANAUDIT" scan --color always "$T/a.safetensors"
expect_stdout_contains $'\x1b[1;31mFAIL\x1b[0m weight'
expect_stdout_contains $'\x1b[1;31mFAILED\x1b[0m (exit 1)'
expect_exit 1 env NO_COLOR=1 "$NANAUDIT" scan --color=always "$T/a.safetensors"
expect_stdout_contains $'\x1b[1;31m'
expect_exit 1 "$NANAUDIT" scan --color never "$T/a.safetensors"
grep -q $'\x1b' "$T/stdout" && fail "--color never printed an escape"
if command -v script >/dev/null 2>&1; then
    # a terminal: colour by default, none with NO_COLOR set
    script -qec "$NANAUDIT scan $T/clean.safetensors" /dev/null >"$T/tty.out" </dev/null || true
    grep -q $'\x1b\[32mOK' "$T/tty.out" || fail "no colour on a terminal"
    NO_COLOR=1 script -qec "$NANAUDIT scan $T/clean.safetensors" /dev/null >"$T/tty.out" </dev/null || true
    grep -q $'\x1b\[' "$T/tty.out" && fail "NO_COLOR ignored on a terminal"
fi

# hostile names: ESC[31m and a newline must arrive escaped, in text and JSON
make_st "$T/h.safetensors" '{"metadata":{"note\u001b]0;pwned\u0007":"x\ny"},"tensors":[
 {"name":"w\u001b[31mred\nline","dtype":"F32","shape":[2],"values":["nan",1]}]}'
expect_exit 1 "$NANAUDIT" scan --color always "$T/h.safetensors"
expect_stdout_contains 'w\x1b[31mred\nline  F32'
expect_stdout_contains 'FAIL'
grep -q $'\x1b\[31mred' "$T/stdout" && fail "raw escape from a tensor name reached stdout"
grep -q '^line' "$T/stdout" && fail "a tensor name broke a line"
expect_exit 1 "$NANAUDIT" scan --format json "$T/h.safetensors"
grep -q $'\x1b' "$T/stdout" && fail "raw escape in JSON"
cp "$T/stdout" "$T/h.json"
expect_json "$T/h.json" 'j["files"][0]["tensors"][0]["name"]' '"w\u001b[31mred\nline"'
expect_exit 0 "$NANAUDIT" info "$T/h.safetensors"
expect_stdout_contains 'metadata: note\x1b]0;pwned\x07 = x\ny'
grep -q $'\x1b' "$T/stdout" && fail "raw escape in info"
# a hostile file name in an error message
cp "$T/clean.safetensors" "$T/"$'evil\x1b[2Jname'
printf 'junk' > "$T/"$'bad\x1b[2J.safetensors'
expect_exit 3 "$NANAUDIT" scan "$T/"$'bad\x1b[2J.safetensors'
grep -q $'\x1b' "$T/stderr" "$T/stdout" && fail "raw escape from a file name"
expect_stderr_contains 'bad\x1b[2J.safetensors: '
pass
