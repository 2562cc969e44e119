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
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"

V3=$F/rocprofv3
FP6=$V3/gfx950_fp6_instr_detail/instruction_detail_counter_collection.csv
BANK=$V3/gfx950_ds_read_b128_bank/bank_test_counter_collection.csv
TRACE=$V3/gfx942_kernel_trace/66960_kernel_trace.csv

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
  # Found in rocprofv3's output folder too.
  mkdir -p "$TMP/out2/host" && cp "$TMP/run_results.db" "$TMP/out2/host/"
  run analyze -w "$TMP/out2" --list-stats
  expect_status 0; expect_out "__amd_rocclr_copyBuffer"
  # An SQLite file that is not rocpd is not taken for one.
  python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("CREATE TABLE t (x)")' "$TMP/other.db"
  run analyze -w "$TMP/other.db"
  expect_status 1; one_line_err
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo PASS
