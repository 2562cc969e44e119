#!/usr/bin/env python3
"""Compare two `lumen analyze --format json` reports of the same data read
from two folders: same_analysis.py A.json B.json

Everything must be equal (every table, row and cell, numbers exactly) but
the fields that name the folder a workload was read from (its path and
name). Prints the first differences and exits 1 when there are any.
"""
import json
import math
import sys

# Fields of a workload entry that say where it was read from, not what it holds.
WHERE = {"path", "name", "workload", "workload_path", "workload_name"}


def strip(report):
    for w in report.get("workloads", []):
        if isinstance(w, dict):
            for key in WHERE:
                w.pop(key, None)
    return report


def same_value(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def differences(a, b, where, out, limit=10):
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in b:
                out.append(f"{where}.{key}: only in the first")
            elif key not in a:
                out.append(f"{where}.{key}: only in the second")
            else:
                differences(a[key], b[key], f"{where}.{key}", out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} entries, {len(b)} in the second")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{where}.{i}", out, limit)
    elif not same_value(a, b):
        out.append(f"{where}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: same_analysis.py A.json B.json")
    reports = []
    for path in sys.argv[1:]:
        try:
            with open(path) as f:
                reports.append(strip(json.load(f)))
        except (OSError, ValueError) as e:
            sys.exit(f"{path}: {e}")
    out = []
    differences(reports[0], reports[1], "$", out)
    if out:
        print("\n".join(out))
        sys.exit(1)


if __name__ == "__main__":
    main()
