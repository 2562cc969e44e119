#!/usr/bin/env python3
"""Give a lumen workload folder (one workload) the executions of a
two-set profile, as `lumen profile` records them with application replay
or instance cycling on an NVIDIA GPU (docs/workload-format.md, tables
execution and execution_value; docs/spread.md):

    nv_sets.py DIR SCALE

Every dispatch row gets set 0 with the row's own duration and set 1 with
that duration times SCALE; both sets hold the GPU duration
(gpu__time_duration.sum), which the NVIDIA plans put into every set.
SCALE 1.02 is two launches that agree, 1.3 two that do not.
"""
import sqlite3
import sys

path, scale = sys.argv[1] + "/lumen.db", float(sys.argv[2])
db = sqlite3.connect(path)
(wid,) = db.execute("SELECT id FROM workload").fetchone()
rows = db.execute("SELECT row, end_ns - start_ns FROM dispatch WHERE workload_id = ? ORDER BY row", (wid,)).fetchall()
for row, duration in rows:
    for s, d in ((0, duration), (1, duration * scale)):
        db.execute("INSERT INTO execution(workload_id, row, set_id, run_id, duration_ns) VALUES (?,?,?,?,?)",
                   (wid, row, s, s + 1, d))
        db.execute("INSERT INTO execution_value(workload_id, row, set_id, name, value) VALUES (?,?,?,?,?)",
                   (wid, row, s, "gpu__time_duration.sum", d))
db.commit()
