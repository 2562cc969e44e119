#!/usr/bin/env python3
"""Write a rocpd database (rocprofv3's SQLite output) holding the run of a
rocprofv3 counter collection CSV file, through the views rocpd defines and
lumen reads: kernels (one row per dispatch), pmc_events (one row per
dispatch and counter instance) and rocpd_info_agent. The counter named by
--split is written as two instances (a quarter and the rest), which a
reader must sum.
Usage: make_rocpd.py COUNTERS.csv OUT.db ARCH [--split COUNTER]"""
import csv
import json
import sqlite3
import sys

SCHEMA = """
CREATE TABLE rocpd_info_agent (id INTEGER PRIMARY KEY, guid TEXT, type TEXT, type_index INTEGER, name TEXT,
  product_name TEXT, extdata TEXT);
CREATE TABLE kernels (id INTEGER PRIMARY KEY, guid TEXT, pid INTEGER, dispatch_id INTEGER, name TEXT,
  agent_type_index INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, workgroup_x INTEGER,
  workgroup_y INTEGER, workgroup_z INTEGER, lds_size INTEGER, scratch_size INTEGER, arch_vgpr_count INTEGER,
  accum_vgpr_count INTEGER, sgpr_count INTEGER, start INTEGER, "end" INTEGER, event_id INTEGER);
CREATE TABLE pmc_events (id INTEGER PRIMARY KEY, guid TEXT, event_id INTEGER, name TEXT, value REAL);
"""


def main():
    src, out, arch = sys.argv[1:4]
    split = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--split" else None
    db = sqlite3.connect(out)
    db.executescript(SCHEMA)
    db.execute("INSERT INTO rocpd_info_agent VALUES (1, 'g', 'CPU', 0, 'EPYC', NULL, '{}')")
    db.execute("INSERT INTO rocpd_info_agent VALUES (2, 'g', 'GPU', 0, ?, NULL, ?)", (arch, json.dumps({"name": arch})))
    seen = set()
    for r in csv.DictReader(open(src)):
        d = int(r["Dispatch_Id"])
        if d not in seen:
            seen.add(d)
            db.execute("INSERT INTO kernels VALUES (?, 'g', 7, ?, ?, 0, ?, 1, 1, ?, 1, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (d, d, r["Kernel_Name"], int(r["Grid_Size"]), int(r["Workgroup_Size"]),
                        int(r["LDS_Block_Size"]), int(r["Scratch_Size"]), int(r["VGPR_Count"]),
                        int(r["Accum_VGPR_Count"]), int(r["SGPR_Count"]), int(r["Start_Timestamp"]),
                        int(r["End_Timestamp"]), 100 + d))
        v = float(r["Counter_Value"])
        insert = "INSERT INTO pmc_events (guid, event_id, name, value) VALUES ('g', ?, ?, ?)"
        if r["Counter_Name"] == split:
            db.execute(insert, (100 + d, r["Counter_Name"], v / 4))
            v -= v / 4
        db.execute(insert, (100 + d, r["Counter_Name"], v))
    db.commit()


if __name__ == "__main__":
    main()
