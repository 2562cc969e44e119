#!/usr/bin/env bash
# Other tools' files read end to end: the real samples of ../shared/formats
# analyzed, their numbers checked against the source file (the expectations
# are computed here from the file with Python's csv module, not by lumen),
# laid out as the tool writes them, damaged, and round-tripped through the
# store.
# Usage: formats_test.sh LUMEN JSON_GET SHARED_DIR TEST_NAME
set -u
LUMEN=$1
JSON_GET=$2
SHARED=$3
NAME=$4
F=$SHARED/formats
TMP=$(mktemp -d /tmp/lumen-formats-XXXXXX)
PIDS=
trap 'kill $PIDS 2>/dev/null; chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"

V3=$F/rocprofv3
FP6=$V3/gfx950_fp6_instr_detail/instruction_detail_counter_collection.csv
BANK=$V3/gfx950_ds_read_b128_bank/bank_test_counter_collection.csv
TRACE=$V3/gfx942_kernel_trace/66960_kernel_trace.csv
V1=$F/rocprof-v1/mi250x_laplacian_dp_kernel1
CC86=$F/ncu/cc86_metrics/metrics.csv
V100=$F/ncu/v100_2020/v100_tweac_cc_output.csv

# csv_cell FILE TABLE_ROW_PREFIX COLUMN: a cell of lumen's CSV output.
csv_cell() {
  python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index(sys.argv[3])
for r in rows[1:]:
    if r[0] == sys.argv[2]:
        print(r[col]); break' "$@"
}

case $NAME in
rocprofv3_counters)
  # One dispatch, counters in long form: the duration and a counter as the
  # file has them, system information assumed for the --arch given, with a
  # warning naming every assumed field.
  run analyze -w "$FP6" --arch gfx950 -b 10.1 --format csv -o "$TMP/o"
  expect_status 0
  expect_err "system information assumed from a typical MI355X (gfx950)"
  expect_err "cu_per_gpu 256"
  want=$(python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(int(rows[0]["End_Timestamp"]) - int(rows[0]["Start_Timestamp"]))
print(int(float([r for r in rows if r["Counter_Name"] == "SQ_INSTS_SALU"][0]["Counter_Value"])))' "$FP6")
  dur=$(echo "$want" | sed -n 1p)
  salu=$(echo "$want" | sed -n 2p)
  got=$(csv_cell "$TMP/o/0.1.csv" 0 "Sum(ns)")
  [ "${got%.*}" = "$dur" ] || fail "duration $got, the file says $dur"
  got=$(csv_cell "$TMP/o/10.1.csv" 10.1.4 Avg)
  [ "${got%.*}" = "$salu" ] || fail "SALU instructions $got, the file says $salu"
  # VALU needs SQ_INSTS_MFMA too, which was not collected: said so, never 0
  # or blank; and the warning gives the rocprofv3 runs that would collect it.
  got=$(csv_cell "$TMP/o/10.1.csv" 10.1.0 Avg)
  [ "$got" = "not collected" ] || fail "VALU from uncollected counters shows '$got'"
  [ -z "$(csv_cell "$TMP/o/10.1.csv" 10.1.0 Min)" ] || fail "10.1.0 Min is not blank"
  expect_err "panel 10 shows metrics not collected"
  grep -q -- "--pmc [A-Z_ ]*SQ_INSTS_MFMA" "$TMP/err" || fail "no --pmc list with SQ_INSTS_MFMA: $(cat "$TMP/err")"
  # Without --arch (no agent_info.csv beside the file): a one-line refusal.
  run analyze -w "$FP6"
  expect_status 1; one_line_err; expect_err "give it with --arch"
  ;;
rocprofv3_dispatches)
  # Several dispatches and kernels: ids renumbered from 0 in file order,
  # the per-kernel statistics of a long-form file computed here by hand.
  run analyze -w "$BANK" --arch gfx950 -b 12.2 --format csv -o "$TMP/o"
  expect_status 0
  want=$(python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
seen, lds = [], {}
for r in rows:
    if r["Dispatch_Id"] not in seen: seen.append(r["Dispatch_Id"])
    if r["Counter_Name"] == "SQ_INSTS_LDS": lds[r["Dispatch_Id"]] = float(r["Counter_Value"])
print(len(seen))
print(repr(sum(lds.values()) / len(lds)))' "$BANK")
  [ "$(($(wc -l <"$TMP/o/0.2.csv") - 1))" = "$(echo "$want" | sed -n 1p)" ] || fail "dispatch count"
  grep -q '^0,0,"\{0,1\}__amd_rocclr_copyBuffer"\{0,1\},0$' "$TMP/o/0.2.csv" || fail "dispatch 0: $(cat "$TMP/o/0.2.csv")"
  got=$(csv_cell "$TMP/o/12.2.csv" 12.2.0 Avg)
  python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-9 * abs(b))' \
    "$got" "$(echo "$want" | sed -n 2p)" || fail "LDS instructions $got"
  ;;
rocprofv3_trace)
  # A kernel trace: no counters, the top-kernel table from the timestamps.
  run analyze -w "$TRACE" --arch gfx942 --list-stats --format csv -o "$TMP/o"
  expect_status 0
  want=$(python3 -c '
import csv, sys
tot = {}
for r in csv.DictReader(open(sys.argv[1])):
    k = r["Kernel_Name"]; d = int(r["End_Timestamp"]) - int(r["Start_Timestamp"])
    c, s = tot.get(k, (0, 0)); tot[k] = (c + 1, s + d)
k = max(tot, key=lambda k: tot[k][1])
print(tot[k][0]); print(tot[k][1]); print(k)' "$TRACE")
  python3 - "$TMP/o/0.1.csv" "$want" <<'EOF' || fail "top kernel"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
count, total, name = sys.argv[2].split("\n")
top = rows[0]
assert top["Kernel_Name"] == name, top
assert int(float(top["Count"])) == int(count), top
assert int(float(top["Sum(ns)"])) == int(total), top
EOF
  ;;
rocprofv3_trace_no_arch)
  # A kernel trace alone, no agent information, no --arch: its top kernels
  # (with medians) and dispatch list read no counter, so they are shown,
  # with one warning; a panel that reads counters is refused in one line.
  run analyze -w "$TRACE" --format csv -o "$TMP/o"
  expect_status 0
  expect_err "the architecture is not recorded"
  [ "$(grep -c 'lumen warn' "$TMP/err")" = 1 ] || fail "one warning expected: $(cat "$TMP/err")"
  [ -f "$TMP/o/0.1.csv" ] && [ -f "$TMP/o/0.2.csv" ] || fail "tables: $(ls "$TMP/o")"
  [ ! -f "$TMP/o/1.1.csv" ] && [ ! -f "$TMP/o/2.1.csv" ] || fail "a panel beyond 0: $(ls "$TMP/o")"
  python3 - "$TRACE" "$TMP/o/0.1.csv" "$TMP/o/0.2.csv" <<'EOF' || fail "top kernels: $(head -3 "$TMP/o/0.1.csv")"
import csv, statistics, sys
tot = {}
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    tot.setdefault(r["Kernel_Name"], []).append(int(r["End_Timestamp"]) - int(r["Start_Timestamp"]))
allns = sum(sum(v) for v in tot.values())
got = list(csv.DictReader(open(sys.argv[2])))
assert len(got) == len(tot), len(got)
order = sorted(tot, key=lambda k: (-sum(tot[k]), k))
for g, k in zip(got, order):
    d = tot[k]
    assert g["Kernel_Name"] == k, (g, k)
    assert int(float(g["Count"])) == len(d), g
    assert float(g["Sum(ns)"]) == sum(d), g
    assert abs(float(g["Median(ns)"]) - statistics.median(d)) <= 1e-9 * statistics.median(d), g
    assert abs(float(g["Pct"]) - 100 * sum(d) / allns) <= 1e-9 * 100, g
assert len(list(csv.DictReader(open(sys.argv[3])))) == len(rows)
EOF
  # One dispatch: the list and the table narrow to it.
  run analyze -w "$TRACE" -d 3 --format csv -o "$TMP/d"
  expect_status 0
  [ "$(tail -n +2 "$TMP/d/0.2.csv" | wc -l)" = 1 ] || fail "-d 3: $(cat "$TMP/d/0.2.csv")"
  run analyze -w "$TRACE" -b 2
  expect_status 1; one_line_err; expect_err "-b 2: the architecture is not recorded"
  run analyze -w "$TRACE" -b 0.1 --format json
  expect_status 0
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["workloads"][0]["arch"] is None, d["workloads"]' \
    "$TMP/out" || fail "JSON arch: $(head -c 300 "$TMP/out")"
  # With --arch, the system information of its typical product, as before.
  run analyze -w "$TRACE" --arch gfx942 -b 1
  expect_status 0; expect_out "MI300X"
  # The store keeps it as read: the same tables, a summary refused with a
  # reason; an export in the reference's layout reads back the same.
  run db import --db "$TMP/s.db" -w "$TRACE" -n tr
  expect_status 0
  run analyze --db "$TMP/s.db" -w tr --format csv -o "$TMP/s"
  expect_status 0
  diff -r "$TMP/o" "$TMP/s" >/dev/null || fail "store and file differ: $(diff -r "$TMP/o" "$TMP/s" | head)"
  run db export tr -w "$TMP/ex" --db "$TMP/s.db"
  expect_status 0
  run analyze -w "$TMP/ex" --format csv -o "$TMP/e"
  expect_status 0
  diff -r "$TMP/o" "$TMP/e" >/dev/null || fail "export and file differ: $(diff -r "$TMP/o" "$TMP/e" | head)"
  . "$SRCDIR/../../scripts/serve-lib.sh"
  start_server --db "$TMP/s.db"
  get "/api/analysis?w=db:tr"
  expect_code 200 "the analysis"
  get "/api/summary?w=db:tr"
  expect_code 400 "the summary"
  grep -q "not recorded" "$TMP/body" || fail "/api/summary: $(cat "$TMP/body")"
  get "/api/series?w=db:tr&m=2.1.0"
  expect_code 400 "a series"
  kill "$SERVER" 2>/dev/null
  wait "$SERVER" 2>/dev/null
  # Two traces side by side.
  run analyze -w "$TRACE" -w "$TMP/ex" -b 0.1
  expect_status 0; expect_out "(0.00%)"
  # rocprof's trace results.csv without its rocminfo text: the same.
  cp "$V1/results.csv" "$TMP/results.csv"
  run analyze -w "$TMP/results.csv"
  expect_status 0; expect_out "Top Kernels"; expect_err "the architecture is not recorded"
  ;;
rocprofv3_folder)
  # rocprofv3's output folder (host/pid/pid_*.csv) with agent_info.csv: the
  # architecture and compute units from the agent, the rest assumed; GPU
  # ids numbered in agent order; the folder given, not the file.
  mkdir -p "$TMP/v3/host1/4242"
  cp "$BANK" "$TMP/v3/host1/4242/4242_counter_collection.csv"
  cat >"$TMP/v3/host1/4242/4242_agent_info.csv" <<'EOF'
"Node_Id","Logical_Node_Id","Agent_Type","Cpu_Cores_Count","Simd_Count","Max_Waves_Per_Simd","Wave_Front_Size","Num_Xcc","Cu_Count","Array_Count","Simd_Arrays_Per_Engine","Simd_Per_Cu","Max_Waves_Per_Cu","Max_Engine_Clk_Fcompute","Workgroup_Max_Size","Name","Product_Name"
0,0,"CPU",96,0,0,0,0,0,0,0,0,0,3700,0,"AMD EPYC 9654","AMD EPYC 9654"
2,1,"GPU",0,960,8,64,8,240,32,1,4,32,2400,1024,"gfx950","AMD Instinct MI355X"
EOF
  run analyze -w "$TMP/v3" -b 1 --format csv -o "$TMP/o"
  expect_status 0
  expect_err "system information assumed"
  grep -q "cu_per_gpu,240" "$TMP/o/1.1.csv" || fail "cu_per_gpu: $(cat "$TMP/o/1.1.csv")"
  grep -q 'gpu_model,AMD Instinct MI355X' "$TMP/o/1.1.csv" || fail "gpu_model from the agent"
  grep -q 'se_per_gpu,32' "$TMP/o/1.1.csv" || fail "se_per_gpu from Array_Count / Simd_Arrays_Per_Engine"
  grep -q '^0,0,"\{0,1\}__amd_rocclr_copyBuffer"\{0,1\},0$' "$TMP/o/0.2.csv" || fail "GPU 0 for agent 2"
  # The file alone finds its agent_info.csv beside it.
  run analyze -w "$TMP/v3/host1/4242/4242_counter_collection.csv" -b 1
  expect_status 0; expect_out "AMD Instinct MI355X"
  # --arch against the agent's: the data wins, with a warning.
  run analyze -w "$TMP/v3" --arch gfx942 -b 1
  expect_status 0; expect_err "--arch gfx942 is ignored"; expect_out "gfx950"
  ;;
rocprofv3_errors)
  # Damaged files: one line naming the file, the line and the field.
  cp "$BANK" "$TMP/c.csv"
  sed -i '3s/,0.00000000e+00,/,zero,/' "$TMP/c.csv"
  run analyze -w "$TMP/c.csv" --arch gfx950
  expect_status 1; one_line_err; expect_err "c.csv:3"; expect_err "Counter_Value"
  head -c 300 "$BANK" >"$TMP/t.csv"
  printf '"unclosed' >>"$TMP/t.csv"
  run analyze -w "$TMP/t.csv" --arch gfx950
  expect_status 1; one_line_err; expect_err "t.csv"
  head -1 "$BANK" >"$TMP/h.csv"
  run analyze -w "$TMP/h.csv" --arch gfx950
  expect_status 1; one_line_err; expect_err "no dispatch rows"
  run analyze -w "$BANK" --arch gfx1234
  expect_status 1; one_line_err; expect_err "gfx1234"
  # A FIFO named like a counter file is not waited on.
  mkdir "$TMP/fifo" && mkfifo "$TMP/fifo/1_counter_collection.csv"
  cp "$BANK" "$TMP/fifo/2_counter_collection.csv"
  timeout 10 "$LUMEN" analyze -w "$TMP/fifo" --arch gfx950 --list-stats >"$TMP/out" 2>"$TMP/err"
  [ $? -eq 0 ] || fail "folder with a FIFO: $(cat "$TMP/err")"
  ;;
rocprofv3_store)
  # Imported into the store and analyzed from it: the same numbers, and the
  # store says where the workload came from.
  run analyze -w "$BANK" --arch gfx950 -b 12.2 --format csv -o "$TMP/a"
  expect_status 0
  run db import --db "$TMP/s.db" -w "$BANK" --arch gfx950 -n bank
  expect_status 0
  run db list --db "$TMP/s.db"
  expect_status 0; expect_out "rocprofv3"
  run analyze --db "$TMP/s.db" -w bank -b 12.2 --format csv -o "$TMP/b"
  expect_status 0
  diff -r "$TMP/a" "$TMP/b" >/dev/null || fail "store and file differ: $(diff -r "$TMP/a" "$TMP/b" | head)"
  run db import --db "$TMP/s2.db" -w "$BANK"
  expect_status 1; expect_err "give it with --arch"
  ;;
rocprofv3_rocpd)
  # The same run as a rocpd database (rocprofv3's default output), written
  # from the CSV file through the views rocpd defines, one counter split
  # over two instances (summed, as the CSV output sums them): the same
  # tables as from the CSV file.
  python3 "$SRCDIR/make_rocpd.py" "$BANK" "$TMP/run_results.db" gfx950 --split SQ_INSTS_LDS || fail "make_rocpd"
  run analyze -w "$BANK" --arch gfx950 -b 12.2 --format csv -o "$TMP/a"
  expect_status 0
  run analyze -w "$TMP/run_results.db" -b 12.2 --format csv -o "$TMP/b"
  expect_status 0
  diff -r "$TMP/a" "$TMP/b" >/dev/null || fail "rocpd and CSV differ: $(diff -r "$TMP/a" "$TMP/b" | head)"
  # The store keeps it as read; an export in the reference's layout reads
  # back the same, as does a comparison of the database with the CSV file.
  run db import --db "$TMP/s.db" -w "$TMP/run_results.db" -n rp
  expect_status 0
  run analyze --db "$TMP/s.db" -w rp -b 12.2 --format csv -o "$TMP/st"
  expect_status 0
  diff -r "$TMP/b" "$TMP/st" >/dev/null || fail "store and database differ: $(diff -r "$TMP/b" "$TMP/st" | head)"
  run db export rp -w "$TMP/ex" --db "$TMP/s.db"
  expect_status 0
  run analyze -w "$TMP/ex" -b 12.2 --format csv -o "$TMP/e"
  expect_status 0
  diff -r "$TMP/b" "$TMP/e" >/dev/null || fail "export and database differ: $(diff -r "$TMP/b" "$TMP/e" | head)"
  run analyze -w "$TMP/run_results.db" -w "$BANK" --arch gfx950 -b 12.2
  expect_status 0
  # Rows the views' inner joins leave out (an unlisted counter, an event of
  # no dispatch, a dispatch without its event row) are left out: the same
  # tables.
  python3 "$SRCDIR/make_rocpd.py" "$BANK" "$TMP/orphans.db" gfx950 --split SQ_INSTS_LDS --orphans || fail "make_rocpd"
  python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
one = lambda q: db.execute(q).fetchone()[0]
left = one("SELECT count(*) FROM rocpd_pmc_event") - one("SELECT count(*) FROM pmc_events")
gone = one("SELECT count(*) FROM rocpd_kernel_dispatch") - one("SELECT count(*) FROM kernels")
sys.exit(0 if left > 2 and gone == 8 else 1)' "$TMP/orphans.db" || fail "the orphans are not in the database"
  run analyze -w "$TMP/orphans.db" -b 12.2 --format csv -o "$TMP/o"
  expect_status 0
  diff -r "$TMP/a" "$TMP/o" >/dev/null || fail "rocpd with orphans and CSV differ: $(diff -r "$TMP/a" "$TMP/o" | head)"
  # The kernels view made from its tables and read through SQLite (a
  # database in write-ahead-log mode) agree, orphans and all; a dispatch
  # whose own process is not listed is kept without its counter events.
  for kind in --orphans --orphan-events; do
    rm -rf "$TMP/v" && mkdir -p "$TMP/v/wal"
    python3 "$SRCDIR/make_rocpd.py" "$BANK" "$TMP/v/t.db" gfx950 $kind || fail "make_rocpd"
    python3 "$SRCDIR/make_rocpd.py" "$BANK" "$TMP/v/wal/t.db" gfx950 $kind --wal || fail "make_rocpd"
    for db in "$TMP/v/t.db" "$TMP/v/wal/t.db"; do
      run analyze -w "$db" -b 12.2 --format csv -o "$db.out"
      expect_status 0
      run analyze -w "$db" --list-stats
      expect_status 0
      cp "$TMP/out" "$db.stats"
    done
    diff -r "$TMP/v/t.db.out" "$TMP/v/wal/t.db.out" >/dev/null || fail "$kind: tables and view differ"
    cmp -s "$TMP/v/t.db.stats" "$TMP/v/wal/t.db.stats" || fail "$kind: tables and view differ (--list-stats)"
  done
  n_csv=$(python3 -c 'import csv, sys; print(len({r["Dispatch_Id"] for r in csv.DictReader(open(sys.argv[1]))}))' "$BANK")
  n_kept=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM kernels").fetchone()[0])' "$TMP/v/t.db")
  [ "$n_kept" = $((n_csv + 1)) ] || fail "the kept dispatch: $n_kept dispatches, $n_csv in the CSV"
  run analyze -w "$TMP/v/t.db" -b 12.2 --format csv -o "$TMP/v/kept"
  expect_status 0
  diff -r "$TMP/a" "$TMP/v/kept" >/dev/null && fail "a dispatch without counters changed nothing"
  # A damaged page of the counter events' table (a child page beyond the
  # file's end, or more cells than its page holds): one line naming the
  # file and a page, nothing printed as if read.
  cp "$TMP/run_results.db" "$TMP/damaged.db"
  python3 -c '
import sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
root = db.execute("SELECT rootpage FROM sqlite_master WHERE type = \"table\" AND name LIKE \"rocpd_pmc_event_%\"").fetchone()[0]
size = db.execute("PRAGMA page_size").fetchone()[0]
db.close()
with open(sys.argv[1], "r+b") as f:
    at = (root - 1) * size + (100 if root == 1 else 0)
    f.seek(at)
    kind = f.read(1)[0]
    if kind == 5:
        f.seek(at + 8)
        f.write(struct.pack(">I", 0x7FFFFFF0))
    else:
        f.seek(at + 3)
        f.write(struct.pack(">H", 0xFFFF))' "$TMP/damaged.db" || fail "damaging the database"
  run analyze -w "$TMP/damaged.db" -b 12.2
  expect_status 1; one_line_err; expect_err "damaged.db"
  grep -qE "page [0-9]+: .*damaged" "$TMP/err" || fail "the damaged page is not named: $(cat "$TMP/err")"
  # A database whose rows are still in its write-ahead log (its writer did
  # not close it) is read through SQLite, which reads the log: the same
  # tables, in both layouts.
  for layout in "" --plain; do
    rm -rf "$TMP/wal" && mkdir "$TMP/wal"
    python3 "$SRCDIR/make_rocpd.py" "$BANK" "$TMP/wal/w.db" gfx950 --split SQ_INSTS_LDS --wal $layout || fail "make_rocpd"
    [ -s "$TMP/wal/w.db-wal" ] || fail "no write-ahead log beside the database"
    run analyze -w "$TMP/wal/w.db" -b 12.2 --format csv -o "$TMP/w"
    expect_status 0
    diff -r "$TMP/a" "$TMP/w" >/dev/null || fail "rocpd in WAL mode ($layout) and CSV differ: $(diff -r "$TMP/a" "$TMP/w" | head)"
  done
  # The earlier layout (plain tables, counter events naming their dispatch
  # by event id) reads the same.
  python3 "$SRCDIR/make_rocpd.py" "$BANK" "$TMP/plain.db" gfx950 --split SQ_INSTS_LDS --plain || fail "make_rocpd"
  run analyze -w "$TMP/plain.db" -b 12.2 --format csv -o "$TMP/c"
  expect_status 0
  diff -r "$TMP/a" "$TMP/c" >/dev/null || fail "plain rocpd and CSV differ: $(diff -r "$TMP/a" "$TMP/c" | head)"
  # Found in rocprofv3's output folder too.
  mkdir -p "$TMP/out2/host" && cp "$TMP/run_results.db" "$TMP/out2/host/"
  run analyze -w "$TMP/out2" --list-stats
  expect_status 0; expect_out "__amd_rocclr_copyBuffer"
  # An SQLite file that is not rocpd is not taken for one.
  python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("CREATE TABLE t (x)")' "$TMP/other.db"
  run analyze -w "$TMP/other.db"
  expect_status 1; one_line_err
  ;;
rocprofv3_json)
  # The same run as rocprofv3's JSON output (--output-format json), written
  # by make_v3_json.py as rocprofiler-sdk's tool lays it out, one counter as
  # four instances (summed, as the CSV output sums them): the same tables as
  # from the CSV files with their agent_info.csv, the agent's system
  # information read from the JSON's agents.
  mkdir -p "$TMP/csv/host/4242" "$TMP/json/host/4242"
  cp "$BANK" "$TMP/csv/host/4242/4242_counter_collection.csv"
  cat >"$TMP/csv/host/4242/4242_agent_info.csv" <<'EOF'
"Node_Id","Logical_Node_Id","Agent_Type","Cpu_Cores_Count","Simd_Count","Max_Waves_Per_Simd","Wave_Front_Size","Num_Xcc","Cu_Count","Array_Count","Simd_Arrays_Per_Engine","Simd_Per_Cu","Max_Waves_Per_Cu","Max_Engine_Clk_Fcompute","Workgroup_Max_Size","Name","Product_Name"
0,0,"CPU",96,0,0,0,0,0,0,0,0,0,3700,0,"AMD EPYC 9654","AMD EPYC 9654"
2,1,"GPU",0,960,8,64,8,240,32,1,4,32,2400,1024,"gfx950:sramecc+:xnack-","AMD Instinct MI355X"
EOF
  J=$TMP/json/host/4242/4242_results.json
  python3 "$SRCDIR/make_v3_json.py" "$BANK" "$J" gfx950 --agents "$TMP/csv/host/4242/4242_agent_info.csv" \
    --split SQ_INSTS_LDS || fail "make_v3_json"
  run analyze -w "$TMP/csv" -b 0 -b 1 -b 12.2 --format csv -o "$TMP/a"
  expect_status 0
  run analyze -w "$J" -b 0 -b 1 -b 12.2 --format csv -o "$TMP/b"
  expect_status 0
  diff -r "$TMP/a" "$TMP/b" >/dev/null || fail "JSON and CSV differ: $(diff -r "$TMP/a" "$TMP/b" | head)"
  grep -q 'gpu_model,AMD Instinct MI355X' "$TMP/b/1.1.csv" || fail "gpu_model from the JSON's agent"
  grep -q "cu_per_gpu,240" "$TMP/b/1.1.csv" || fail "cu_per_gpu from the JSON's agent"
  # The numbers against the generated file: the dispatch count, the summed
  # instances of SQ_INSTS_LDS averaged over dispatches.
  want=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["rocprofiler-sdk-tool"][0]
lds = [c["id"]["handle"] for c in p["counters"] if c["name"] == "SQ_INSTS_LDS"][0]
cc = p["callback_records"]["counter_collection"]
sums = [sum(r["value"] for r in e["records"] if r["counter_id"]["handle"] == lds) for e in cc]
print(len(cc))
print(repr(sum(sums) / len(sums)))' "$J")
  [ "$(($(wc -l <"$TMP/b/0.2.csv") - 1))" = "$(echo "$want" | sed -n 1p)" ] || fail "dispatch count"
  got=$(csv_cell "$TMP/b/12.2.csv" 12.2.0 Avg)
  python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-9 * abs(b))' \
    "$got" "$(echo "$want" | sed -n 2p)" || fail "LDS instructions $got"
  # Found in its folder by content, and through the store: the same tables.
  run analyze -w "$TMP/json" -b 0 -b 1 -b 12.2 --format csv -o "$TMP/c"
  expect_status 0
  diff -r "$TMP/a" "$TMP/c" >/dev/null || fail "folder and file differ: $(diff -r "$TMP/a" "$TMP/c" | head)"
  run db import --db "$TMP/s.db" -w "$J" -n j
  expect_status 0
  run analyze --db "$TMP/s.db" -w j -b 0 -b 1 -b 12.2 --format csv -o "$TMP/d"
  expect_status 0
  diff -r "$TMP/b" "$TMP/d" >/dev/null || fail "store and file differ: $(diff -r "$TMP/b" "$TMP/d" | head)"
  # Damage: one line naming the file and the field.
  head -c 2000 "$J" >"$TMP/t_results.json"
  run analyze -w "$TMP/t_results.json"
  expect_status 1; one_line_err; expect_err "t_results.json:"; expect_err "at byte 2000"; expect_err "truncated"
  edit() { python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["rocprofiler-sdk-tool"][0]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))' "$J" "$@"; }
  # Nested deeper than the reader follows (128 levels): refused, the path
  # and line named.
  edit "$TMP/n_results.json" 'x = []
for _ in range(300): x = [x]
p["metadata"]["config"] = {"deep": x}'
  run analyze -w "$TMP/n_results.json"
  expect_status 1; one_line_err; expect_err "n_results.json:1:"; expect_err "nested deeper than 128 levels"
  expect_err "rocprofiler-sdk-tool[0].metadata.config.deep[0][0]"
  edit "$TMP/u_results.json" 'p["callback_records"]["counter_collection"][2]["records"][1]["counter_id"]["handle"] = 99'
  run analyze -w "$TMP/u_results.json"
  expect_status 1; one_line_err; expect_err "u_results.json"
  expect_err "callback_records.counter_collection[2].records[1].counter_id"
  edit "$TMP/v_results.json" 'p["callback_records"]["counter_collection"][1]["records"][0]["value"] = "zero"'
  run analyze -w "$TMP/v_results.json"
  expect_status 1; one_line_err; expect_err "v_results.json"
  expect_err "callback_records.counter_collection[1].records[0].value"
  # A kernel trace alone (no counter collection): the dispatches and
  # durations of buffer_records.kernel_dispatch, the same top-kernel tables.
  edit "$TMP/k_results.json" 'p["callback_records"]["counter_collection"] = []'
  run analyze -w "$TMP/k_results.json" -b 0 --format csv -o "$TMP/e"
  expect_status 0
  for t in 0.1 0.2; do
    diff "$TMP/a/$t.csv" "$TMP/e/$t.csv" >/dev/null || fail "kernel trace $t: $(diff "$TMP/a/$t.csv" "$TMP/e/$t.csv")"
  done
  # A JSON file of another kind is not taken for rocprofv3's.
  echo '{"traceEvents": []}' >"$TMP/other.json"
  run analyze -w "$TMP/other.json"
  expect_status 1; one_line_err
  ;;
rocprof1_trace)
  # rocprof's results.csv with timestamps and no counters: the top-kernel
  # table from BeginNs/EndNs, GPU ids numbered in rocminfo's agent order,
  # system information from the rocminfo text beside it (first GPU agent).
  run analyze -w "$V1/results.csv" -b 0 -b 1 --format csv -o "$TMP/o"
  expect_status 0
  expect_err "system information assumed from a typical MI250X (gfx90a)"
  want=$(python3 -c '
import csv, sys
tot = {}
for r in csv.DictReader(open(sys.argv[1])):
    k = r["KernelName"]; d = int(r["EndNs"]) - int(r["BeginNs"])
    c, s = tot.get(k, (0, 0)); tot[k] = (c + 1, s + d)
k = max(tot, key=lambda k: tot[k][1])
print(tot[k][0]); print(tot[k][1]); print(k)' "$V1/results.csv")
  python3 - "$TMP/o/0.1.csv" "$want" <<'EOF' || fail "top kernel: $(head -3 "$TMP/o/0.1.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
count, total, name = sys.argv[2].split("\n")
top = rows[0]
assert top["Kernel_Name"] == name, top
assert int(float(top["Count"])) == int(count), top
assert int(float(top["Sum(ns)"])) == int(total), top
EOF
  grep -q '^0,0,"\{0,1\}test_function_kernel"\{0,1\},0$' "$TMP/o/0.2.csv" || fail "dispatch 0: $(head -3 "$TMP/o/0.2.csv")"
  # The first GPU agent of rocminfo's text, read here by hand.
  python3 - "$V1/results.sysinfo.txt" "$TMP/o/1.1.csv" <<'EOF' || fail "system information: $(cat "$TMP/o/1.1.csv")"
import csv, re, sys
text = open(sys.argv[1], errors="replace").read()
blocks = re.split(r"\n\*+\s*\nAgent \d+\s*\n\*+\s*\n", text)
gpu = [b for b in blocks if re.search(r"(^|\n)  Device Type:\s+GPU", b)][0]
def field(key, indent=2):
    m = re.search(r"\n" + " " * indent + re.escape(key) + r":\s+([^\n]*?)\s*\n", "\n" + gpu)
    return m.group(1)
def num(key, indent=2):
    return re.match(r"\d+", field(key, indent)).group(0)
want = {"gpu_arch": field("Name"), "gpu_model": field("Marketing Name"), "cu_per_gpu": num("Compute Unit"),
        "simd_per_cu": num("SIMDs per CU"), "se_per_gpu": num("Shader Engines"),
        "wave_size": num("Wavefront Size"), "workgroup_max_size": num("Workgroup Max Size"),
        "max_waves_per_cu": num("Max Waves Per CU"), "max_sclk": num("Max Clock Freq. (MHz)"),
        "gpu_l1": num("L1", 4), "gpu_l2": num("L2", 4)}
got = {r[0]: r[1] for r in csv.reader(open(sys.argv[2])) if len(r) > 1}
for k, v in want.items():
    assert got.get(k) == v, (k, got.get(k), v)
EOF
  # The same file without its rocminfo text: the top kernels and the
  # dispatch list need no architecture, the system information asks for it.
  cp "$V1/results.csv" "$TMP/r.csv"
  run analyze -w "$TMP/r.csv" -b 1
  expect_status 1; one_line_err; expect_err "the architecture is not recorded"
  run analyze -w "$TMP/r.csv" --arch gfx90a -b 1
  expect_status 0; expect_err "cu_per_gpu 110"
  ;;
rocprof1_counters)
  # The folder: results.csv (timestamps) and data_movement.csv (counters),
  # passes of one run merged by Index; a counter's mean and a duration as
  # the files have them.
  run analyze -w "$V1" -b 0 -b 16.3 --norm per_kernel -k laplacian_kernel --format csv -o "$TMP/o"
  expect_status 0
  want=$(python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["KernelName"] == "laplacian_kernel"]
v = [float(r["TCP_TCC_READ_REQ_sum"]) for r in rows]
print(repr(sum(v) / len(v)))
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["KernelName"] == "laplacian_kernel"]
print(sum(int(r["EndNs"]) - int(r["BeginNs"]) for r in rows))' "$V1/data_movement.csv" "$V1/results.csv")
  got=$(csv_cell "$TMP/o/16.3.csv" 16.3.10 Avg)
  python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-9 * abs(b))' \
    "$got" "$(echo "$want" | sed -n 1p)" || fail "L1-L2 read requests $got, the file says $(echo "$want" | sed -n 1p)"
  got=$(csv_cell "$TMP/o/0.1.csv" 0 "Sum(ns)")
  [ "${got%.*}" = "$(echo "$want" | sed -n 2p)" ] || fail "duration $got"
  # A counter of the TCP block named without _sum is also read as its sum;
  # one named with an instance is not.
  python3 - "$V1/data_movement.csv" "$TMP/m/a.csv" <<'EOF'
import csv, os, sys
os.makedirs(os.path.dirname(sys.argv[2]))
rows = list(csv.reader(open(sys.argv[1])))
i = rows[0].index("TCP_TCC_READ_REQ_sum")
rows[0][i] = "TCP_TCC_READ_REQ"
rows[0].append("TCC_HIT[0]")
for r in rows[1:]: r.append("7")
csv.writer(open(sys.argv[2], "w", newline="")).writerows(rows)
EOF
  run analyze -w "$TMP/m" --arch gfx90a -b 16.3 --norm per_kernel -k laplacian_kernel --format csv -o "$TMP/o2"
  expect_status 0
  [ "$(csv_cell "$TMP/o2/16.3.csv" 16.3.10 Avg)" = "$(csv_cell "$TMP/o/16.3.csv" 16.3.10 Avg)" ] ||
    fail "TCP_TCC_READ_REQ not read as TCP_TCC_READ_REQ_sum"
  ;;
rocprof1_errors)
  # Damaged files: one line naming the file, the line and the field.
  mkdir "$TMP/e"
  cp "$V1/results.sysinfo.txt" "$TMP/e/"
  python3 - "$V1/data_movement.csv" "$TMP/e/c.csv" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
lines[2] = lines[2].rsplit(",", 1)[0] + ",many"
open(sys.argv[2], "w").write("\n".join(lines))
EOF
  run analyze -w "$TMP/e/c.csv"
  expect_status 1; one_line_err; expect_err "c.csv:3"; expect_err "TCP_TCC_WRITE_REQ_sum"
  head -3 "$V1/results.csv" >"$TMP/e/s.csv"
  head -4 "$V1/results.csv" | tail -1 | cut -d, -f1-5 >>"$TMP/e/s.csv"
  run analyze -w "$TMP/e/s.csv"
  expect_status 1; one_line_err; expect_err "s.csv:4"; expect_err "pid"; expect_err "fields"
  head -1 "$V1/results.csv" >"$TMP/e/h.csv"
  run analyze -w "$TMP/e/h.csv"
  expect_status 1; one_line_err; expect_err "no dispatch rows"
  # Two files of a folder that are not passes of one run.
  mkdir "$TMP/two"
  head -5 "$V1/results.csv" >"$TMP/two/a.csv"
  head -5 "$V1/data_movement.csv" | sed '3s/laplacian_kernel/other_kernel/' >"$TMP/two/b.csv"
  run analyze -w "$TMP/two" --arch gfx90a
  expect_status 1; one_line_err; expect_err "b.csv:3"; expect_err "KernelName"
  # rocminfo's architecture wins over --arch, with a warning.
  run analyze -w "$V1/results.csv" --arch gfx1234 -b 1
  expect_status 0; expect_err "--arch gfx1234 is ignored"
  ;;
rocprof1_db)
  # results.db, rocprof's SQLite copy of results.csv (table KERN, kernel
  # names kept quoted): the same analysis as the CSV file; alone in a
  # folder (with the rocminfo text) it is what the folder holds.
  run analyze -w "$V1/results.csv" -b 0 -b 1 --format csv -o "$TMP/a"
  expect_status 0
  run analyze -w "$V1/results.db" -b 0 -b 1 --format csv -o "$TMP/b"
  expect_status 0
  diff -r "$TMP/a" "$TMP/b" >/dev/null || fail "results.db and results.csv differ: $(diff -r "$TMP/a" "$TMP/b" | head)"
  mkdir "$TMP/d" && cp "$V1/results.db" "$V1/results.sysinfo.txt" "$TMP/d/"
  run analyze -w "$TMP/d" -b 0 -b 1 --format csv -o "$TMP/c"
  expect_status 0
  diff -r "$TMP/a" "$TMP/c" >/dev/null || fail "folder of results.db: $(diff -r "$TMP/a" "$TMP/c" | head)"
  # A damaged value names the database, the row and the column.
  python3 - "$TMP/d/results.db" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute('UPDATE KERN SET "grd" = \'big\' WHERE "Index" = 2')
c.commit()
EOF
  run analyze -w "$TMP/d"
  expect_status 1; one_line_err; expect_err "results.db:3"; expect_err "grd"
  ;;
rocprof1_store)
  # Imported into the store and analyzed from it: the same numbers, and the
  # store says where the workload came from.
  run analyze -w "$V1" --format csv -o "$TMP/a"
  expect_status 0
  run db import --db "$TMP/s.db" -w "$V1" -n lap
  expect_status 0
  run db list --db "$TMP/s.db"
  expect_status 0; expect_out "rocprof"
  run analyze --db "$TMP/s.db" -w lap --format csv -o "$TMP/b"
  expect_status 0
  diff -r "$TMP/a" "$TMP/b" >/dev/null || fail "store and file differ: $(diff -r "$TMP/a" "$TMP/b" | head)"
  ;;
rocprof1_stats)
  # rocprof --stats' per-kernel totals (results.stats.csv), no dispatches:
  # the file alone or its folder gives the top-kernel table and nothing
  # else, without --arch; every kernel, call count and total as the file
  # has them, the mean their quotient, the median unknown (blank, never 0),
  # Pct each kernel's share of the file's time (not the file's rounded
  # column).
  STATS=$F/rocprof-v1/mi300x_stats/results.stats.csv
  STATS2=$V1/results.stats.csv
  # check_top CSV STATS [PATTERN]: the CSV output's table 0.1 against the
  # file (only the kernels whose names PATTERN matches, when given).
  check_top() {
    python3 - "$@" <<'EOF' || fail "top kernels of $2: $(head -5 "$1")"
import csv, re, sys
src = list(csv.DictReader(open(sys.argv[2])))
total = sum(int(r["TotalDurationNs"]) for r in src)
keep = [r for r in src if len(sys.argv) < 4 or re.search(sys.argv[3], r["Name"])]
keep.sort(key=lambda r: (-int(r["TotalDurationNs"]), r["Name"]))
lines = open(sys.argv[1]).read().split("\n")
start = lines.index("# 0.1 Top Kernels") + 1
end = lines.index("", start)
got = list(csv.DictReader(lines[start:end]))
assert len(got) == len(keep), (len(got), len(keep))
for g, r in zip(got, keep):
    calls, tot = int(r["Calls"]), int(r["TotalDurationNs"])
    assert g["Kernel_Name"] == r["Name"], (g, r)
    assert int(g["Count"]) == calls, (g, r)
    assert float(g["Sum(ns)"]) == tot, (g, r)
    assert abs(float(g["Mean(ns)"]) - tot / calls) <= 1e-9 * tot / calls, (g, r)
    assert g["Median(ns)"] == "", g
    assert abs(float(g["Pct"]) - 100.0 * tot / total) <= 1e-9, (g, total)
assert not [l for l in lines[end:] if l.startswith("# ")], "another table"
EOF
  }
  run analyze -w "$STATS" --format csv
  expect_status 0; expect_err "per-kernel totals only"
  cp "$TMP/out" "$TMP/one.csv"
  check_top "$TMP/one.csv" "$STATS"
  run analyze -w "$F/rocprof-v1/mi300x_stats" --format csv
  expect_status 0
  cmp -s "$TMP/out" "$TMP/one.csv" || fail "the folder and its file differ: $(diff "$TMP/out" "$TMP/one.csv" | head)"
  run analyze -w "$STATS2" --format csv
  expect_status 0
  check_top "$TMP/out" "$STATS2"
  # Text: the table and one line saying why there is nothing else.
  run analyze -w "$STATS2"
  expect_status 0; expect_out "Top Kernels"; expect_out "laplacian_kernel"
  expect_out "holds per-kernel totals only"
  grep -q "Dispatch List\|System Info\|Speed-of-Light" "$TMP/out" && fail "a panel that needs dispatches: $(head -c 600 "$TMP/out")"
  run analyze -w "$STATS2" --summary
  expect_status 0; expect_out "laplacian_kernel"; expect_out "holds per-kernel totals only"
  # -k narrows the table.
  run analyze -w "$STATS2" -k '_kernel$' -k '!laplacian' --format csv
  expect_status 0
  check_top "$TMP/out" "$STATS2" '^(?!laplacian).*_kernel$'
  # Another panel, or a dispatch filter: refused, saying why.
  run analyze -w "$STATS2" -b 2
  expect_status 1; one_line_err; expect_err "per-kernel totals only"; expect_err "-b 2"
  run analyze -w "$STATS2" -d 0
  expect_status 1; one_line_err; expect_err "per-kernel totals only"
  run analyze -w "$STATS2" -k nothing_like_this
  expect_status 1; one_line_err
  # JSON says what the workload is; --arch is taken when given.
  run analyze -w "$STATS" --format json
  expect_status 0
  python3 -c 'import json, sys; w = json.load(open(sys.argv[1]))["workloads"][0]; assert w["totals_only"] is True and w["arch"] is None, w' \
    "$TMP/out" || fail "JSON: $(head -c 400 "$TMP/out")"
  run analyze -w "$STATS" --arch gfx942 --format json
  expect_status 0
  python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["workloads"][0]["arch"] == "gfx942"' "$TMP/out" ||
    fail "--arch: $(head -c 400 "$TMP/out")"
  # The store: imported, listed, analyzed with the same table; the same
  # numbers under other kernel names are another workload.
  run db import --db "$TMP/s.db" -w "$STATS2" -n st
  expect_status 0
  run analyze -w "$STATS2" --format csv
  cp "$TMP/out" "$TMP/a.csv"
  run analyze --db "$TMP/s.db" -w st --format csv
  expect_status 0
  cmp -s "$TMP/out" "$TMP/a.csv" || fail "store and file differ: $(diff "$TMP/out" "$TMP/a.csv" | head)"
  run analyze --db "$TMP/s.db" -w st -k check --format csv
  expect_status 0
  check_top "$TMP/out" "$STATS2" check
  sed 's/check_kernel/verify_kernel/' "$STATS2" >"$TMP/renamed.stats.csv"
  run db import --db "$TMP/s.db" -w "$TMP/renamed.stats.csv" -n st2
  expect_status 0; expect_out "imported as 'st2'"
  # lumen serve: the same panels as analyze, and a message, not a crash,
  # where the totals cannot answer.
  . "$SRCDIR/../../scripts/serve-lib.sh"
  start_server --db "$TMP/s.db"
  get "/api/analysis?w=db:st"
  expect_code 200 "the analysis"
  "$LUMEN" analyze --db "$TMP/s.db" -w st --format json >"$TMP/cli.json" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
  python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:3]); assert a["panels"] == b["panels"]' \
    "$TMP/body" "$TMP/cli.json" || fail "/api/analysis and analyze differ: $(head -c 400 "$TMP/body")"
  get "/api/summary?w=db:st"
  expect_code 400 "the summary"
  grep -q "per-kernel totals only" "$TMP/body" || fail "/api/summary: $(cat "$TMP/body")"
  get "/api/series?w=db:st&m=2.1.0"
  expect_code 400 "a series"
  kill "$SERVER" 2>/dev/null
  wait "$SERVER" 2>/dev/null
  # Beside a results.csv, the dispatches win (as before).
  run analyze -w "$V1" -b 0 --format csv
  expect_status 0; expect_out "# 0.2 Dispatch List"
  ;;
rocprof1_stats_errors)
  # Damaged kernel statistics: one line naming the file, the line and the
  # field.
  STATS2=$V1/results.stats.csv
  head -2 "$STATS2" >"$TMP/t.csv"
  sed -n 3p "$STATS2" | cut -d, -f1-2 >>"$TMP/t.csv"
  run analyze -w "$TMP/t.csv"
  expect_status 1; one_line_err; expect_err "t.csv:3"; expect_err "TotalDurationNs"; expect_err "fields"
  sed '3s/,1087688,1087688,/,10x7688,1087688,/' "$STATS2" >"$TMP/n.csv"
  run analyze -w "$TMP/n.csv"
  expect_status 1; one_line_err; expect_err "n.csv:3"; expect_err "TotalDurationNs"; expect_err "not a number"
  sed '3s/,1087688,1087688,/,-1087688,-1087688,/' "$STATS2" >"$TMP/neg.csv"
  run analyze -w "$TMP/neg.csv"
  expect_status 1; one_line_err; expect_err "neg.csv:3"; expect_err "negative"
  sed '3s/,1087688,1087688,/,nan,1087688,/' "$STATS2" >"$TMP/nan.csv"
  run analyze -w "$TMP/nan.csv"
  expect_status 1; one_line_err; expect_err "nan.csv:3"; expect_err "TotalDurationNs"
  sed '3s/",1,1087688/",0,1087688/' "$STATS2" >"$TMP/z.csv"
  run analyze -w "$TMP/z.csv"
  expect_status 1; one_line_err; expect_err "z.csv:3"; expect_err "Calls"
  sed '2s/,2643734,/,2643999,/' "$STATS2" >"$TMP/m.csv"
  run analyze -w "$TMP/m.csv"
  expect_status 1; one_line_err; expect_err "m.csv:2"; expect_err "AverageNs"
  head -1 "$STATS2" >"$TMP/h.csv"
  run analyze -w "$TMP/h.csv"
  expect_status 1; one_line_err; expect_err "no kernels"
  # A stated percentage that is not the share: said, and recomputed.
  sed '2s/,99.91776286922584$/,50.0/' "$STATS2" >"$TMP/p.csv"
  run analyze -w "$TMP/p.csv" --format csv
  expect_status 0; expect_err "p.csv:2"; expect_err "Percentage"
  # Two statistics files and no results file: which one is the user's to say.
  mkdir "$TMP/two" && cp "$STATS2" "$TMP/two/a.stats.csv" && cp "$STATS2" "$TMP/two/b.stats.csv"
  run analyze -w "$TMP/two"
  expect_status 1; one_line_err; expect_err "give -w one of them"
  ;;
ncu_folder)
  # A folder holding one Nsight Compute export is read as that file; with
  # two, the user is asked to name one.
  run analyze -w "$CC86" -b 0 --format csv
  expect_status 0
  cp "$TMP/out" "$TMP/file.csv"
  run analyze -w "$(dirname "$CC86")" -b 0 --format csv
  expect_status 0
  cmp -s "$TMP/out" "$TMP/file.csv" || fail "the folder and its file differ: $(diff "$TMP/out" "$TMP/file.csv" | head)"
  mkdir "$TMP/two" && cp "$CC86" "$TMP/two/a.csv" && cp "$CC86" "$TMP/two/b.csv"
  run analyze -w "$TMP/two"
  expect_status 1; one_line_err; expect_err "Nsight Compute CSV export"; expect_err "given as the file"
  ;;
ncu_details)
  # The details page with --metrics (quoted, thousands separators): one row
  # per launch, a byte count and a duration as the file has them, the
  # architecture from CC. Without definitions for it, the top kernels,
  # dispatches and system information are still shown.
  run analyze -w "$CC86" -b 0 --format csv -o "$TMP/o"
  expect_status 0
  want=$(python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ids = []
for r in rows:
    if r["ID"] not in ids: ids.append(r["ID"])
v = lambda i, m: [int(r["Metric Value"].replace(",", "")) for r in rows if r["ID"] == i and r["Metric Name"] == m][0]
print(len(ids)); print(v("0", "gpu__time_duration.sum")); print(v("0", "dram__bytes.sum"))' "$CC86")
  [ "$(($(wc -l <"$TMP/o/0.2.csv") - 1))" = "$(echo "$want" | sed -n 1p)" ] || fail "launch count"
  got=$(csv_cell "$TMP/o/0.1.csv" 0 "Sum(ns)")
  [ "${got%.*}" = "$(echo "$want" | sed -n 2p)" ] || fail "duration $got"
  run export -w "$CC86" --omniperf "$TMP/e"
  expect_status 0; expect_err "typical NVIDIA A10 (sm_86)"
  got=$(csv_cell "$TMP/e/pmc_perf.csv" 0 dram__bytes.sum)
  [ "$got" = "$(echo "$want" | sed -n 3p)" ] || fail "dram__bytes.sum $got"
  [ "$(csv_cell "$TMP/e/pmc_perf.csv" 0 Grid_Size)" = 1048576 ] || fail "Grid_Size in threads"
  [ "$(csv_cell "$TMP/e/pmc_perf.csv" 0 Workgroup_Size)" = 1024 ] || fail "Workgroup_Size"
  # Rule columns in the header that the metric records stop short of, and
  # "n/a": read, the value blank (not collected).
  sed -e '1s/$/,"Rule Name","Rule Type","Rule Description"/' -e '2s/"32,746,880"/"n\/a"/' "$CC86" >"$TMP/r.csv"
  run export -w "$TMP/r.csv" --omniperf "$TMP/r"
  expect_status 0
  [ -z "$(csv_cell "$TMP/r/pmc_perf.csv" 0 dram__bytes.sum)" ] || fail "n/a is not blank"
  [ "$(csv_cell "$TMP/r/pmc_perf.csv" 1 dram__bytes.sum)" = "$(csv_cell "$TMP/e/pmc_perf.csv" 1 dram__bytes.sum)" ] ||
    fail "records shorter than the header"
  # --arch against the file's CC: the file wins, with a warning.
  run analyze -w "$CC86" --arch sm_90 -b 0
  expect_status 0; expect_err "--arch sm_90 is ignored"
  if [ ! -d "$SRCDIR/../../metrics/sm_86" ]; then
    run analyze -w "$CC86"
    expect_status 0; expect_err "sm_86 has no metric definitions"; expect_out "Top Kernels"
  fi
  ;;
ncu_2020)
  # Nsight Compute 2020: byte-order mark, unquoted, no CC column (--arch),
  # the duration from the GPU Speed Of Light section (nsecond).
  run analyze -w "$V100"
  expect_status 1; one_line_err; expect_err "give it with --arch"
  run analyze -w "$V100" --arch sm_70 -b 0 --format csv -o "$TMP/o"
  expect_status 0; expect_err "typical Tesla V100"
  want=$(python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8-sig")))
d = [float(r["Metric Value"]) for r in rows if r["Metric Name"] == "Duration"]
assert all(r["Metric Unit"] == "nsecond" for r in rows if r["Metric Name"] == "Duration")
print(len({r["ID"] for r in rows})); print(int(sum(d)))' "$V100")
  got=$(csv_cell "$TMP/o/0.1.csv" 0 Count)
  [ "${got%.*}" = "$(echo "$want" | sed -n 1p)" ] || fail "kernel count $got"
  got=$(csv_cell "$TMP/o/0.1.csv" 0 "Sum(ns)")
  [ "${got%.*}" = "$(echo "$want" | sed -n 2p)" ] || fail "duration $got"
  ;;
ncu_raw)
  # The raw page of the same launches (units in the record under the
  # header, DRAM bytes in Kbyte, durations in usecond): the same numbers.
  python3 "$SRCDIR/ncu_fixture.py" raw "$CC86" "$TMP/raw.csv" || fail "ncu_fixture.py"
  run export -w "$CC86" --omniperf "$TMP/a"
  expect_status 0
  run export -w "$TMP/raw.csv" --omniperf "$TMP/b"
  expect_status 0
  python3 - "$TMP/a/pmc_perf.csv" "$TMP/b/pmc_perf.csv" <<'EOF' || fail "raw page and details page differ"
import csv, sys
a, b = (list(csv.DictReader(open(p))) for p in sys.argv[1:])
assert len(a) == len(b) and a[0].keys() == b[0].keys(), (len(a), len(b))
for x, y in zip(a, b):
    for k in x:
        try:
            assert abs(float(x[k]) - float(y[k])) <= 1e-9 * abs(float(x[k])), (k, x[k], y[k])
        except ValueError:
            assert x[k] == y[k], (k, x[k], y[k])
EOF
  ;;
ncu_sm90)
  # An sm_90 export (nv_fixture's healthy kernel written as Nsight Compute
  # would): panels and summary; speed of light as the file's pct metrics.
  python3 "$SRCDIR/nv_fixture.py" "$SRCDIR/../../metrics/sm_90" "$TMP/fx" || fail "nv_fixture.py"
  python3 "$SRCDIR/ncu_fixture.py" details "$TMP/fx/pmc_perf.csv" "$TMP/h.csv" || fail "ncu_fixture.py"
  run analyze -w "$TMP/h.csv"
  expect_status 0; expect_out "Summary: 1 kernel, 300.0"; expect_out "NVIDIA H100 80GB HBM3"
  run analyze -w "$TMP/h.csv" -b 2 --format csv -o "$TMP/o"
  expect_status 0
  python3 - "$TMP/o/2.1.csv" "$TMP/h.csv" <<'EOF' || fail "speed of light"
import csv, sys
sol = {r["Metric"]: r for r in csv.DictReader(open(sys.argv[1]))}
src = {r["Metric Name"]: float(r["Metric Value"].replace(",", "")) for r in csv.DictReader(open(sys.argv[2]))
       if r["ID"] == "0" and r["Metric Name"] and r["Metric Unit"] in ("%", "usecond")}
for row, metric in [("Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                    ("DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
                    ("L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed")]:
    assert float(sol[row]["Avg"]) == src[metric], (row, sol[row]["Avg"], src[metric])
assert float(sol["Duration"]["Avg"]) == src["gpu__time_duration.sum"], sol["Duration"]  # usecond in both
EOF
  ;;
ncu_errors)
  # Damaged exports: one line naming the file, the line and the field.
  sed '3s/"10,776,576"/"ten"/' "$CC86" >"$TMP/v.csv"
  run analyze -w "$TMP/v.csv"
  expect_status 1; one_line_err; expect_err "v.csv:3"; expect_err "Metric Value"
  sed '2s/"byte"/"furlong"/' "$CC86" >"$TMP/u.csv"
  run analyze -w "$TMP/u.csv"
  expect_status 1; one_line_err; expect_err "u.csv:2"; expect_err "furlong"
  sed '4s/,"Command line profiler metrics".*//' "$CC86" >"$TMP/s.csv"
  run analyze -w "$TMP/s.csv"
  expect_status 1; one_line_err; expect_err "s.csv:4"
  sed '2s/"(32, 32, 1)"/"32 by 32"/' "$CC86" >"$TMP/b.csv"
  run analyze -w "$TMP/b.csv"
  expect_status 1; one_line_err; expect_err "b.csv:2"; expect_err "Block Size"
  head -1 "$CC86" >"$TMP/h.csv"
  run analyze -w "$TMP/h.csv"
  expect_status 1; one_line_err; expect_err "no launch rows"
  # A unit lumen does not convert, on a metric no definition reads: kept,
  # with one warning.
  sed 's/"dram__bytes.sum","byte"/"my section row","furlong"/' "$CC86" >"$TMP/w.csv"
  run analyze -w "$TMP/w.csv" -b 0
  expect_status 0; expect_err 'unit "furlong"'
  [ "$(grep -c furlong "$TMP/err")" = 1 ] || fail "warned more than once"
  ;;
ncu_store)
  # Imported into the store and analyzed from it: the same numbers; the
  # store says the workload came from Nsight Compute.
  python3 "$SRCDIR/nv_fixture.py" "$SRCDIR/../../metrics/sm_90" "$TMP/fx" || fail "nv_fixture.py"
  python3 "$SRCDIR/ncu_fixture.py" details "$TMP/fx/pmc_perf.csv" "$TMP/h.csv" || fail "ncu_fixture.py"
  run analyze -w "$TMP/h.csv" -b 2 --format csv -o "$TMP/a"
  expect_status 0
  run db import --db "$TMP/s.db" -w "$TMP/h.csv" -n h
  expect_status 0
  run db list --db "$TMP/s.db"
  expect_status 0; expect_out "ncu"
  run analyze --db "$TMP/s.db" -w h -b 2 --format csv -o "$TMP/b"
  expect_status 0
  diff -r "$TMP/a" "$TMP/b" >/dev/null || fail "store and file differ: $(diff -r "$TMP/a" "$TMP/b" | head)"
  ;;
compare_formats)
  # Comparisons across formats and vendors: rows match by kernel or metric
  # name, so an AMD run beside an NVIDIA one compares no AMD metric with an
  # NVIDIA metric that merely shares its id, and a row the other run lacks
  # is "absent", never 0 (-100 %).
  run analyze -w "$V1" -w "$CC86" -b 2
  expect_status 0
  expect_out "Count [2] absent"
  expect_out "have no counterpart in workload [2]: no kernel of the same name"
  expect_out "have no counterpart in workload [2]: no metric of the same name"
  grep -q -- "-100" "$TMP/out" && fail "a row the other run lacks shown as -100 %"
  grep -q "absent Gflop" "$TMP/out" && fail "a unit after absent"
  run analyze -w "$V1" -w "$CC86" -b 2 --format json
  expect_status 0
  [ "$("$JSON_GET" panels.0.tables.0.rows.0.compare.0.cells.1 <"$TMP/out")" = "null" ] ||
    fail "an absent kernel has a value in the JSON comparison"
  # The same run read two ways (results.csv and results.db): every row has
  # its counterpart and every delta is 0.
  run analyze -w "$V1" -w "$V1/results.db" -b 2 --format json
  expect_status 0
  n=$("$JSON_GET" panels.0.tables.0.rows <"$TMP/out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  [ "$n" -ge 4 ] || fail "top kernels: $n rows"
  for r in $(seq 0 $((n - 1))); do
    [ "$("$JSON_GET" panels.0.tables.0.rows.$r.compare.0.delta_pct.2 <"$TMP/out")" = "0" ] ||
      fail "top kernel $r differs between results.csv and results.db"
  done
  run analyze -w "$V1" -w "$V1/results.db" -b 2
  expect_status 0
  grep -q "absent" "$TMP/out" && fail "a row absent from the same run read from its database"
  # A metric whose peak is a constant but whose value needs counters the
  # file lacks: the value says "not collected" beside the peak.
  run analyze -w "$V1" -b 2 --format csv -o "$TMP/o"
  expect_status 0
  [ "$(csv_cell "$TMP/o/2.1.csv" 2.1.0 Avg)" = "not collected" ] || fail "VALU FLOPs Avg: $(csv_cell "$TMP/o/2.1.csv" 2.1.0 Avg)"
  [ -n "$(csv_cell "$TMP/o/2.1.csv" 2.1.0 Peak)" ] || fail "VALU FLOPs Peak is blank"
  ;;
ncu_roofline)
  # An export with FP32 operation counters named at the SM level (sm__...)
  # and DRAM bytes: the summary places each kernel on the roofline from
  # them (the SM sums are the sub-partitions' sums), says that only the
  # arithmetic collected is counted, and names the memory DRAM. The FLOP
  # rate and intensity are computed here from the file.
  run analyze -w "$CC86" --summary --format json
  expect_status 0
  want=$(python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
k = "basic(int, int, int, const float *, const float *, float *)"
v = {r["Metric Name"]: float(r["Metric Value"].replace(",", "")) for r in rows if r["Kernel Name"] == k and r["ID"] == "0"}
ops = v["sm__sass_thread_inst_executed_op_fadd_pred_on.sum"] + v["sm__sass_thread_inst_executed_op_fmul_pred_on.sum"] + 2 * v["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"]
print(ops / v["gpu__time_duration.sum"], ops / v["dram__bytes.sum"])' "$CC86")
  python3 - "$TMP/out" $want <<'PY' || fail "roofline of basic(): $(cat "$TMP/out" | head -c 600)"
import json, sys
s = json.load(open(sys.argv[1]))
summary = s.get("summary", s)
k = [k for k in summary["kernels"] if k["name"].startswith("basic(")][0]
r = k["roofline"]
assert abs(r["gflops"] - float(sys.argv[2])) <= 1e-9 * float(sys.argv[2]), r
assert abs(r["intensity"] - float(sys.argv[3])) <= 1e-9 * float(sys.argv[3]), r
assert r["type"] == "FP32" and r["memory"] == "DRAM" and "ops_not_collected" in r, r
assert 0 < k["rules_not_evaluated"] < k["rules_applied"], k
PY
  run analyze -w "$CC86" --summary
  expect_status 0
  expect_out "mostly FP32 work"
  expect_out "at DRAM"
  expect_out "counting only the arithmetic collected"
  grep -q "arithmetic counters were not collected" "$TMP/out" && fail "FLOP counters said not collected"
  # Rules that read metrics the export lacks did not clear the kernel: said
  # so, never a bare "no rule fired".
  expect_out "rules could not be evaluated: what they read was not"
  grep -qx "   no rule fired" "$TMP/out" && fail "a bare 'no rule fired' for a kernel with rules not evaluated"
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo PASS
