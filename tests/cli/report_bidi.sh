#!/bin/bash
# Bidi overrides (U+202E), line separators (U+2028) and C1 controls
# (U+0085) in tensor names were escaped in the text and GitHub reports
# only: the Markdown summary, JUnit names and SARIF text carried them raw,
# so 'e\u202egnp.exe' displayed as 'eexe.png' (tester round 22b). And
# JUnit wrote a control byte as \x01 but a literal backslash as is, so
# "ctl\x01a" and "ctl\\x01a" had one testcase name. Every human-facing
# format now writes them as \xHH, and JUnit doubles a backslash.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making names.safetensors"
import json, struct
import numpy as np
names = ["e\u202egnp.exe", "line\u2028sep", "c1\u0085x", "ctl\x01a", "ctl\\x01a"]
hdr, off, data = {}, 0, b""
for n in names:
    b = np.array([1.0, np.nan], dtype=np.float32).tobytes()
    hdr[n] = {"dtype": "F32", "shape": [2], "data_offsets": [off, off + len(b)]}
    off += len(b)
    data += b
h = json.dumps(hdr).encode()
open("names.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
expect_exit 1 "$NANAUDIT" scan names.safetensors --report r.md --report r.xml --report r.sarif
"$NA_PYTHON" - <<'PY' || fail "raw characters in a report"
import json
import xml.etree.ElementTree as ET
bad = ["\u202e", "\u2028", "\u0085"]
for f in ["r.md", "r.xml", "r.sarif"]:
    t = open(f, encoding="utf-8").read()
    for c in bad:
        assert c not in t, (f, hex(ord(c)))
md = open("r.md", encoding="utf-8").read()
assert "e\\\\xE2\\\\x80\\\\xAEgnp" in md, md
cases = [c.get("name") for c in ET.parse("r.xml").getroot().iter("testcase")]
assert len(set(cases)) == 5, cases
assert "e\\xE2\\x80\\xAEgnp.exe" in cases and "ctl\\x01a" in cases and "ctl\\\\x01a" in cases, cases
s = json.load(open("r.sarif"))
names = [r["properties"]["tensor"] for r in s["runs"][0]["results"]]
assert "e\\xe2\\x80\\xaegnp.exe" in names, names
# a literal backslash is doubled in Markdown's shown text and in SARIF, so
# an escaped byte and a name's own "\x01" differ (tester round 23a)
assert "ctl\\\\\\\\x01a" in md and "ctl\\\\x01a" in md, md
assert "ctl\\\\x01a" in names and "ctl\x01a" in names, names
assert len(set(names)) == 5, names
PY
pass
