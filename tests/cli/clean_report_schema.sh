#!/bin/bash
# docs/json-schema.md, section "Clean report": the documented keys are
# exactly those of a real `nanaudit clean --report` (top level, cleaned and
# copied tensor entries, samples_dropped, before/after), and the example
# there is what the binary writes for the documented input (all but
# "version", which changes with releases).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
from safetensors.numpy import save_file
x = np.array([[0.5, 1.0], [np.nan, 2.0], [1.5, 3.0], [2.5, 4.0], [1.0, 2.5]])
y = np.array([0, 1, 1, 0, 1], np.float32)
save_file({"features": x, "labels": y, "names": np.arange(3, dtype=np.int32)}, "data.safetensors")
PY
expect_exit 0 "$NANAUDIT" clean --samples --together features,labels --exclude names \
    --normalize minmax --max-drop-fraction 0.5 data.safetensors -o data.clean.safetensors \
    --report clean.json

"$NA_PYTHON" - "$NA_SRC/docs/json-schema.md" clean.json <<'PY' || fail "docs/json-schema.md clean report"
import json, re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
rep = json.load(open(sys.argv[2]))
sec = doc[doc.index("\n## Clean report\n"):]

def table(title):
    part = sec[sec.index(title):]
    part = part[part.index("\n|"):]
    keys = []
    for line in part.splitlines()[3:]:
        if not line.startswith("|"):
            break
        keys += re.findall(r"`([a-z_0-9]+)`", line.split("|")[1])
    return keys, part

def inner(part, key):  # {"a", "b"} listed in the row of key
    row = next(l for l in part.splitlines() if l.startswith("| `%s`" % key))
    return re.findall(r'"([a-z_0-9]+)"', re.search(r"`\{([^}]*)\}`", row).group(1))

top, _ = table("### Clean report: top level")
assert sorted(top) == sorted(rep), (sorted(top), sorted(rep))
tk, part = table("### Clean report: `tensors[]`")
cleaned = rep["tensors"][0]
assert cleaned["status"] == "cleaned" and sorted(tk) == sorted(cleaned), (tk, list(cleaned))
copied = rep["tensors"][2]
assert copied["status"] == "copied"
assert sorted(copied) == sorted(["name", "status", "reason", "dtype", "shape", "warnings"])
assert inner(part, "samples_dropped") == list(cleaned["samples_dropped"]), cleaned["samples_dropped"]
assert inner(part, "before") == list(cleaned["before"]) == list(cleaned["after"])
# the example is the binary's output
ex = sec[sec.index("```json\n") + 8:]
ex = json.loads(ex[:ex.index("```")])
ex.pop("version"); rep.pop("version")
assert ex == rep, (ex, rep)
PY
pass
