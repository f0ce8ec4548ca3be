#!/usr/bin/env python3
"""compare.py CPU.json GPU.json - CPU/GPU agreement of two nanaudit JSON
reports of the same inputs (tests/gpu/run.sh).

DESIGN.md: counts, min, max and locations identical; mean and std within
1e-12 * (|mean| + std) of the CPU's. So every value must be equal except
"mean" and "std" of a tensor (checked with that tolerance) and the
top-level "device" / "device_note", which say what ran; a finding's
message may differ only in the numbers it prints from mean and std (same
tolerance, plus the rounding of %g). Exit 0 when they
agree; 1 with the first difference printed otherwise. Standard library
only (the GPU machine has no extra packages)."""
import json
import re
import sys

# Numbers printed from mean and std inside finding messages, e.g.
# "(|x - 6.11663e-15| > 7052.9)": %g with 6 significant digits.
NUM = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def same_message(a, b, tol):
    """Messages equal but for numbers within tol plus the %g rounding."""
    na, nb = NUM.findall(a), NUM.findall(b)
    if NUM.sub("#", a) != NUM.sub("#", b) or len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        if x != y:
            if not re.search(r"[.e]", x + y):
                return False  # counts and indices are exact
            fx, fy = float(x), float(y)
            if abs(fx - fy) > tol + 1e-5 * max(abs(fx), abs(fy)):
                return False
    return True


def walk(a, b, path, tol_ctx):
    if isinstance(a, dict) and isinstance(b, dict):
        if path == "":  # what ran, and why: differs by design
            a = {k: v for k, v in a.items() if k not in ("device", "device_note")}
            b = {k: v for k, v in b.items() if k not in ("device", "device_note")}
        if sorted(a) != sorted(b):
            return f"{path}: keys {sorted(a)} != {sorted(b)}"
        ctx = tol_ctx
        if "mean" in a and "std" in a:  # a tensor entry: the tolerance of its stats
            m, s = a["mean"], a["std"]
            ctx = None if m is None or s is None else 1e-12 * (abs(m) + s)
        for k in a:
            if path == "" and k in ("device", "device_note"):
                continue
            if k in ("mean", "std") and ctx is not None and isinstance(a[k], float):
                if not isinstance(b[k], (int, float)) or abs(a[k] - b[k]) > ctx:
                    return f"{path}/{k}: cpu {a[k]!r} gpu {b[k]!r} (tolerance {ctx:.3g})"
                continue
            if (k == "message" and ctx is not None and isinstance(a[k], str)
                    and isinstance(b[k], str) and same_message(a[k], b[k], ctx)):
                continue
            d = walk(a[k], b[k], f"{path}/{k}", ctx)
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = walk(x, y, f"{path}[{i}]", tol_ctx)
            if d:
                return d
        return None
    if a != b or type(a) is not type(b):
        return f"{path}: cpu {a!r} gpu {b!r}"
    return None


def main():
    with open(sys.argv[1]) as f:
        cpu = json.load(f)
    with open(sys.argv[2]) as f:
        gpu = json.load(f)
    d = walk(cpu, gpu, "", None)
    if d:
        print("DIFF " + d)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
