#!/usr/bin/env python3
"""examples/ci/*.yml stay valid (issue 5, part 6): each parses with PyYAML;
the GitHub workflow has the shape Actions needs (on, jobs.<id>.runs-on,
steps with uses or run); the GitLab file has stages and a job whose
artifacts.reports.junit is a JUnit report the job writes; every
`nanaudit scan` command line in them uses only options that
`nanaudit scan --help` lists, and every --report extension is one nanaudit
knows. (prelaunch.sh and policy.yaml run in tests/cli/ci_examples.sh.)
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_ci_examples.py
"""
import os
import re
import shlex
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nacheck  # noqa: E402

SRC = os.environ.get("NA_SRC") or os.path.join(HERE, "..", "..")
CI = os.path.join(SRC, "examples", "ci")
FAILS = []


def need(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL", what)


def scan_lines(texts):
    """Each `nanaudit scan ...` command (continuation lines joined)."""
    out = []
    for t in texts:
        t = t.replace("\\\n", " ")
        for line in t.splitlines():
            if re.search(r"nanaudit scan\b", line):
                out.append(line[line.index("nanaudit scan"):])
    return out


def check_scan_cmd(cmd, flags, where):
    words = shlex.split(cmd)[2:]
    for w in words:
        if w.startswith("--"):
            need(w.split("=")[0][2:] in flags, f"{where}: unknown option {w}")
    for i, w in enumerate(words[:-1]):
        if w == "--report":
            need(os.path.splitext(words[i + 1])[1] in (".json", ".xml", ".md", ".sarif"),
                 f"{where}: report {words[i + 1]} has no known extension")


def main():
    exe = nacheck.nanaudit_path()
    helptext = subprocess.run([exe, "scan", "--help"], capture_output=True, text=True).stdout
    flags = set(re.findall(r"--([a-z][a-z-]*)", helptext))
    need("policy" in flags and "report" in flags, "scan --help lists --policy and --report")

    with open(os.path.join(CI, "github-actions.yml"), encoding="utf-8") as f:
        gh = yaml.safe_load(f)
    on = gh.get("on", gh.get(True))  # YAML 1.1 reads a bare `on` key as true
    need(isinstance(on, dict) and "pull_request" in on, "github: on.pull_request")
    jobs = gh.get("jobs", {})
    need(len(jobs) >= 1, "github: at least one job")
    runs = []
    for name, job in jobs.items():
        need("runs-on" in job, f"github: job {name} has runs-on")
        for st in job.get("steps", []):
            need(("uses" in st) != ("run" in st), f"github: step {st} has exactly one of uses/run")
            if "run" in st:
                runs.append(st["run"])
    cmds = scan_lines(runs)
    need(len(cmds) == 1, "github: one nanaudit scan step")
    for c in cmds:
        check_scan_cmd(c, flags, "github-actions.yml")
        need("--format github" in c, "github: annotations on stdout")
    need(any("GITHUB_STEP_SUMMARY" in r for r in runs), "github: Markdown to the job summary")

    with open(os.path.join(CI, "gitlab-ci.yml"), encoding="utf-8") as f:
        gl = yaml.safe_load(f)
    need("stages" in gl and "nanaudit" in gl, "gitlab: stages and a nanaudit job")
    job = gl.get("nanaudit", {})
    need(job.get("stage") in gl.get("stages", []), "gitlab: the job's stage is declared")
    script = job.get("script", [])
    cmds = scan_lines(script)
    need(len(cmds) == 1, "gitlab: one nanaudit scan command")
    junit = job.get("artifacts", {}).get("reports", {}).get("junit")
    for c in cmds:
        check_scan_cmd(c, flags, "gitlab-ci.yml")
        need(f"--report {junit}" in c, "gitlab: artifacts.reports.junit is written by the scan")
    need(str(junit).endswith(".xml"), "gitlab: the JUnit report is .xml")
    train = gl.get("train", {})
    need(train.get("needs") == ["nanaudit"], "gitlab: training needs the gate")

    with open(os.path.join(CI, "policy.yaml"), encoding="utf-8") as f:
        pol = yaml.safe_load(f)
    need(pol.get("version") == 1, "policy.yaml: version 1 (PyYAML reads it too)")

    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        return 1
    print("PASS test_ci_examples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
