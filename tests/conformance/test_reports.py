#!/usr/bin/env python3
"""CI report formats (issue 5, part 4), each read back with a real parser:

  - JUnit XML valid against Jenkins' junit-10.xsd (tests/data/junit, with
    xmlschema), then read with xml.etree: a testsuite per file, a testcase per tensor,
    <failure> for failing findings, <error> for an unreadable file,
    <system-out> for the other findings, counts in the attributes;
  - SARIF 2.1.0 with jsonschema against tests/data/sarif (the spec's
    objects, see its README), plus the results themselves;
  - Markdown with markdown-it-py (CommonMark + GFM tables): every table
    cell reads back as the path / tensor name / message it stands for;
  - GitHub Actions annotations: each line split as the runner does and
    unescaped (%25 %0D %0A, and %3A %2C in properties);
  - the JSON report from the same run, as the reference for all of them.
Names are hostile on purpose: bad<&>"name, one with % : , and a newline,
and a directory "my dir,a:b" -- each must round-trip exactly.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_reports.py
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse
import xml.etree.ElementTree as ET

import jsonschema
import numpy as np
import xmlschema
from markdown_it import MarkdownIt
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nacheck  # noqa: E402

SCHEMA = os.path.join(HERE, "..", "data", "sarif", "sarif-2.1.0-subset.schema.json")
JUNIT_XSD = os.path.join(HERE, "..", "data", "junit", "junit-10.xsd")
BAD = 'bad<&>"name'
ODD = "pct%25 50%:a,b\nline2"
FAILS = 0


def check(what, got, want):
    global FAILS
    if got != want:
        FAILS += 1
        print(f"FAIL {what}:\n  got  {got!r}\n  want {want!r}")


def make_inputs(tmp):
    d = os.path.join(tmp, "my dir,a:b")
    os.mkdir(d)
    good = os.path.join(d, "m.safetensors")
    save_file({BAD: np.array([1, np.nan, 2], np.float32),
               ODD: np.array([np.inf, 1], np.float32),
               "ok": np.array([1, 2, 3], np.float32),
               "bn.running_var": np.array([1, -1], np.float32)}, good)
    broken = os.path.join(d, "cut.safetensors")
    with open(good, "rb") as f:
        data = f.read()
    with open(broken, "wb") as f:
        f.write(data[:-3])
    return good, broken


def expected(j):
    """[(path, tensor, kind, count, fails, message)] and [(path, tensor|None, error)]."""
    finds, errs = [], []
    for f in j["files"]:
        if f["status"] == "error":
            errs.append((f["path"], None, f["error"]))
        for t in f["tensors"]:
            if t["status"] == "error":
                errs.append((f["path"], t["name"], t["reason"]))
            for x in t.get("findings", []):
                finds.append((f["path"], t["name"], x["kind"], x["count"], x["fails"],
                              x["message"]))
    return finds, errs


def check_junit(path, j):
    errors = [str(e.reason) for e in xmlschema.XMLSchema(JUNIT_XSD).iter_errors(path)]
    check("junit schema errors (Jenkins junit-10.xsd)", errors, [])
    root = ET.parse(path).getroot()
    check("junit root", root.tag, "testsuites")
    suites = root.findall("testsuite")
    # an exit code no test case explains (4; 3 or 1 with no failure or
    # error) is one more suite, "nanaudit", with an erring "exit code" case
    x, s = j["summary"]["exit_code"], j["summary"]
    explained = any(t["status"] == "error" or any(f["fails"] for f in t["findings"])
                    for f in j["files"] for t in f["tensors"]) or s["errors"] > 0
    run_case = x >= 4 or (x != 0 and not explained)
    check("junit suites = files", [s.get("name") for s in suites],
          [f["path"] for f in j["files"]] + (["nanaudit"] if run_case else []))
    if run_case:
        last = suites.pop()
        (case,) = last.findall("testcase")
        check("junit exit case", (case.get("classname"), case.get("name"),
                                  case.find("error").get("type"),
                                  case.find("error").get("message").split(":")[0] + ":"),
              ("nanaudit", "exit code", "exit", f"nanaudit exited with code {x}:"))
        check("junit exit suite counts", [last.get(k) for k in ("tests", "errors", "failures")],
              ["1", "1", "0"])
    check("junit root counts", [int(root.get(k)) for k in ("tests", "errors")],
          [sum(int(t.get(k)) for t in root.findall("testsuite")) for k in ("tests", "errors")])
    for s, f in zip(suites, j["files"]):
        cases = s.findall("testcase")
        names = [c.get("name") for c in cases]
        want = (["(file)"] if f["status"] == "error" else []) + [t["name"] for t in f["tensors"]]
        check(f"junit testcases of {f['path']}", names, want)
        failures = 0
        for c in cases:
            check("junit classname", c.get("classname"), f["path"])
            t = next((t for t in f["tensors"] if t["name"] == c.get("name")), None)
            failing = [x for x in (t or {}).get("findings", []) if x["fails"]]
            fl = c.find("failure")
            if failing:
                failures += 1
                check("junit failure message", fl.get("message"), failing[0]["message"])
                check("junit failure type", fl.get("type"), failing[0]["kind"])
                check("junit failure body", fl.text,
                      "".join(f"{x['kind']}: {x['message']}\n" for x in failing))
            else:
                check("junit no failure", fl, None)
            if c.get("name") == "(file)":
                check("junit file error", c.find("error").get("message"), f["error"])
            others = [x for x in (t or {}).get("findings", []) if not x["fails"]]
            out = c.find("system-out")
            check("junit system-out", out.text if out is not None else None,
                  "".join(f"{x['kind']}: {x['message']}\n" for x in others) or None)
        check("junit failures attr", int(s.get("failures")), failures)
        check("junit tests attr", int(s.get("tests")), len(cases))
        check("junit errors attr", int(s.get("errors")), 1 if f["status"] == "error" else 0)


def check_sarif(path, j):
    with open(path, encoding="utf-8") as fh:
        log = json.load(fh)
    with open(SCHEMA, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft7Validator.check_schema(schema)
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(log))
    check("sarif schema errors", [e.message for e in errors], [])
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    finds, errs = expected(j)
    got = []
    for r in run["results"]:
        check("sarif ruleIndex", rules[r["ruleIndex"]], r["ruleId"])
        loc = r["locations"][0]
        uri = loc["physicalLocation"]["artifactLocation"]["uri"]
        check("sarif uri is percent-encoded", re.fullmatch(r"[A-Za-z0-9._~/%-]*", uri) is not None,
              True)
        lloc = loc.get("logicalLocations", [{}])[0].get("fullyQualifiedName")
        got.append((urllib.parse.unquote(uri), lloc, r["ruleId"], r["properties"]["count"],
                    r["level"], r["message"]["text"]))
    # message.text names the tensor (code-scanning views may not show the
    # logical location): "TENSOR: message"
    want = [(p, t, k, c, "error" if fl else "warning", f"{t}: {m}")
            for p, t, k, c, fl, m in finds]
    want += [(p, t, "unreadable", 0, "error", m if t is None else f"{t}: {m}")
             for p, t, m in errs]
    check("sarif results", sorted(got, key=repr), sorted(want, key=repr))
    # partialFingerprints (SARIF 3.27.17): one per (file, tensor, rule), the
    # FNV-1a 64 of the three NUL-terminated, so GitHub keeps one alert per
    # tensor and finding across runs (tester round 22b: there were none)
    def fnv(parts):
        h = 0xcbf29ce484222325
        for part in parts:
            for b in part.encode("utf-8", "surrogateescape") + b"\0":
                h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
        return f"{h:016x}"
    fps = []
    for r in run["results"]:
        loc = r["locations"][0]
        path = urllib.parse.unquote(loc["physicalLocation"]["artifactLocation"]["uri"])
        tensor = loc.get("logicalLocations", [{}])[0].get("fullyQualifiedName") or ""
        fps.append(r["partialFingerprints"]["nanaudit/v1"])
        check("sarif fingerprint", r["partialFingerprints"]["nanaudit/v1"],
              fnv([path, tensor, r["ruleId"]]))
    check("sarif fingerprints unique", len(set(fps)), len(fps))
    inv = run["invocations"][0]
    check("sarif invocation", (inv["exitCode"], inv["executionSuccessful"]),
          (j["summary"]["exit_code"], j["summary"]["exit_code"] < 2))


def md_cells(path):
    """Rows of the Markdown table as lists of cell texts (markdown-it)."""
    with open(path, encoding="utf-8") as fh:
        tokens = MarkdownIt("commonmark").enable("table").parse(fh.read())
    rows, row, in_cell = [], None, False
    for t in tokens:
        if t.type == "tr_open":
            row = []
        elif t.type == "tr_close":
            rows.append(row)
        elif t.type in ("td_open", "th_open"):
            in_cell = True
            row.append("")
        elif t.type in ("td_close", "th_close"):
            in_cell = False
        elif t.type == "inline" and in_cell:
            row[-1] = "".join(c.content for c in t.children if c.type in ("text", "code_inline"))
    return rows


def unesc_md(s):
    """The text \\xHH that the writer uses for control bytes, back to bytes."""
    return re.sub(r"\\x([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), s)


def check_markdown(path, j):
    rows = md_cells(path)
    check("md header", rows[0], ["File", "Tensor", "Kind", "Count", "Fails", "Finding"])
    finds, errs = expected(j)
    got = [(unesc_md(r[0]), unesc_md(r[1]), r[2], r[3], r[4], unesc_md(r[5])) for r in rows[1:]]
    want = [(p, t, k, str(c), "yes" if fl else "no", m) for p, t, k, c, fl, m in finds]
    want += [(p, t or "(file)", "error", "", "yes", m) for p, t, m in errs]
    check("md rows", sorted(got), sorted(want))
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    check("md heading", first, f"## nanaudit: ERROR (exit {j['summary']['exit_code']})\n")


def gh_unescape(s, prop):
    if prop:
        s = s.replace("%3A", ":").replace("%2C", ",")
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def check_github(stdout, j):
    finds, errs = expected(j)
    got, notices = [], 0
    for line in stdout.splitlines():
        m = re.fullmatch(r"::(error|warning|notice) ([^:]*)::(.*)", line)
        check("github line shape", m is not None, True)
        if not m:
            continue
        props = dict(p.split("=", 1) for p in m.group(2).split(","))
        if m.group(1) == "notice":
            notices += 1
            continue
        title = gh_unescape(props["title"], True)
        kind, tensor = re.fullmatch(r"nanaudit ([a-z_]+): (.*)", title, re.S).groups()
        got.append((gh_unescape(props["file"], True), tensor, kind, m.group(1),
                    gh_unescape(m.group(3), False)))
    want = [(p, t, k, "error" if fl else "warning", msg) for p, t, k, c, fl, msg in finds]
    want += [(p, t or "(file)", "error", "error", msg) for p, t, msg in errs]
    check("github annotations", sorted(got), sorted(want))
    check("github notice", notices, 1)


def check_sarif_cap(exe, tmp):
    """More than 5000 results: GitHub code scanning stores 5000 of a run
    and rejects more than 25000. The SARIF file lists 5000, the failures
    first (all 3000 here, though 3000 warnings come before them in file
    order), then the first 2000 warnings, and counts the other 1000."""
    path = os.path.join(tmp, "many.safetensors")
    spike = np.zeros(10, np.float32)
    spike[9] = 1e30  # |1e30 - mean| = 3 std: an outlier at --zscore 2, a warning
    nan = np.zeros(10, np.float32)
    nan[1] = np.nan  # fails the default policy
    t = {f"a{i:04d}": spike for i in range(3000)}
    t.update({f"b{i:04d}": nan for i in range(3000)})
    save_file(t, path)
    sarif, js = os.path.join(tmp, "many.sarif"), os.path.join(tmp, "many.json")
    p = subprocess.run([exe, "scan", "--zscore", "2", "--report", sarif, "--report", js, path],
                       capture_output=True, text=True)
    check("sarif cap exit", p.returncode, 1)
    with open(sarif, encoding="utf-8") as fh:
        log = json.load(fh)
    with open(SCHEMA, encoding="utf-8") as fh:
        schema = json.load(fh)
    check("sarif cap schema errors",
          [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(log)], [])
    with open(js, encoding="utf-8") as fh:
        j = json.load(fh)
    check("sarif cap: JSON findings", sum(len(x["findings"]) for x in j["files"][0]["tensors"]),
          6000)
    run = log["runs"][0]
    got = [(r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], r["ruleId"],
            r["level"]) for r in run["results"]]
    want = [(f"b{i:04d}", "nan", "error") for i in range(3000)]
    want += [(f"a{i:04d}", "outliers", "warning") for i in range(2000)]
    check("sarif cap results", got, want)
    check("sarif cap notification", run["invocations"][0]["toolExecutionNotifications"],
          [{"level": "warning", "message": {"text": (
              "1000 more results not listed: at most 5000 per run, those that fail the policy "
              "first (GitHub code scanning keeps 5000 and rejects more than 25000); the JSON "
              "report lists every finding")}}])


def main():
    exe = nacheck.nanaudit_path()
    with tempfile.TemporaryDirectory() as tmp:
        good, broken = make_inputs(tmp)
        r = {e: os.path.join(tmp, "r" + e) for e in (".json", ".xml", ".md", ".sarif")}
        other = os.path.join(tmp, "r.junit-out")
        cmd = [exe, "scan", "--format", "github", "--report-format", "junit", "--report", other]
        for p in r.values():
            cmd += ["--report", p]
        p = subprocess.run(cmd + [good, broken], capture_output=True, text=True)
        check("exit code (a truncated file)", p.returncode, 3)
        with open(r[".json"], encoding="utf-8") as fh:
            j = json.load(fh)
        names = [t["name"] for t in j["files"][0]["tensors"]]
        check("names in the JSON report", sorted(names), sorted([BAD, ODD, "ok", "bn.running_var"]))
        check_junit(r[".xml"], j)
        check_junit(other, j)  # --report-format for an unknown extension
        check_sarif(r[".sarif"], j)
        check_markdown(r[".md"], j)
        check_github(p.stdout, j)
        # a clean run: a passing verdict, no table
        p = subprocess.run([exe, "scan", "--fail-on", "none", "--report", r[".md"], "--report",
                            r[".sarif"], good], capture_output=True, text=True)
        check("clean exit", p.returncode, 0)
        with open(r[".md"], encoding="utf-8") as fh:
            check("md passed", fh.readline(), "## nanaudit: passed (exit 0)\n")
        # a report that cannot be written: exit 4, which the JUnit report
        # shows as an erring test case (round 27b: it was all green)
        p = subprocess.run([exe, "scan", "--fail-on", "none", "--report",
                            os.path.join(tmp, "no-dir", "x.json"), "--report", r[".xml"],
                            "--report", r[".json"], good], capture_output=True, text=True)
        check("write error exit", p.returncode, 4)
        with open(r[".json"], encoding="utf-8") as fh:
            j4 = json.load(fh)
        check("json exit 4", j4["summary"]["exit_code"], 4)
        check_junit(r[".xml"], j4)
        check_sarif_cap(exe, tmp)
    if FAILS:
        print(f"{FAILS} failure(s)")
        return 1
    print("PASS test_reports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
