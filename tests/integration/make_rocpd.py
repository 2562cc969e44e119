#!/usr/bin/env python3
"""Write a rocpd database (rocprofv3's SQLite output) holding the run of a
rocprofv3 counter collection CSV file, laid out as rocprofiler-sdk lays it
out: tables named with the run's UUID (rocpd_kernel_dispatch_<uuid>,
rocpd_pmc_event_<uuid>, rocpd_info_pmc_<uuid>, ...), a view without the
UUID over each, and the views lumen reads, which join them: kernels (one
row per dispatch, no event id; the kernel's name and register counts from
its symbol, its process's pid through its queue), pmc_events (one row per
dispatch and counter instance with the dispatch's pid and dispatch_id, the
counter as counter_name and counter_value, name being the kernel's) and
rocpd_info_agent. The counter named by --split is
written as two instances (a quarter and the rest), which a reader must sum.
--orphans adds rows the views' inner joins leave out: a counter event of a
counter rocpd_info_pmc does not list, one of an event no dispatch has, and
dispatches with their counter events that the kernels view leaves out (no
event row, no agent, kernel symbol, thread, queue or region name, a queue
whose process is not listed, no region). --orphan-events adds instead a
dispatch the kernels view keeps (its queue's process is listed) whose
counter events pmc_events leaves out (its own process is not). --wal writes the database in write-ahead-log mode and
exits without a checkpoint, as a writer that did not close it leaves it:
the rows are in the -wal file beside it, not yet in the database file.
--plain writes instead plain tables under the view names, with the column
names of earlier rocpd versions (arch_vgpr_count and event_id in kernels;
pmc_events' name and value being the counter's, matched by event_id).
Usage: make_rocpd.py COUNTERS.csv OUT.db ARCH [--split COUNTER] [--plain | --orphans | --orphan-events] [--wal]"""
import csv
import json
import os
import sqlite3
import sys

UUID = "_0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e"

TABLES = {
    "rocpd_string": "id INTEGER PRIMARY KEY, guid TEXT, string TEXT",
    "rocpd_info_process": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, ppid INTEGER, pid INTEGER, command TEXT",
    "rocpd_info_thread": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, ppid INTEGER, pid INTEGER, tid INTEGER",
    "rocpd_info_agent": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, pid INTEGER, type TEXT, absolute_index INTEGER,"
    " logical_index INTEGER, type_index INTEGER, name TEXT, product_name TEXT, extdata TEXT",
    "rocpd_info_queue": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, pid INTEGER, name TEXT",
    "rocpd_info_stream": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, pid INTEGER, name TEXT",
    "rocpd_info_kernel_symbol": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, pid INTEGER, code_object_id INTEGER,"
    " kernel_name TEXT, display_name TEXT, group_segment_size INTEGER, private_segment_size INTEGER,"
    " sgpr_count INTEGER, arch_vgpr_count INTEGER, accum_vgpr_count INTEGER",
    "rocpd_info_pmc": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, pid INTEGER, agent_id INTEGER, name TEXT,"
    " symbol TEXT, description TEXT, block TEXT, expression TEXT, is_constant INTEGER, is_derived INTEGER",
    "rocpd_event": "id INTEGER PRIMARY KEY, guid TEXT, category_id INTEGER, stack_id INTEGER,"
    " parent_stack_id INTEGER, correlation_id INTEGER",
    "rocpd_kernel_dispatch": "id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, pid INTEGER, tid INTEGER,"
    " agent_id INTEGER, kernel_id INTEGER, dispatch_id INTEGER, queue_id INTEGER, stream_id INTEGER,"
    " start INTEGER, \"end\" INTEGER, private_segment_size INTEGER, group_segment_size INTEGER,"
    " workgroup_size_x INTEGER, workgroup_size_y INTEGER, workgroup_size_z INTEGER, grid_size_x INTEGER,"
    " grid_size_y INTEGER, grid_size_z INTEGER, region_name_id INTEGER, event_id INTEGER",
    "rocpd_pmc_event": "id INTEGER PRIMARY KEY, guid TEXT, event_id INTEGER, pmc_id INTEGER, value REAL,"
    " extdata JSONB DEFAULT '{}'",
}

# The views lumen reads, joining the tables as rocpd's own do.
VIEWS = """
CREATE VIEW kernels AS SELECT K.id, K.guid, T.tid, R.string AS region, S.display_name AS name, K.nid, P.pid,
  A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index, A.type_index AS agent_type_index,
  A.type AS agent_type, K.kernel_id, K.dispatch_id, K.queue_id, K.stream_id, K.start, K."end",
  K."end" - K.start AS duration, K.grid_size_x AS grid_x, K.grid_size_y AS grid_y, K.grid_size_z AS grid_z,
  K.workgroup_size_x AS workgroup_x, K.workgroup_size_y AS workgroup_y, K.workgroup_size_z AS workgroup_z,
  K.group_segment_size AS lds_size, K.private_segment_size AS scratch_size, S.arch_vgpr_count AS vgpr_count,
  S.accum_vgpr_count, S.sgpr_count, E.correlation_id AS corr_id
FROM rocpd_kernel_dispatch K
  INNER JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid
  INNER JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
  INNER JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid
  INNER JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid
  LEFT JOIN rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid
  LEFT JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid
  INNER JOIN rocpd_info_process P ON P.id = Q.pid AND P.guid = Q.guid
  INNER JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid;
CREATE VIEW pmc_events AS SELECT PE.id, PE.guid, PE.pmc_id, E.id AS event_id,
  (SELECT display_name FROM rocpd_info_kernel_symbol KS WHERE KS.id = K.kernel_id AND KS.guid = K.guid) AS name,
  K.nid, P.pid, K.dispatch_id, K.start, K."end", K."end" - K.start AS duration, PI.name AS counter_name,
  PE.value AS counter_value
FROM rocpd_pmc_event PE
  INNER JOIN rocpd_info_pmc PI ON PI.id = PE.pmc_id AND PI.guid = PE.guid
  INNER JOIN rocpd_event E ON E.id = PE.event_id AND E.guid = PE.guid
  INNER JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id AND K.guid = PE.guid
  INNER JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid;
"""

PLAIN = """
CREATE TABLE rocpd_info_agent (id INTEGER PRIMARY KEY, guid TEXT, type TEXT, type_index INTEGER, name TEXT,
  product_name TEXT, extdata TEXT);
CREATE TABLE kernels (id INTEGER PRIMARY KEY, guid TEXT, pid INTEGER, dispatch_id INTEGER, name TEXT,
  agent_type_index INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, workgroup_x INTEGER,
  workgroup_y INTEGER, workgroup_z INTEGER, lds_size INTEGER, scratch_size INTEGER, arch_vgpr_count INTEGER,
  accum_vgpr_count INTEGER, sgpr_count INTEGER, start INTEGER, "end" INTEGER, event_id INTEGER);
CREATE TABLE pmc_events (id INTEGER PRIMARY KEY, guid TEXT, event_id INTEGER, name TEXT, value REAL);
"""


def write_plain(db, rows, arch, split):
    db.executescript(PLAIN)
    db.execute("INSERT INTO rocpd_info_agent VALUES (1, 'g', 'CPU', 0, 'EPYC', NULL, '{}')")
    db.execute("INSERT INTO rocpd_info_agent VALUES (2, 'g', 'GPU', 0, ?, NULL, ?)", (arch, json.dumps({"name": arch})))
    seen = set()
    insert = "INSERT INTO pmc_events (guid, event_id, name, value) VALUES ('g', ?, ?, ?)"
    for r in rows:
        d = int(r["Dispatch_Id"])
        if d not in seen:
            seen.add(d)
            db.execute("INSERT INTO kernels VALUES (?, 'g', 7, ?, ?, 0, ?, 1, 1, ?, 1, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (d, d, r["Kernel_Name"], int(r["Grid_Size"]), int(r["Workgroup_Size"]),
                        int(r["LDS_Block_Size"]), int(r["Scratch_Size"]), int(r["VGPR_Count"]),
                        int(r["Accum_VGPR_Count"]), int(r["SGPR_Count"]), int(r["Start_Timestamp"]),
                        int(r["End_Timestamp"]), 100 + d))
        for v in instances(r, split):
            db.execute(insert, (100 + d, r["Counter_Name"], v))


def instances(r, split):
    """The counter's value as its instances: two when it is the split one."""
    v = float(r["Counter_Value"])
    return [v / 4, v - v / 4] if r["Counter_Name"] == split else [v]


def write_rocpd(db, rows, arch, split, orphans=False):
    g = "0000a1b2-c3d4-e5f6-0718-293a4b5c6d7e"
    for name, cols in TABLES.items():
        db.execute(f"CREATE TABLE {name}{UUID} ({cols})")
        db.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}{UUID}")
    db.executescript(VIEWS)
    t = lambda name: name + UUID
    db.execute(f"INSERT INTO {t('rocpd_string')} VALUES (1, ?, 'KERNEL_DISPATCH')", (g,))
    db.execute(f"INSERT INTO {t('rocpd_info_process')} VALUES (1, ?, 1, 1, 7, 'app')", (g,))
    db.execute(f"INSERT INTO {t('rocpd_info_thread')} VALUES (1, ?, 1, 1, 1, 7)", (g,))
    db.execute(f"INSERT INTO {t('rocpd_info_agent')} VALUES (1, ?, 1, 1, 'CPU', 0, 0, 0, 'EPYC', NULL, '{{}}')", (g,))
    db.execute(f"INSERT INTO {t('rocpd_info_agent')} VALUES (2, ?, 1, 1, 'GPU', 1, 1, 0, ?, NULL, ?)",
               (g, arch, json.dumps({"name": arch})))
    db.execute(f"INSERT INTO {t('rocpd_info_queue')} VALUES (1, ?, 1, 1, 'queue 0')", (g,))
    symbols, pmcs, seen = {}, {}, set()
    for r in rows:
        d = int(r["Dispatch_Id"])
        if d not in seen:
            seen.add(d)
            key = (r["Kernel_Name"], int(r["VGPR_Count"]), int(r["Accum_VGPR_Count"]), int(r["SGPR_Count"]))
            if key not in symbols:
                symbols[key] = len(symbols) + 1
                db.execute(f"INSERT INTO {t('rocpd_info_kernel_symbol')} VALUES (?, ?, 1, 1, 1, ?, ?, 0, 0, ?, ?, ?)",
                           (symbols[key], g, key[0], key[0], key[3], key[1], key[2]))
            db.execute(f"INSERT INTO {t('rocpd_event')} VALUES (?, ?, 1, 0, 0, ?)", (100 + d, g, d))
            db.execute(f"INSERT INTO {t('rocpd_kernel_dispatch')} VALUES"
                       " (?, ?, 1, 1, 1, 2, ?, ?, 1, NULL, ?, ?, ?, ?, ?, 1, 1, ?, 1, 1, 1, ?)",
                       (d, g, symbols[key], d, int(r["Start_Timestamp"]), int(r["End_Timestamp"]),
                        int(r["Scratch_Size"]), int(r["LDS_Block_Size"]), int(r["Workgroup_Size"]),
                        int(r["Grid_Size"]), 100 + d))
        c = r["Counter_Name"]
        if c not in pmcs:
            pmcs[c] = len(pmcs) + 1
            db.execute(f"INSERT INTO {t('rocpd_info_pmc')} VALUES (?, ?, 1, 1, 2, ?, ?, '', 'SQ', '', 0, 0)",
                       (pmcs[c], g, c, c))
        for v in instances(r, split):
            db.execute(f"INSERT INTO {t('rocpd_pmc_event')} (guid, event_id, pmc_id, value) VALUES (?, ?, ?, ?)",
                       (g, 100 + d, pmcs[c], v))
    if orphans:
        first = 100 + min(seen)
        pe = f"INSERT INTO {t('rocpd_pmc_event')} (guid, event_id, pmc_id, value) VALUES (?, ?, ?, ?)"
        db.execute(pe, (g, first, len(pmcs) + 7, 1e15))
        db.execute(pe, (g, 1 << 40, 1, 1e15))
        db.execute(f"INSERT INTO {t('rocpd_info_queue')} VALUES (2, ?, 1, 99, 'queue of no process')", (g,))
        # Dispatches one of the kernels view's joins drops: (pid, tid, agent,
        # kernel, queue, region, has its event row).
        dropped = [(1, 1, 2, 1, 1, 1, False), (1, 1, 99, 1, 1, 1, True), (1, 1, 2, 999, 1, 1, True),
                   (1, 99, 2, 1, 1, 1, True), (1, 1, 2, 1, 1, 99, True), (1, 1, 2, 1, 99, 1, True),
                   (1, 1, 2, 1, 2, 1, True), (1, 1, 2, 1, 1, None, True)]
        if orphans == "events":
            # Kept (its queue's process is listed), its events dropped (its
            # own process is not).
            dropped = [(99, 1, 2, 1, 1, 1, True)]
        d = max(seen)
        for pid, tid, agent, kernel, queue, region, has_event in dropped:
            d += 1
            if has_event:
                db.execute(f"INSERT INTO {t('rocpd_event')} VALUES (?, ?, 1, 0, 0, ?)", (100 + d, g, d))
            db.execute(f"INSERT INTO {t('rocpd_kernel_dispatch')} VALUES"
                       " (?, ?, 1, ?, ?, ?, ?, ?, ?, NULL, 1, 2, 0, 0, 64, 1, 1, 64, 1, 1, ?, ?)",
                       (d, g, pid, tid, agent, kernel, d, queue, region, 100 + d))
            for p in pmcs.values():
                db.execute(pe, (g, 100 + d, p, 1e15))


def main():
    src, out, arch = sys.argv[1:4]
    rest = sys.argv[4:]
    split = rest[rest.index("--split") + 1] if "--split" in rest else None
    db = sqlite3.connect(out)
    if "--wal" in rest:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA wal_autocheckpoint = 0")
    rows = csv.DictReader(open(src))
    if "--plain" in rest:
        write_plain(db, rows, arch, split)
    else:
        write_rocpd(db, rows, arch, split,
                    "events" if "--orphan-events" in rest else "--orphans" in rest)
    db.commit()
    if "--wal" in rest:
        sys.stdout.flush()
        os._exit(0)  # no close: the log is not checkpointed


if __name__ == "__main__":
    main()
