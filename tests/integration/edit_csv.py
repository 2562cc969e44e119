#!/usr/bin/env python3
"""Edit columns of a CSV workload file in place, for tests that build a
workload on which one rule fires: edit_csv.py FILE [ROWS:]COL=EXPR ...

EXPR is a Python expression over the row's numeric columns (names as in
the header; `row` is the 0-based data row). ROWS, when given, is a comma
list of data rows to edit (default: all).
"""
import csv
import sys

path = sys.argv[1]
with open(path, newline="") as f:
    rows = list(csv.reader(f))
header = rows[0]
for spec in sys.argv[2:]:
    only = None
    if ":" in spec.split("=", 1)[0]:
        sel, spec = spec.split(":", 1)
        only = {int(x) for x in sel.split(",")}
    col, expr = spec.split("=", 1)
    if col not in header:
        sys.exit(f"{path}: no column {col}")
    ci = header.index(col)
    for r, data in enumerate(rows[1:]):
        if only is not None and r not in only:
            continue
        env = {"row": r}
        for name, text in zip(header, data):
            try:
                env[name] = float(text)
            except ValueError:
                pass
        value = eval(expr, {"__builtins__": {}}, env)
        data[ci] = repr(float(value)) if isinstance(value, float) and not value.is_integer() else str(int(value))
with open(path, "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
