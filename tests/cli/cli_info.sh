#!/bin/bash
# nanaudit info: format, tensors, dtypes, shapes, bytes and metadata from
# the header only. A file whose data is truncated is still listed (no data
# is read), while a header problem is exit 3.
. "$(dirname "$0")/helpers.sh"

make_st "$T/m.safetensors" '{"metadata":{"format":"pt","step":"1000"},"tensors":[
 {"name":"embed.weight","dtype":"BF16","shape":[4,2],"values":[1,2,3,4,5,6,7,8]},
 {"name":"z","dtype":"C64","shape":[2],"values":[1,2]},
 {"name":"s","dtype":"I64","shape":[],"values":[3]}]}'
expect_exit 0 "$NANAUDIT" info "$T/m.safetensors"
expect_stdout_contains "$T/m.safetensors (safetensors, "
expect_stdout_contains "  metadata: format = pt"
expect_stdout_contains "  metadata: step = 1000"
expect_stdout_contains "embed.weight"
grep -qE '^  embed\.weight +BF16 +\[4,2\] +16$' "$T/stdout" || fail "embed.weight row"
grep -qE '^  s +I64 +\[\] +8$' "$T/stdout" || fail "scalar row"
# a complex tensor's parts as scan lists them (tenth fresh-user round:
# "z.real C64 [2] 8", half a C64 tensor's bytes under its dtype)
grep -qE '^  z\.real +F32 +\[2\] +8  \(part of a C64 tensor\)$' "$T/stdout" || fail "z.real row"
grep -qE '^  z\.imag +F32 +\[2\] +8  \(part of a C64 tensor\)$' "$T/stdout" || fail "z.imag row"
expect_stderr_empty

# info never reads data: NaN in the data does not matter
make_st "$T/nan.safetensors" '{"tensors":[{"name":"w","dtype":"F32","shape":[2],"values":["nan",1]}]}'
expect_exit 0 "$NANAUDIT" info "$T/nan.safetensors"
expect_stdout_lacks "NaN"

# several inputs, one broken: all listed, exit 3
make_st "$T/bad.safetensors" '{"header":"{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}","tensors":[]}'
expect_exit 3 "$NANAUDIT" info "$T/m.safetensors" "$T/bad.safetensors" "$T/nan.safetensors"
expect_stdout_contains "$T/m.safetensors (safetensors"
expect_stdout_contains "$T/nan.safetensors (safetensors"
expect_stderr_contains "nanaudit: $T/bad.safetensors: "
expect_exit 3 "$NANAUDIT" info "$T/missing.safetensors"
expect_stderr_contains "nanaudit: $T/missing.safetensors: "
make_st "$T/empty.safetensors" '{"tensors":[]}'
expect_exit 0 "$NANAUDIT" info "$T/empty.safetensors"
expect_stdout_contains "(safetensors, 0 tensors, 0 bytes of data)"
pass
