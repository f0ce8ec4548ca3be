#!/bin/bash
# hostile_output.sh - names, metadata and paths chosen to break a report
# cannot: newlines, CR, tabs, quotes, backslashes, <, &, ANSI CSI/OSC
# escapes, the one-byte C1 CSI (U+009B), a bidi override (U+202E), and
# (in a file name, the only place a header cannot hold them) invalid
# UTF-8 bytes. Checked on the text table (no control byte but '\n', one
# line per tensor, the columns still aligned), the JSON (strict UTF-8,
# parses, names round-trip exactly), `info`, and stderr (one line per
# error). cli_text.sh has the basic ESC and newline cases.
. "$(dirname "$0")/helpers.sh"

# no_raw_controls FILE [json]: no C0 byte but \n, no DEL, no C1 as UTF-8
# (C2 80..9F), valid UTF-8 throughout. With "json", C1 code points are
# allowed: RFC 8259 requires escaping only U+0000..U+001F, and jansson
# writes other code points as they are (a terminal shown the JSON gets
# the 2-byte UTF-8 form, which UTF-8 terminals do not take as CSI).
no_raw_controls() {
    "$NA_PYTHON" - "$1" "${2:-}" <<'PY' || fail "$1 holds a raw control byte or invalid UTF-8"
import re, sys
b = open(sys.argv[1], "rb").read()
t = b.decode("utf-8")  # strict: invalid UTF-8 fails
bad = re.search("[\x00-\x09\x0b-\x1f\x7f]" if sys.argv[2] == "json"
                else "[\x00-\x09\x0b-\x1f\x7f\x80-\x9f]", t)
sys.exit(f"control U+{ord(bad.group()):04X} at {bad.start()}" if bad else 0)
PY
}

NAMES='["a\nb", "r\rx", "t\tx", "q\"x\\\\y", "<b>&amp;</b>", "\u001b[31mred\u001b[0m",
        "\u001b]0;title\u0007", "\u009b2J", "bidi\u202eevil", "plain"]'
"$NA_PYTHON" - "$T/h.safetensors" "$NAMES" <<'PY' || fail "writing the hostile file"
import json, struct, sys
names = json.loads(sys.argv[2])
hdr, off = {"__metadata__": {n: n for n in names}}, 0
for n in names:
    hdr[n] = {"dtype": "F32", "shape": [2], "data_offsets": [off, off + 8]}
    off += 8
h = json.dumps(hdr).encode()
data = struct.pack("<%df" % (2 * len(names)), *([1.0, float("nan")] * len(names)))
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
n=$("$NA_PYTHON" -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$NAMES")

# text: one row per tensor, aligned, nothing raw
expect_exit 1 "$NANAUDIT" scan --color never --max-locations 0 "$T/h.safetensors"
cp "$T/stdout" "$T/h.txt"
no_raw_controls "$T/h.txt"
rows=$(grep -c '  F32  ' "$T/h.txt")
assert_eq "$rows" "$n" "table rows"
# every row's dtype column starts where the header's does
col=$(grep -m1 '  dtype  ' "$T/h.txt" | "$NA_PYTHON" -c 'import sys; print(sys.stdin.read().index("dtype"))')
"$NA_PYTHON" - "$T/h.txt" "$col" <<'PY' || fail "a hostile name broke the table's alignment"
import sys
col = int(sys.argv[2])
for line in open(sys.argv[1], encoding="utf-8"):
    if "  F32  " in line and line.index("  F32  ") + 2 != col:
        sys.exit(f"misaligned: {line!r}")
PY
expect_stdout_contains 'a\nb  '
expect_stdout_contains '\x1b[31mred\x1b[0m'
expect_stdout_contains '\xc2\x9b2J'

# JSON: strict UTF-8, parses, every name exactly as stored
expect_exit 1 "$NANAUDIT" scan --format json --report "$T/r.json" "$T/h.safetensors"
cp "$T/stdout" "$T/h.json"
no_raw_controls "$T/h.json" json
cmp -s "$T/h.json" "$T/r.json" || fail "--report differs from stdout JSON"
"$NA_PYTHON" - "$T/h.json" "$NAMES" <<'PY' || fail "names did not round-trip through the JSON"
import json, sys
j = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
got = sorted(t["name"] for t in j["files"][0]["tensors"])
want = sorted(json.loads(sys.argv[2]))
sys.exit(0 if got == want else f"got {got!r}")
PY

# info: metadata keys and values escaped the same way
expect_exit 0 "$NANAUDIT" info "$T/h.safetensors"
cp "$T/stdout" "$T/info.txt"
no_raw_controls "$T/info.txt"
expect_stdout_contains 'bidi'

# a file name with invalid UTF-8, ESC and a newline: reported, not obeyed
evil="$T/"$'bad\xff\xfe\x1b[2J\nname.safetensors'
cp "$T/h.safetensors" "$evil"
printf 'junk' >"$T/"$'junk\xc3\x28\r.safetensors'
expect_exit 3 "$NANAUDIT" scan --format json "$evil" "$T/"$'junk\xc3\x28\r.safetensors'
cp "$T/stdout" "$T/p.json"
no_raw_controls "$T/p.json" json
expect_json "$T/p.json" '[f["status"] for f in j["files"]]' '["ok", "error"]'
expect_json "$T/p.json" 'j["files"][0]["path"].endswith("/bad\\xff\\xfe\\x1b[2J\\nname.safetensors")' 'true'
no_raw_controls "$T/stderr"
assert_eq "$(wc -l <"$T/stderr")" 1 "stderr lines for one bad file"
expect_stderr_contains 'junk\xc3('
expect_exit 3 "$NANAUDIT" scan --color never "$evil" "$T/"$'junk\xc3\x28\r.safetensors'
cp "$T/stdout" "$T/p.txt"
no_raw_controls "$T/p.txt"
pass
