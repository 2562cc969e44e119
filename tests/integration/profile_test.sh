#!/usr/bin/env bash
# End-to-end tests of `lumen profile` through its rocprofiler-sdk adapter
# over the simulated SDK (test infrastructure that replays shared
# workloads; nothing here is a real measurement): the applications launch
# kernels through the simulated runtime, which drives the SDK's callbacks.
# Usage: profile_test.sh LUMEN SIMAPP DB_QUERY GOLDEN_CASE SHARED_DIR TEST_NAME SIMSDK ROCP_CHECK
set -u
LUMEN=$1
APP=$2
Q=$3
GOLDEN=$4
SHARED=$5
NAME=$6
SIMSDK=${7:-}
ROCP_CHECK=${8:-}
WL=$SHARED/workloads
# lumen and its tool library find the simulated SDK the way they find the
# real one.
[ -n "$SIMSDK" ] && export LUMEN_ROCPROFILER_SDK=$SIMSDK
TMP=$(mktemp -d /tmp/lumen-pt-XXXXXX)
# Processes this test started (a background lumen, the applications whose
# pids they wrote) do not outlive it, even when it fails.
cleanup() {
  [ -n "${LP:-}" ] && kill -KILL "$LP" 2>/dev/null
  [ -f "$TMP/pids" ] && for p in $(cat "$TMP/pids"); do kill -KILL "$p" 2>/dev/null; done
  chmod -R u+w "$TMP" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
cd "$TMP" || exit 1

SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
# q DIR SQL: one query on a profile's database
q() { "$Q" "$1/lumen.db" "$2" || fail "query failed: $2"; }
same() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }

VCOPY='vecCopy(double*, double*, double*, int, int)'
# Every profiled value belongs to a counter of the set its dispatch got.
check_values_in_set() {
  local stray
  stray=$(q "$1" "SELECT COUNT(*) FROM profile_value v JOIN profile_record r ON r.workload_id = v.workload_id
      AND r.run_id = v.run_id AND r.pid = v.pid AND r.dispatch_id = v.dispatch_id WHERE NOT EXISTS (SELECT 1 FROM profile_set p
      WHERE p.workload_id = r.workload_id AND p.set_id = r.set_id AND (v.column_name = p.counter OR
      v.column_name = p.counter || '_sum' OR v.column_name LIKE p.counter || '[%'))")
  same "$stray" 0 "values outside their dispatch's counter set"
  # ... and every counter of that set has a value (counters the recording
  # never had, such as TCP_TCP_LATENCY on MI300X, have none anywhere).
  local missing
  missing=$(q "$1" "SELECT COUNT(*) FROM profile_record r JOIN profile_set p ON p.workload_id = r.workload_id
      AND p.set_id = r.set_id JOIN profile_run u ON u.workload_id = r.workload_id AND u.id = r.run_id
      WHERE u.status = 'ok' AND NOT EXISTS (SELECT 1 FROM profile_value v WHERE v.workload_id = r.workload_id
      AND v.run_id = r.run_id AND v.pid = r.pid AND v.dispatch_id = r.dispatch_id AND (v.column_name = p.counter OR
      v.column_name = p.counter || '_sum' OR v.column_name LIKE p.counter || '[%')) AND EXISTS (SELECT 1
      FROM profile_value v WHERE v.workload_id = r.workload_id AND (v.column_name = p.counter OR
      v.column_name = p.counter || '_sum' OR v.column_name LIKE p.counter || '[%'))")
  same "$missing" 0 "counters of a set without a value"
  # Unselected dispatches collect nothing.
  local unselected
  unselected=$(q "$1" "SELECT COUNT(*) FROM profile_value v JOIN profile_record r ON r.workload_id = v.workload_id
      AND r.run_id = v.run_id AND r.pid = v.pid AND r.dispatch_id = v.dispatch_id WHERE r.set_id < 0")
  same "$unselected" 0 "values of dispatches that were not selected"
}
# The system information of a profile is the device's (the simulated
# SDK's agents carry the recording's values) and the host's: the fields of
# the machine the recording was made on, and the blocks it was asked for,
# differ here and are left out of the comparison.
HOST_IGNORE=""
for f in ip_blocks version hostname cpu_model sbios linux_distro linux_kernel_version \
  amd_gpu_kernel_version cpu_memory gpu_memory rocm_version vbios compute_partition memory_partition; do
  HOST_IGNORE="$HOST_IGNORE --ignore 1.1:$f"
done
golden_equal() { # WORKLOAD_DIR GOLDEN_CASE
  # shellcheck disable=SC2086
  "$GOLDEN" "$LUMEN" "$SHARED" "$SHARED/golden/$2" --workload "$1" --ignore 1.1:workload_name \
    --ignore 1.1:command --ignore 1.1:timestamp $HOST_IGNORE >"$TMP/golden" 2>&1 || fail "analyze differs from golden/$2: $(tail -8 "$TMP/golden")"
  grep -q '^cells equal \([0-9]*\) / \1$' "$TMP/golden" || fail "golden: $(tail -2 "$TMP/golden")"
}
# alive PID: the process exists and is not a zombie.
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }
# all_gone: every pid in $TMP/pids is gone (within 5 s).
all_gone() {
  local pid i
  for pid in $(cat "$TMP/pids"); do
    for i in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && fail "process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) outlived lumen profile"
  done
  return 0
}
# start_hanging DIR [ARGS]: lumen profile in the background (pid in LP) of
# an application whose run 2 hangs after one launch; returns once it hangs.
start_hanging() {
  local dir=$1 i
  shift
  "$LUMEN" profile -n h -w "$TMP/$dir" -- "$APP" -g 2 --hang-run 2 --crash-after 1 --pid-file "$TMP/pids" "$@" \
    "$VCOPY:3" >"$TMP/out" 2>"$TMP/err" &
  LP=$!
  for i in $(seq 200); do grep -q 'hanging in run 2' "$TMP/err" 2>/dev/null && return 0; sleep 0.05; done
  fail "the application did not start hanging: $(cat "$TMP/err")"
}
# mpi_setup: a real Open MPI runs the simulated application's ranks (one
# machine, --oversubscribe; CI runs as root). Without mpirun the test is
# skipped (ctest SKIP_RETURN_CODE 77).
mpi_setup() {
  command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun not found (scripts/deps.sh installs openmpi-bin)"; exit 77; }
  MPIRUN="mpirun --oversubscribe --allow-run-as-root"
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  sets=$(n_sets gfx90a)
}
# rank_table_check JSON DIR RANK...: the rank table of lumen's JSON report
# agrees with the rows of the ranks' databases (DIR/rank.R/lumen.db, or
# DIR/lumen.db with rows of several ranks): dispatches, host and kernel
# time per rank, the slowest and fastest rank and the imbalance.
rank_table_check() {
  local json=$1 dir=$2
  shift 2
  local expected="" r db
  for r in "$@"; do
    db="$dir/rank.$r"
    [ -d "$TMP/$db" ] || db=$dir
    expected="$expected$(q "$db" "SELECT rank || ' ' || COUNT(*) || ' ' || host || ' ' || SUM(end_ns - start_ns) FROM dispatch WHERE rank = $r GROUP BY rank")
"
  done
  python3 - "$json" "$expected" <<'PY' || fail "rank table of $json"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["ranks"]
want = [l.split() for l in sys.argv[2].strip().split("\n")]
got = [[str(r["rank"]), str(int(r["dispatches"])), r["host"], r["kernel_time_ns"]] for r in t["ranks"]]
assert len(got) == len(want) == t["n_ranks"], (got, want)
for g, w in zip(got, want):
    assert g[:3] == w[:3] and abs(g[3] - float(w[3])) <= 1e-9 * float(w[3]), (g, w)
times = {int(w[0]): float(w[3]) for w in want}
assert t["slowest"] == max(times, key=times.get) and t["fastest"] == min(times, key=times.get), t
mean = sum(times.values()) / len(times)
assert abs(t["imbalance"] - max(times.values()) / mean) < 1e-12, t["imbalance"]
k = t["kernels"][0]
assert abs(k["ratio"] - max(times.values()) / min(times.values())) < 1e-9, k
print("rank table:", [(g[0], g[1]) for g in got], "imbalance", t["imbalance"])
PY
}
# same_panels A B WHAT: two JSON reports hold the same tables and spread.
same_panels() {
  python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:3]); assert a["panels"] == b["panels"] and a.get("spread") == b.get("spread") and a.get("ranks") == b.get("ranks")' \
    "$1" "$2" || fail "$3: the tables differ"
}
n_sets() { "$LUMEN" profile --plan --arch "$1" | tail -1 | sed 's/^sets: \([0-9]*\).*/\1/'; }
# spread_json DIR: lumen's JSON report of DIR into $TMP/spread.json
spread_json() {
  "$LUMEN" analyze -w "$1" --format json >"$TMP/spread.json" 2>"$TMP/err" || fail "analyze --format json: $(cat "$TMP/err")"
}
# recorded KERNEL_PREFIX N CSV: the first N recorded dispatches of the
# kernel in the recording's pmc_perf.csv, one "GRBM_GUI_ACTIVE duration"
# line each: what the simulated device replays as instances 0..N-1.
recorded() {
  python3 - "$@" <<'PY'
import csv, sys
prefix, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [r for r in csv.DictReader(open(path)) if r["Kernel_Name"].startswith(prefix)][:n]
assert len(rows) == n, (len(rows), n)
for r in rows:
    print(float(r["GRBM_GUI_ACTIVE"]), float(r["End_Timestamp"]) - float(r["Start_Timestamp"]))
PY
}

case $NAME in
vcopy_app_MI200 | vcopy_app_MI300X)
  rec=MI200
  [ "$NAME" = vcopy_app_MI300X ] && rec=MI300X_A1
  export LUMEN_SIM_RECORDING=$WL/vcopy/$rec
  run profile -n vcopy -w "$TMP/p" -- "$APP" -g 2 "$VCOPY:3:1048576:256"
  expect_status 0
  sets=$(q p "SELECT COUNT(DISTINCT set_id) FROM profile_set")
  # One run per set, and the application's output passes through.
  same "$(grep -c '^simapp: 3 launches on GPU 2$' "$TMP/out")" "$sets" "application output lines"
  same "$(q p "SELECT COUNT(*) FROM profile_run WHERE status = 'ok' AND mode = 'app'")" "$sets" "runs"
  same "$(q p "SELECT COUNT(*) FROM profile_record")" "$((sets * 3))" "records"
  # Run k collects set k-1 on every dispatch.
  same "$(q p "SELECT COUNT(*) FROM profile_record WHERE set_id != run_id - 1")" 0 "set per run"
  check_values_in_set p
  expect_err "3 dispatches, $sets counter sets, $sets application runs"
  golden_equal "$TMP/p" "vcopy/$rec"
  # The system information comes from the SDK's description of the agent
  # (which the simulated SDK derives from the recording, as the driver
  # describes a real GPU) and the architecture's facts: each field equals
  # the recording's. The host's fields are this machine's.
  q p "SELECT key || '=' || value FROM sysinfo ORDER BY position" >"$TMP/sysinfo.txt"
  python3 - "$WL/vcopy/$rec/sysinfo.csv" "$TMP/sysinfo.txt" <<'PY' || fail "system information from the agent"
import csv, sys
rec = next(csv.DictReader(open(sys.argv[1])))
got = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]) if "=" in l)
agent = "gpu_model gpu_arch gpu_l1 gpu_l2 cu_per_gpu simd_per_cu se_per_gpu wave_size workgroup_max_size " \
        "max_waves_per_cu max_sclk max_mclk cur_sclk cur_mclk num_xcd"
arch = "total_l2_chan lds_banks_per_cu sqc_per_gpu pipes_per_gpu hbm_bw"
bad = [f"{k}: {got.get(k)!r} != {rec[k]!r}" for k in (agent + " " + arch).split() if got.get(k) != rec[k]]
import socket
if got.get("hostname") != socket.gethostname(): bad.append("hostname is not this host's")
if bad: sys.exit("; ".join(bad))
PY
  # MI200: the simulated SDK names the kernel by its code object symbol,
  # _Z7vecCopyPdS_S_ii.kd, and the adapter's demangling gives the name the
  # reference tool recorded. The MI300X recording holds LLVM's form of the
  # same name, "... (.kd)", which no mangled symbol demangles to with
  # libstdc++: the simulated SDK reports it as recorded.
  kd="[clone .kd]"
  [ "$rec" = MI300X_A1 ] && kd="(.kd)"
  same "$(q p "SELECT DISTINCT kernel FROM profile_record")" "$VCOPY $kd" "demangled kernel name"
  # App replay runs the same recorded dispatch once per set: every set of a
  # row measured the same, so the spread is 0 and nothing is flagged.
  same "$(q p "SELECT COUNT(*) FROM execution")" "$((sets * 3))" "executions recorded"
  spread_json "$TMP/p"
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sp = d["spread"]
assert sp["sets"] == int(sys.argv[2]) and sp["flagged_metrics"] == 0, sp
assert sp["shared"][:2] == ["duration", "GRBM_GUI_ACTIVE"], sp["shared"]
for k in sp["kernels"]:
    assert k["rows"] == 3 and k["max"] == 0 and k["rows_over"] == 0, k
flags = [r for p in d["panels"] for t in p["tables"] for r in t["rows"] if r.get("sets_differ")]
assert not flags, flags[:2]' "$TMP/spread.json" "$sets" || fail "app replay reports a spread"
  run analyze -w "$TMP/p"
  expect_status 0
  ! grep -q "│ Sets differ" "$TMP/out" || fail "app replay flags metrics"
  # When each run is another execution (as on a real GPU), the same app
  # replay reports a spread: the 0 above comes from exact replays, not from
  # the analysis. Reruns deviate by up to 2 %, so it stays under 5 %.
  LUMEN_SIMSDK_RERUNS=vary "$LUMEN" profile -n pv -w "$TMP/pv" -- "$APP" -g 2 "$VCOPY:3" >/dev/null 2>"$TMP/err" ||
    fail "profile with varying reruns: $(cat "$TMP/err")"
  spread_json "$TMP/pv"
  python3 -c '
import json, sys
sp = json.load(open(sys.argv[1]))["spread"]
k = sp["kernels"][0]
assert 0 < k["max"] < 0.05, k' "$TMP/spread.json" || fail "app replay of varying reruns reports no spread"
  expect_out "column (0 here)"
  ! grep -q "sets-disagree" "$TMP/out" || fail "app replay fires sets-disagree"
  ;;
vcopy_instance_MI200 | vcopy_instance_MI300X)
  rec=MI200 arch=gfx90a
  [ "$NAME" = vcopy_instance_MI300X ] && rec=MI300X_A1 arch=gfx942
  export LUMEN_SIM_RECORDING=$WL/vcopy/$rec
  sets=$(n_sets $arch)
  [ "$sets" -gt 1 ] || fail "plan: $sets sets"
  # Three rows need three full cycles of sets: 3 x sets launches in one run.
  run profile -n vcopy -w "$TMP/p" --replay instance -- "$APP" -g 2 "$VCOPY:$((3 * sets)):1048576:256"
  expect_status 0
  same "$(q p "SELECT COUNT(*) FROM profile_run")" 1 "runs"
  same "$(q p "SELECT COUNT(*) FROM profile_record WHERE set_id != selected % $sets")" 0 "cycling"
  same "$(q p "SELECT COUNT(*) FROM profile_record WHERE row_group != selected / $sets")" 0 "rows"
  check_values_in_set p
  expect_err "3 dispatches, $sets counter sets, 1 application run"
  # Successive instances are different executions: the counter every set
  # carries differs between the sets of one row, and the tables are not
  # the recording's (which app replay reproduces).
  [ "$(q p "SELECT COUNT(DISTINCT v.value) FROM profile_value v JOIN profile_record r ON r.workload_id = v.workload_id
      AND r.run_id = v.run_id AND r.pid = v.pid AND r.dispatch_id = v.dispatch_id WHERE r.row_group = 0 AND v.column_name = 'GRBM_GUI_ACTIVE'")" -gt 1 ] ||
    fail "GRBM_GUI_ACTIVE is the same in every set of a row: instances repeat one execution"
  # shellcheck disable=SC2086
  "$GOLDEN" "$LUMEN" "$SHARED" "$SHARED/golden/vcopy/$rec" --workload "$TMP/p" --ignore 1.1:workload_name \
    --ignore 1.1:command --ignore 1.1:timestamp $HOST_IGNORE >"$TMP/golden" 2>&1 && fail "instance cycling reproduced the recording exactly"
  run analyze -w "$TMP/p"
  expect_status 0
  expect_out "Sets differ"
  expect_out "[sets-disagree]"
  # The spread lumen reports lies where the recording puts it: each row
  # replays the 3 recorded dispatches 4 times, the replays deviating by up
  # to 2 % from them.
  recorded vecCopy 3 "$WL/vcopy/$rec/pmc_perf.csv" >"$TMP/rec"
  spread_json "$TMP/p"
  python3 -c '
import json, sys
rec = [list(map(float, l.split())) for l in open(sys.argv[2])]
k = json.load(open(sys.argv[1]))["spread"]["kernels"]
assert len(k) == 1 and k[0]["rows"] == 3 and k[0]["rows_over"] == 3, k
for i, name in enumerate(["GRBM_GUI_ACTIVE", "duration"]):
    v = [r[i] for r in rec]
    if min(v) <= 0:  # MI300X_A1 holds timestamps rounded to 10 us
        assert k[0]["spread"][name] is None, k[0]
        continue
    lo = (0.98 * max(v) - 1.02 * min(v)) / (1.02 * max(v))
    hi = (1.02 * max(v) - 0.98 * min(v)) / (0.98 * min(v))
    got = k[0]["spread"][name]
    assert lo <= got <= hi and got > 0, (name, lo, got, hi)' "$TMP/spread.json" "$TMP/rec" || fail "spread not within the recording's bounds"
  ;;
spread_mix_instance)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  # Twelve instances of fill make one row; the simulated device replays the
  # first twelve recorded fill dispatches, exactly. The spread lumen
  # reports is the one computed here from the recording's CSV.
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  sets=$(n_sets gfx90a)
  run profile -n sp -w "$TMP/p" --replay instance -- "$APP" -g 2 "fill:$sets"
  expect_status 0
  recorded __amd_rocclr_fillBufferAligned "$sets" "$WL/_mix/mix_MI200/pmc_perf.csv" >"$TMP/rec"
  # What the workload holds: one execution per set, with its duration and
  # GRBM_GUI_ACTIVE, in the recording's order.
  q p "SELECT v.value || ' ' || e.duration_ns FROM execution e JOIN execution_value v ON v.workload_id = e.workload_id
      AND v.row = e.row AND v.set_id = e.set_id WHERE v.name = 'GRBM_GUI_ACTIVE' ORDER BY e.set_id" >"$TMP/held"
  same "$(awk '{ printf "%.1f %.1f\n", $1, $2 }' "$TMP/held")" "$(awk '{ printf "%.1f %.1f\n", $1, $2 }' "$TMP/rec")" \
    "executions held against the recording"
  spread_json "$TMP/p"
  python3 -c '
import json, sys
rec = [list(map(float, l.split())) for l in open(sys.argv[2])]
d = json.load(open(sys.argv[1]))
k = d["spread"]["kernels"]
assert len(k) == 1 and k[0]["name"] == "fill" and k[0]["rows"] == 1, k
for i, name in enumerate(["GRBM_GUI_ACTIVE", "duration"]):
    v = [r[i] for r in rec]
    want = (max(v) - min(v)) / (sum(v) / len(v))
    got = k[0]["spread"][name]
    assert want > 0.05 and abs(got - want) <= 1e-9 * want, (name, got, want)
rows = [r for p in d["panels"] for t in p["tables"] for r in t["rows"]]
flagged = [r for r in rows if r.get("sets_differ")]
assert flagged and d["spread"]["flagged_metrics"] == len(flagged), (len(flagged), d["spread"]["flagged_metrics"])
assert all(r["spread"] > 0.05 for r in flagged)
by_id = {r["id"]: r for r in rows}
# A metric whose counters share one set (VALU active threads: two SQ
# counters of one set) is not flagged, however much the other sets differ;
# one that divides by the duration (the mean over every set) is.
assert "spread" not in by_id["2.1.13"], by_id["2.1.13"]
assert by_id["2.1.2"]["sets_differ"], by_id["2.1.2"]' "$TMP/spread.json" "$TMP/rec" || fail "reported spread"
  run analyze -w "$TMP/p" --summary
  expect_status 0
  expect_out "[sets-disagree]"
  run analyze -w "$TMP/p" -b 2.1
  expect_status 0
  expect_out "Sets differ"
  expect_out "Execution spread: each dispatch row combines $sets executions"
  ;;
vcopy_auto)
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  sets=$(n_sets gfx90a)
  # Three instances cycle three sets per run: instance cycling alone
  # leaves the row incomplete and says so...
  run profile -n vi -w "$TMP/vi" --replay instance -- "$APP" -g 2 "$VCOPY:3"
  expect_status 1
  expect_err "no selected dispatch got all $sets counter sets"
  expect_err "misses $((sets - 3)) of $sets sets (first: set 3)"
  # ... and auto fills the gaps with ceil((sets - 3) / 3) more runs.
  run profile -n va -w "$TMP/va" --replay auto -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  extra=$(((sets - 3 + 2) / 3))
  same "$(q va "SELECT COUNT(*) FROM profile_run WHERE mode = 'assigned'")" "$extra" "extra runs"
  same "$(q va "SELECT COUNT(*) FROM profile_record WHERE set_id >= 0")" "$sets" "records with a set"
  same "$(q va "SELECT COUNT(DISTINCT set_id) FROM profile_record WHERE set_id >= 0")" "$sets" "sets covered"
  check_values_in_set va
  expect_err "1 dispatches, $sets counter sets, $((extra + 1)) application runs"
  # --resume --replay auto completes the instance profile the same way.
  run profile -w "$TMP/vi" --resume --replay auto
  expect_status 0
  same "$(q vi "SELECT COUNT(*) FROM profile_run WHERE mode = 'assigned'")" "$extra" "resumed extra runs"
  run analyze -w "$TMP/vi" --list-stats
  expect_status 0
  ;;
multi_kernel_app)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  run profile -n mk -w "$TMP/p" -- "$APP" -g 2 fill:30 add:13 reduce:4
  expect_status 0
  sets=$(q p "SELECT COUNT(DISTINCT set_id) FROM profile_set")
  same "$(q p "SELECT kernel || ':' || COUNT(*) FROM profile_record WHERE run_id = 1 GROUP BY kernel ORDER BY kernel")" \
    "$(printf '%s\n' add:13 fill:30 reduce:4)" "dispatches per kernel"
  same "$(q p "SELECT COUNT(*) FROM profile_record WHERE set_id != run_id - 1")" 0 "set per run"
  check_values_in_set p
  run analyze -w "$TMP/p" --format csv -o "$TMP/csv" --list-stats
  expect_status 0
  same "$(tail -n +2 "$TMP/csv/0.1.csv" | cut -d, -f2,3 | sort)" "$(printf '%s\n' add,13 fill,30 reduce,4)" "top kernels"
  # Dispatch rows in launch order: iteration i launches fill, add, reduce.
  same "$(sed -n 2,5p "$TMP/csv/0.2.csv" | cut -d, -f2,3)" "$(printf '%s\n' 0,fill 1,add 2,reduce 3,fill)" "dispatch order"
  ;;
multi_kernel_instance)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  sets=$(n_sets gfx90a)
  run profile -n mk -w "$TMP/p" --replay instance -- "$APP" -g 2 fill:30 add:13 reduce:4
  expect_status 0
  same "$(q p "SELECT COUNT(*) FROM profile_run")" 1 "runs"
  # Each kernel cycles its own sets: instance i of a kernel gets set i % sets.
  same "$(q p "SELECT COUNT(*) FROM profile_record WHERE set_id != instance % $sets")" 0 "per-kernel cycling"
  check_values_in_set p
  # Complete rows: floor(count / sets) per kernel; the rest is reported.
  expect_err "reduce from instance 0 misses $((sets - 4)) of $sets sets"
  run analyze -w "$TMP/p" --format csv -o "$TMP/csv" --list-stats
  expect_status 0
  expected=""
  for kc in add:13 fill:30 reduce:4; do
    r=$((${kc#*:} / sets))
    [ "$r" -gt 0 ] && expected="$expected${kc%:*},$r
"
  done
  same "$(tail -n +2 "$TMP/csv/0.1.csv" | cut -d, -f2,3 | sort)" "$(printf '%s' "$expected")" "complete rows"
  ;;
threads)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  sets=$(n_sets gfx90a)
  run profile -n th -w "$TMP/p" --replay instance -- "$APP" -g 2 -t 4 "fill:$sets" "add:$sets"
  expect_status 0
  # 4 threads x sets launches per kernel; the per-kernel numbering is one
  # sequence across threads, and cycling follows it.
  same "$(q p "SELECT COUNT(DISTINCT tid) FROM profile_record")" 4 "threads"
  same "$(q p "SELECT kernel || ':' || COUNT(DISTINCT selected) || ':' || MIN(selected) || ':' || MAX(selected) FROM profile_record GROUP BY kernel ORDER BY kernel")" \
    "$(printf '%s\n' "add:$((4 * sets)):0:$((4 * sets - 1))" "fill:$((4 * sets)):0:$((4 * sets - 1))")" "instance numbers"
  same "$(q p "SELECT COUNT(*) FROM profile_record WHERE set_id != selected % $sets")" 0 "cycling"
  check_values_in_set p
  run analyze -w "$TMP/p" --format csv -o "$TMP/csv" --list-stats
  expect_status 0
  same "$(tail -n +2 "$TMP/csv/0.1.csv" | cut -d, -f2,3 | sort)" "$(printf '%s\n' add,4 fill,4)" "rows"
  ;;
processes)
  # An application with a process per GPU: both processes' dispatches are
  # kept, each with its process id and GPU, in application replay (the
  # same process lines up across runs) and in instance cycling (each
  # process cycles its own instances).
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  sets=$(n_sets gfx90a)
  run profile -n pr -w "$TMP/app" -- "$APP" -g 0 --procs 2 "$VCOPY:3:1048576:256"
  expect_status 0
  expect_err "6 dispatches, $sets counter sets, $sets application runs"
  same "$(q app "SELECT COUNT(*) FROM profile_process WHERE n_dispatches = 3 AND finished = 1")" "$((2 * sets))" "processes per run"
  same "$(q app "SELECT COUNT(*) FROM profile_record")" "$((6 * sets))" "records"
  same "$(q app "SELECT COUNT(DISTINCT run_id || ':' || pid) FROM profile_record")" "$((2 * sets))" "records by process"
  same "$(q app "SELECT gpu_id || ':' || COUNT(*) || ':' || COUNT(DISTINCT pid) FROM dispatch GROUP BY gpu_id ORDER BY gpu_id")" \
    "$(printf '0:3:1\n1:3:1')" "rows per GPU"
  # Each row's process is the one that ran on its GPU in the first run.
  same "$(q app "SELECT COUNT(*) FROM dispatch d JOIN profile_process p ON p.workload_id = d.workload_id AND p.run_id = 1
      AND p.pid = d.pid WHERE p.gpus != CAST(d.gpu_id AS TEXT)")" 0 "pid and GPU of a row"
  check_values_in_set app
  run analyze -w "$TMP/app" --format csv -o "$TMP/csv" --list-stats
  expect_status 0
  same "$(tail -n +2 "$TMP/csv/0.1.csv" | sed 's/.*\]",\([0-9]*\),.*/\1/')" 6 "analyze: every dispatch"
  # Processes started by a shell (exec), in instance cycling.
  printf '#!/bin/sh\n"%s" -g 0 "%s:%s" &\n"%s" -g 1 "%s:%s"\nwait\n' "$APP" "$VCOPY" "$((2 * sets))" "$APP" "$VCOPY" "$((2 * sets))" >"$TMP/two.sh"
  chmod +x "$TMP/two.sh"
  run profile -n pi -w "$TMP/inst" --replay instance -- "$TMP/two.sh"
  expect_status 0
  expect_err "4 dispatches, $sets counter sets, 1 application run"
  same "$(q inst "SELECT COUNT(DISTINCT pid) || ':' || COUNT(*) FROM profile_record")" "2:$((4 * sets))" "records of both"
  same "$(q inst "SELECT COUNT(*) FROM profile_record WHERE set_id != selected % $sets")" 0 "cycling per process"
  same "$(q inst "SELECT gpu_id || ':' || COUNT(*) FROM dispatch GROUP BY gpu_id ORDER BY gpu_id")" "$(printf '0:2\n1:2')" "rows per GPU"
  check_values_in_set inst
  ;;
mpi_inside)
  mpi_setup
  # lumen inside each rank: one part per rank (DIR/rank.R), none waits for
  # another; rank 2 runs the kernel one cycle more (uneven kernel counts).
  $MPIRUN -np 4 "$LUMEN" profile -n m -w "$TMP/m" --replay instance -- "$APP" -g local --extra-rank 2 "$sets" \
    "$VCOPY:$((2 * sets))" >"$TMP/out" 2>"$TMP/err" || fail "mpirun: $(cat "$TMP/err")"
  for r in 0 1 2 3; do
    [ -f "$TMP/m/rank.$r/lumen.db" ] || fail "no part for rank $r: $(ls "$TMP/m")"
    rows=2
    [ $r = 2 ] && rows=3
    same "$(q "m/rank.$r" "SELECT COUNT(*) || ':' || MIN(rank) || ':' || MAX(rank) || ':' || MIN(gpu_id) || ':' || COUNT(DISTINCT pid) FROM dispatch")" \
      "$rows:$r:$r:$r:1" "rank $r: rows, rank, GPU (its local rank), process"
    same "$(q "m/rank.$r" "SELECT rank || ':' || size || ':' || launcher || ':' || finished FROM profile_process WHERE slot >= 0")" \
      "$r:4:openmpi:1" "rank $r: its process"
    grep -q "^lumen info: $TMP/m/rank.$r: $rows dispatches" "$TMP/err" || fail "rank $r's summary: $(cat "$TMP/err")"
  done
  # The parts read as one workload: every rank's rows, the rank table.
  run analyze -w "$TMP/m" --format json
  expect_status 0
  cp "$TMP/out" "$TMP/merged.json"
  rank_table_check "$TMP/merged.json" m 0 1 2 3
  run analyze -w "$TMP/m" --no-pager --width 100
  expect_status 0
  expect_out "Ranks: 4 MPI ranks in the selection; slowest rank 2"
  # --rank 1 is rank 1's part alone (no rank table: one rank).
  run analyze -w "$TMP/m" --rank 1 --format json
  expect_status 0
  cp "$TMP/out" "$TMP/r1.json"
  run analyze -w "$TMP/m/rank.1" --format json
  expect_status 0
  same_panels "$TMP/r1.json" "$TMP/out" "--rank 1 and rank.1 alone"
  run analyze -w "$TMP/m" --rank 1 --no-pager
  grep -q '^Ranks:' "$TMP/out" && fail "a rank table for one rank"
  # Instances are counted per rank, as each rank's part counts them.
  run analyze -w "$TMP/m" --rank 2 --instance 1: --format json
  expect_status 0
  cp "$TMP/out" "$TMP/r2.json"
  run analyze -w "$TMP/m/rank.2" --instance 1: --format json
  same_panels "$TMP/r2.json" "$TMP/out" "--rank 2 --instance 1: and rank.2 alone"
  run analyze -w "$TMP/m" --rank 1:3 --format json
  expect_status 0
  rank_table_check "$TMP/out" m 1 2
  run analyze -w "$TMP/m" --rank 7
  expect_status 1
  expect_err "--rank: no dispatch of the rank(s) asked for (ranks in the data: 0:4)"
  one_line_err
  # A part that is not a workload: one line naming it, not a crash.
  cp -r "$TMP/m" "$TMP/m_bad"
  mkdir "$TMP/m_bad/rank.4"
  run analyze -w "$TMP/m_bad"
  expect_status 1
  expect_err "m_bad/rank.4: cannot find pmc_perf.csv"
  one_line_err
  printf 'not a database' >"$TMP/m_bad/rank.4/lumen.db"
  run analyze -w "$TMP/m_bad"
  expect_status 1
  expect_err "m_bad/rank.4/lumen.db"
  one_line_err
  # A copied part (rank.1 again as rank.4): its dispatches say rank 1, so
  # it is refused, named, rather than counting rank 1 twice.
  cp -r "$TMP/m" "$TMP/m_copy"
  cp -r "$TMP/m_copy/rank.1" "$TMP/m_copy/rank.4"
  run analyze -w "$TMP/m_copy"
  expect_status 1
  one_line_err
  expect_err "m_copy/rank.4: field 'dispatch.rank': its dispatches were recorded by rank 1, not 4 (a copied or renamed part?)"
  # Missing parts are named; the others are analysed.
  cp -r "$TMP/m" "$TMP/m_gap"
  rm -rf "$TMP/m_gap/rank.1" "$TMP/m_gap/rank.2"
  run analyze -w "$TMP/m_gap"
  expect_status 0
  expect_err "m_gap: 2 of ranks 0 to 3 have no rank.R part (ranks 1, 2): their dispatches are not in the workload"
  # A host name is the process's own text: shown escaped in the rank table.
  cp -r "$TMP/m" "$TMP/m_host"
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE dispatch SET host = ?", ("\x1b[31mevil\x07",)); c.commit()' \
    "$TMP/m_host/rank.0/lumen.db" || fail "update the host"
  run analyze -w "$TMP/m_host"
  expect_status 0
  ! grep -q "$(printf '\033')" "$TMP/out" || fail "a raw escape byte in the rank table"
  expect_out '\x1b[31mevil\x07'
  # A filter that matches nothing in every rank: each rank's part is
  # removed (the folder the ranks share stays).
  $MPIRUN -np 2 "$LUMEN" profile -q -n f -w "$TMP/f" -k nomatch -- "$APP" -g local "$VCOPY:3" >"$TMP/out" 2>"$TMP/err" &&
    fail "mpirun succeeded with a filter that matches nothing"
  for r in 0 1; do
    expect_err "lumen profile (rank $r of 2): $TMP/f/rank.$r: -k nomatch selected none of the 1 kernel"
  done
  [ -z "$(ls -A "$TMP/f")" ] || fail "parts left by a filter that matches nothing: $(ls -A "$TMP/f")"
  # Application replay inside two ranks: every rank runs its own passes.
  # (Both on GPU 2, the recording's: the tables are the recording's.)
  $MPIRUN -np 2 "$LUMEN" profile -n a -w "$TMP/a" -- "$APP" -g 2 "$VCOPY:3:1048576:256" >"$TMP/out" 2>"$TMP/err" ||
    fail "mpirun (app replay): $(cat "$TMP/err")"
  for r in 0 1; do
    same "$(q "a/rank.$r" "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" "$sets" "rank $r: runs"
    same "$(q "a/rank.$r" "SELECT COUNT(*) || ':' || MIN(rank) FROM dispatch")" "3:$r" "rank $r: rows"
    check_values_in_set "a/rank.$r"
    golden_equal "$TMP/a/rank.$r" vcopy/MI200
  done
  ;;
mpi_outside)
  # mpirun itself runs with the tool library preloaded; in sanitizer builds
  # LeakSanitizer then reports Open MPI's own leaks from plugins it has
  # already unloaded (no module to suppress by): leak checking is left to
  # the other cases here.
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  mpi_setup
  # lumen outside mpirun: one workload, every rank's dispatches with its
  # rank, host, pid and GPU; rank 1 runs the kernel three more times.
  run profile -n o -w "$TMP/o" -- $MPIRUN -np 3 "$APP" -g local --extra-rank 1 3 "$VCOPY:3:1048576:256"
  expect_status 0
  expect_err "12 dispatches, $sets counter sets, $sets application runs"
  same "$(q o "SELECT rank || ':' || COUNT(*) || ':' || MIN(gpu_id) || ':' || COUNT(DISTINCT pid) || ':' || (MIN(host) = MAX(host)) FROM dispatch GROUP BY rank ORDER BY rank")" \
    "$(printf '0:3:0:1:1\n1:6:1:1:1\n2:3:2:1:1')" "rows per rank"
  same "$(q o "SELECT COUNT(*) FROM profile_process WHERE slot >= 0 AND slot = rank AND size = 3 AND launcher = 'openmpi' AND finished = 1")" \
    "$((3 * sets))" "ranks of every run"
  check_values_in_set o
  # One database with three ranks: the same rank table as parts give.
  run analyze -w "$TMP/o" --format json
  expect_status 0
  cp "$TMP/out" "$TMP/o.json"
  rank_table_check "$TMP/o.json" o 0 1 2
  run analyze -w "$TMP/o" --rank 1 --format json
  expect_status 0
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["workloads"][0]["dispatches_total"] == 12 and "ranks" not in d, d.keys()' "$TMP/out" ||
    fail "--rank 1 of one database"
  run profile -n oi -w "$TMP/oi" --replay instance -- $MPIRUN -np 2 "$APP" -g local "$VCOPY:$sets"
  expect_status 0
  same "$(q oi "SELECT rank || ':' || COUNT(*) FROM dispatch GROUP BY rank ORDER BY rank")" "$(printf '0:1\n1:1')" "instance cycling per rank"
  ;;
mpi_split)
  mpi_setup
  # --split ranks: 4 ranks, each collecting every 4th set of the plan, on
  # the same recorded dispatches (-g 2, the recording's GPU) as one process
  # collecting every set; merged, they give the same tables.
  kernel="$VCOPY:3:1048576:256"
  run profile -n s -w "$TMP/single" -- "$APP" -g 2 "$kernel"
  expect_status 0
  $MPIRUN -np 4 "$LUMEN" profile --split ranks -n s -w "$TMP/split" -- "$APP" -g 2 "$kernel" >"$TMP/out" 2>"$TMP/err" ||
    fail "mpirun --split ranks: $(cat "$TMP/err")"
  all_counters=$(q single "SELECT set_id || ':' || GROUP_CONCAT(counter, ',') FROM (SELECT set_id, counter FROM profile_set ORDER BY set_id, counter) GROUP BY set_id ORDER BY set_id")
  for r in 0 1 2 3; do
    d="split/rank.$r"
    same "$(q "$d" "SELECT GROUP_CONCAT(value, ',') FROM (SELECT value FROM profile_option WHERE key = 'split_set' ORDER BY position)")" \
      "$r,$((r + 4)),$((r + 8))" "rank $r's sets of the plan"
    same "$(q "$d" "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" 3 "rank $r: application runs"
    # Its set k is the plan's set split_set[k], counter for counter.
    mine=$(q "$d" "SELECT g || ':' || GROUP_CONCAT(counter, ',') FROM (SELECT o.value AS g, p.set_id AS k, p.counter AS counter
        FROM profile_set p JOIN profile_option o ON o.key = 'split_set' AND o.position = p.set_id ORDER BY p.set_id, p.counter)
        GROUP BY k ORDER BY k")
    for line in $mine; do
      echo "$all_counters" | grep -qxF "$line" || fail "rank $r collected '$line', not a set of the plan"
    done
    check_values_in_set "$d"
  done
  # The ranks really collected different counters.
  c0=$(q split/rank.0 "SELECT GROUP_CONCAT(column_name, ',') FROM (SELECT DISTINCT column_name FROM profile_value ORDER BY 1)")
  c1=$(q split/rank.1 "SELECT GROUP_CONCAT(column_name, ',') FROM (SELECT DISTINCT column_name FROM profile_value ORDER BY 1)")
  [ "$c0" != "$c1" ] || fail "ranks 0 and 1 collected the same counters"
  run analyze -w "$TMP/single" --format json
  cp "$TMP/out" "$TMP/single.json"
  run analyze -w "$TMP/split" --format json
  expect_status 0
  cp "$TMP/out" "$TMP/split.json"
  PYTHONPATH="$SRCDIR" python3 - "$TMP/single.json" "$TMP/split.json" <<'PY' || fail "the split ranks' tables differ from one process's"
import json, sys
from split_tables import check_same_tables
a, b = (json.load(open(p)) for p in sys.argv[1:3])
n_tables = check_same_tables(a, b, ("workload_name", "timestamp"))
assert b["split"] == {"ranks": 4, "sets": 12, "set_rank": [g % 4 for g in range(12)]}, b["split"]
assert "ranks" not in b
print("split over 4 ranks: %d tables equal to one process's" % n_tables)
PY
  run analyze -w "$TMP/split" --no-pager
  expect_out "rank 1: sets 1, 5, 9"
  run analyze -w "$TMP/split" --rank 1
  expect_status 1
  expect_err "combined into one view"
  # 8 ranks, 12 sets: ceil(12 / 8) = 2 application runs; with instance
  # cycling, one.
  $MPIRUN -np 8 "$LUMEN" profile --split ranks -n e -w "$TMP/eight" -- "$APP" -g 2 "$kernel" >"$TMP/out" 2>"$TMP/err" ||
    fail "8 ranks: $(cat "$TMP/err")"
  runs=0
  for r in 0 1 2 3 4 5 6 7; do
    n=$(q "eight/rank.$r" "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")
    [ "$n" -gt "$runs" ] && runs=$n
  done
  echo "8 ranks x $sets sets (--split ranks, application replay): $runs application runs"
  same "$runs" 2 "application runs of 8 ranks"
  run analyze -w "$TMP/eight" --format json
  expect_status 0
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["split"]["set_rank"] == [g % 8 for g in range(12)], d["split"]' "$TMP/out" ||
    fail "8 ranks: which rank collected each set"
  $MPIRUN -np 8 "$LUMEN" profile --split ranks --replay instance -n ei -w "$TMP/eight_i" -- "$APP" -g 2 "$VCOPY:4" \
    >"$TMP/out" 2>"$TMP/err" || fail "8 ranks, instance cycling: $(cat "$TMP/err")"
  runs=0
  for r in 0 1 2 3 4 5 6 7; do
    n=$(q "eight_i/rank.$r" "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")
    [ "$n" -gt "$runs" ] && runs=$n
  done
  echo "8 ranks x $sets sets (--split ranks, instance cycling): $runs application run"
  same "$runs" 1 "application runs of 8 ranks cycling instances"
  # Ranks with two sets make 2 rows of 4 instances, ranks with one 4: the
  # rows are not the same dispatches, so they are not combined.
  run analyze -w "$TMP/eight_i" --format json
  expect_status 0
  expect_err "ran different dispatches, so their counter sets are not combined"
  expect_err "rank 4 has 4 dispatch rows, rank 0 2"
  # Instance cycling inside 4 ranks: 3 sets each, 2 rows of 3 instances;
  # combined, each row's 12 executions come from 4 ranks, and the spread of
  # what every set measured is reported as for one process's cycling.
  $MPIRUN -np 4 "$LUMEN" profile --split ranks --replay instance -n fi -w "$TMP/four_i" -- "$APP" -g 2 "$VCOPY:6" \
    >"$TMP/out" 2>"$TMP/err" || fail "4 ranks, instance cycling: $(cat "$TMP/err")"
  spread_json "$TMP/four_i"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["spread"]; assert s["sets"] == 12 and s["kernels"][0]["rows"] == 2 and s["kernels"][0]["max"] > 0, s' \
    "$TMP/spread.json" || fail "4 ranks cycling: the spread across ranks"
  # Ranks that ran other kernels are named, and not combined (the test
  # application's short kernel names stand for the recording's kernels by
  # position).
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200 LUMEN_SIMSDK_MAP=position
  $MPIRUN -np 1 "$LUMEN" profile --split ranks -n k -w "$TMP/kern" -- "$APP" -g 2 fill:2 : \
    -np 1 "$LUMEN" profile --split ranks -n k -w "$TMP/kern" -- "$APP" -g 2 add:2 >"$TMP/out" 2>"$TMP/err" ||
    fail "two kernels: $(cat "$TMP/err")"
  run analyze -w "$TMP/kern" --format json
  expect_status 0
  expect_err "row 0: rank 1 ran add (Grid_Size 1048576"
  expect_err "rank 0 fill (Grid_Size 1048576"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ranks"]["n_ranks"] == 2 and "split" not in d' "$TMP/out" ||
    fail "two kernels: each rank's rows"
  ;;
mpi_clocks)
  mpi_setup
  # Three ranks on one GPU: only local rank 0 samples its clocks (GPU 0
  # modulo 3 ranks); the others take no readings, say so, and estimate.
  $MPIRUN -np 3 "$LUMEN" profile -n c -w "$TMP/shared" --replay instance -- "$APP" -g 0 "$VCOPY:$sets" \
    >"$TMP/out" 2>"$TMP/err" || fail "mpirun: $(cat "$TMP/err")"
  same "$(q shared/rank.0 "SELECT COUNT(*) > 0 FROM clock_sample WHERE gpu_id = 0")" 1 "rank 0 samples GPU 0"
  same "$(q shared/rank.0 "SELECT source FROM dispatch_clock")" "simulated device" "rank 0's clock"
  for r in 1 2; do
    same "$(q "shared/rank.$r" "SELECT COUNT(*) FROM clock_sample")" 0 "rank $r's clock samples of the shared GPU"
    same "$(q "shared/rank.$r" "SELECT source FROM dispatch_clock")" estimate "rank $r's clock"
    q "shared/rank.$r" "SELECT note FROM profile_telemetry" | grep -q "local rank $r samples those whose node-wide id modulo 3 is $r" ||
      fail "rank $r does not say who samples: $(q "shared/rank.$r" "SELECT note FROM profile_telemetry")"
  done
  # One GPU per rank: every rank samples its own.
  $MPIRUN -np 3 "$LUMEN" profile -n l -w "$TMP/own" --replay instance -- "$APP" -g local "$VCOPY:$sets" \
    >"$TMP/out" 2>"$TMP/err" || fail "mpirun: $(cat "$TMP/err")"
  for r in 0 1 2; do
    same "$(q "own/rank.$r" "SELECT COUNT(*) > 0 FROM clock_sample WHERE gpu_id = $r")" 1 "rank $r samples its GPU $r"
    same "$(q "own/rank.$r" "SELECT source FROM dispatch_clock")" "simulated device" "rank $r's clock"
  done
  # A GPU id the process sees through ROCR_VISIBLE_DEVICES is its node-wide
  # id there: rank 1 sees GPU 2 as its device 0 and samples it (2 mod 3 is
  # not 1, so rank 2 would; rank 1 leaves it).
  $MPIRUN -np 3 -x ROCR_VISIBLE_DEVICES=2 "$LUMEN" profile -n v -w "$TMP/vis" --replay instance -- "$APP" -g 0 \
    "$VCOPY:$sets" >"$TMP/out" 2>"$TMP/err" || fail "mpirun: $(cat "$TMP/err")"
  same "$(q vis/rank.2 "SELECT COUNT(*) > 0 FROM clock_sample")" 1 "rank 2 samples node GPU 2"
  same "$(q vis/rank.0 "SELECT COUNT(*) FROM clock_sample")" 0 "rank 0 leaves node GPU 2"
  ;;
mpi_split_outside)
  # mpirun itself loads the tool library here (see mpi_outside).
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  mpi_setup
  # --split ranks with lumen outside mpirun: the processes take their
  # shares of the plan from their ranks, lumen learns the job's size from
  # the first run and writes the ranks' parts as lumen inside mpirun does;
  # the tables are those of one process collecting every set, and of the
  # inside-mode split, on the same recorded dispatches (-g 2).
  kernel="$VCOPY:3:1048576:256"
  run profile -n s -w "$TMP/single" -- "$APP" -g 2 "$kernel"
  expect_status 0
  run analyze -w "$TMP/single" --format json
  expect_status 0
  cp "$TMP/out" "$TMP/single.json"
  $MPIRUN -np 4 "$LUMEN" profile --split ranks -n s -w "$TMP/inside" -- "$APP" -g 2 "$kernel" >"$TMP/out" 2>"$TMP/err" ||
    fail "mpirun lumen --split ranks: $(cat "$TMP/err")"
  run analyze -w "$TMP/inside" --format json
  expect_status 0
  cp "$TMP/out" "$TMP/inside.json"
  all_counters=$(q single "SELECT set_id || ':' || GROUP_CONCAT(counter, ',') FROM (SELECT set_id, counter FROM profile_set ORDER BY set_id, counter) GROUP BY set_id ORDER BY set_id")
  # outside_split NAME NP RUNS: the profile, each rank's share, the tables.
  outside_split() {
    local name=$1 np=$2 runs=$3 r g want n
    run profile --split ranks -n s -w "$TMP/$name" -- $MPIRUN -np "$np" "$APP" -g 2 "$kernel"
    expect_status 0
    expect_err "$np ranks, $sets counter sets, $runs application runs"
    echo "$np ranks x $sets sets, lumen outside mpirun: $runs application runs"
    for r in $(seq 0 $((np - 1))); do
      want=""
      n=0
      for g in $(seq 0 $((sets - 1))); do
        if { [ "$np" -lt "$sets" ] && [ $((g % np)) -eq "$r" ]; } || { [ "$np" -ge "$sets" ] && [ "$g" -eq $((r % sets)) ]; }; then
          want="$want${want:+,}$g"
          n=$((n + 1))
        fi
      done
      d="$name/rank.$r"
      same "$(q "$d" "SELECT GROUP_CONCAT(value, ',') FROM (SELECT value FROM profile_option WHERE key = 'split_set' ORDER BY position)")" \
        "$want" "$name: rank $r's sets of the plan"
      same "$(q "$d" "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" "$n" "$name: rank $r's runs"
      same "$(q "$d" "SELECT COUNT(DISTINCT rank) || ':' || MIN(rank) FROM profile_process WHERE n_dispatches > 0")" "1:$r" \
        "$name: rank $r's part holds its own process's records"
      # Its set k is the plan's set split_set[k], counter for counter.
      mine=$(q "$d" "SELECT g || ':' || GROUP_CONCAT(counter, ',') FROM (SELECT o.value AS g, p.set_id AS k, p.counter AS counter
          FROM profile_set p JOIN profile_option o ON o.key = 'split_set' AND o.position = p.set_id ORDER BY p.set_id, p.counter)
          GROUP BY k ORDER BY k")
      for line in $mine; do
        echo "$all_counters" | grep -qxF "$line" || fail "$name: rank $r collected '$line', not a set of the plan"
      done
      check_values_in_set "$d"
    done
    c0=$(q "$name/rank.0" "SELECT GROUP_CONCAT(column_name, ',') FROM (SELECT DISTINCT column_name FROM profile_value ORDER BY 1)")
    c1=$(q "$name/rank.1" "SELECT GROUP_CONCAT(column_name, ',') FROM (SELECT DISTINCT column_name FROM profile_value ORDER BY 1)")
    [ "$c0" != "$c1" ] || fail "$name: ranks 0 and 1 collected the same counters"
    run analyze -w "$TMP/$name" --format json
    expect_status 0
    cp "$TMP/out" "$TMP/$name.json"
    PYTHONPATH="$SRCDIR" python3 - "$TMP/single.json" "$TMP/$name.json" "$np" "$sets" <<'PY' || fail "$name: the outside split's tables differ from one process's"
import json, sys
from split_tables import check_same_tables
a, b = (json.load(open(p)) for p in sys.argv[1:3])
np_, sets = int(sys.argv[3]), int(sys.argv[4])
# The name, time and command (mpirun's) differ.
n_tables = check_same_tables(a, b, ("workload_name", "timestamp", "command"))
want = [g % np_ if np_ < sets else g for g in range(sets)]
assert b["split"] == {"ranks": np_, "sets": sets, "set_rank": want}, b["split"]
print("outside split over %d ranks: %d tables equal to one process's" % (np_, n_tables))
PY
  }
  outside_split o4 4 3
  outside_split o2 2 6
  outside_split o5 5 3
  # Four ranks outside and inside mpirun: the same analysis.
  python3 - "$TMP/inside.json" "$TMP/o4.json" <<'PY' || fail "outside and inside splits differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    for p in d["panels"]:
        for t in p["tables"]:
            if t.get("id") == "1.1":
                t["rows"] = [r for r in t["rows"] if r["cells"][0] not in ("workload_name", "timestamp", "command")]
assert a["panels"] == b["panels"] and a["split"] == b["split"] and a.get("spread") == b.get("spread")
PY
  run analyze -w "$TMP/o4" --no-pager
  expect_status 0
  expect_out "rank 1: sets 1, 5, 9"
  # With instance cycling, one run: each rank cycles its own share.
  run profile --split ranks --replay instance -n si -w "$TMP/oi" -- $MPIRUN -np 4 "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  expect_err "4 ranks, $sets counter sets, 1 application run "
  for r in 0 1 2 3; do
    same "$(q "oi/rank.$r" "SELECT COUNT(*) || ':' || COUNT(DISTINCT set_id) FROM profile_record WHERE set_id >= 0")" "3:3" "instance cycling: rank $r's share"
  done
  run analyze -w "$TMP/oi" --format json
  expect_status 0
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["split"]["set_rank"] == [g % 4 for g in range(12)], d["split"]' "$TMP/out" ||
    fail "instance cycling: which rank collected each set"
  # Ranks that ran other dispatches (MPMD: rank 1 another grid): the
  # warning names the ranks and kernels, and each rank's rows are shown.
  run profile --split ranks -n d -w "$TMP/differ" -- $MPIRUN -np 1 "$APP" -g 2 "$kernel" : -np 1 "$APP" -g 2 "$VCOPY:3:2097152:256"
  expect_status 0
  run analyze -w "$TMP/differ" --format json
  expect_status 0
  expect_err "ran different dispatches"
  expect_err "row 0: rank 1 ran vecCopy(double*, double*, double*, int, int) [clone .kd] (Grid_Size 2097152"
  expect_err "rank 0 vecCopy(double*, double*, double*, int, int) [clone .kd] (Grid_Size 1048576"
  # A crashing rank: the run fails naming it; the others' records stay.
  run profile --split ranks -n c -w "$TMP/crash" -- $MPIRUN -np 3 "$APP" -g 2 --crash-rank 1 "$kernel"
  expect_status 1
  expect_err "rank 1: "
  expect_err "its records end before"
  for r in 0 2; do
    same "$(q "crash/rank.$r" "SELECT COUNT(*) FROM profile_record")" 3 "crash: rank $r's records"
  done
  # Another number of ranks in a later run: a clear error.
  printf '#!/bin/sh\nn=2; [ -e "%s/np_ran" ] && n=3; touch "%s/np_ran"\nexec %s -np $n "$@"\n' "$TMP" "$TMP" "$MPIRUN" >"$TMP/np.sh"
  chmod +x "$TMP/np.sh"
  run profile --split ranks -n n -w "$TMP/np" -- "$TMP/np.sh" "$APP" -g 2 "$kernel"
  expect_status 1
  expect_err "run 2 had 3 ranks, the first run 2"
  # A filter that matches nothing: refused after the first run, and no
  # part or folder is left.
  run profile -q --split ranks -n f -w "$TMP/nomatch/f" -k nomatch -- $MPIRUN -np 2 "$APP" -g 2 "$kernel"
  expect_status 2
  expect_err "lumen profile: $TMP/nomatch/f: -k nomatch selected none of the 1 kernel the application launched"
  expect_err "no workload was written"
  [ ! -e "$TMP/nomatch" ] || fail "--split ranks, a filter that matches nothing: $(find "$TMP/nomatch")"
  # Without MPI ranks, a clear error, and an mpirun that fails before any
  # rank started says so.
  run profile --split ranks -n u -w "$TMP/unranked" -- "$APP" -g 2 "$kernel"
  expect_status 2
  expect_err "no process of the application had an MPI rank"
  run profile --split ranks -n b -w "$TMP/bad_mpirun" -- $MPIRUN --no-such-option -np 2 "$APP" -g 2 "$kernel"
  expect_status 1
  expect_err "before any MPI rank wrote records"
  # Every rank crashes in run 2 (after one launch): the first run stays in
  # the parts, --resume runs 2 and 3, and the tables are the full ones.
  run profile --split ranks -n r -w "$TMP/resumed" -- $MPIRUN -np 4 "$APP" -g 2 --crash-run 2 --crash-after 1 "$kernel"
  expect_status 1
  grep -qF "run 2 (--split ranks, app, each rank's set 1): " "$TMP/err" ||
    fail "run 2's failure: $(grep -v '^simapp' "$TMP/err" | tail -3)"
  # (mpirun stops the other ranks when the first one dies: which ranks'
  # records end early depends on timing.)
  grep -qE "rank [0-3]: its records end before" "$TMP/err" || fail "no crashed rank named: $(cat "$TMP/err")"
  expect_err "lumen profile --resume -w $TMP/resumed"
  for r in 0 1 2 3; do
    same "$(q "resumed/rank.$r" "SELECT group_concat(id || ':' || status, ' ') FROM profile_run")" "1:ok 2:failed" "rank $r's runs kept"
  done
  run analyze -w "$TMP/resumed"
  expect_status 1
  run profile --resume -w "$TMP/resumed"
  expect_status 0
  expect_err "4 ranks, $sets counter sets, 2 application runs"
  for r in 0 1 2 3; do
    same "$(q "resumed/rank.$r" "SELECT group_concat(id || ':' || status || ':' || pass, ' ') FROM profile_run")" \
      "1:ok:0 2:failed:1 3:ok:1 4:ok:2" "rank $r's runs after --resume"
    check_values_in_set "resumed/rank.$r"
  done
  run analyze -w "$TMP/resumed" --format json
  expect_status 0
  cp "$TMP/out" "$TMP/resumed.json"
  python3 - "$TMP/o4.json" "$TMP/resumed.json" <<'PY' || fail "the resumed split differs from the uninterrupted one"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    for p in d["panels"]:
        for t in p["tables"]:
            if t.get("id") == "1.1":
                t["rows"] = [r for r in t["rows"] if r["cells"][0] not in ("workload_name", "timestamp", "command")]
assert a["panels"] == b["panels"] and a["split"] == b["split"]
PY
  run profile --resume -w "$TMP/resumed"
  expect_status 0
  expect_err "nothing to resume"
  # The parts of lumen inside mpirun are resumed there.
  run profile --resume -w "$TMP/inside"
  expect_status 2
  expect_err "resume them there (mpirun -np N lumen profile --resume"
  ;;
mpi_crash)
  mpi_setup
  # A rank that crashes: the others' data is kept and the failure names
  # the rank, with lumen inside and outside mpirun.
  $MPIRUN -np 3 "$LUMEN" profile -n c -w "$TMP/c" --replay instance -- "$APP" -g local --crash-rank 1 \
    "$VCOPY:$sets" >"$TMP/out" 2>"$TMP/err" && fail "mpirun succeeded with a crashing rank"
  grep -q "lumen profile (rank 1 of 3): .*SIGSEGV" "$TMP/err" || fail "rank 1's failure: $(cat "$TMP/err")"
  for r in 0 2; do
    same "$(q "c/rank.$r" "SELECT complete || ':' || n_dispatches FROM workload")" "1:1" "rank $r's part"
    run analyze -w "$TMP/c/rank.$r"
    expect_status 0
  done
  run profile -n co -w "$TMP/co" --replay instance -- $MPIRUN -np 3 "$APP" -g local --crash-rank 1 "$VCOPY:$sets"
  expect_status 1
  expect_err "rank 1, $sets dispatches): its records end before"
  same "$(q co "SELECT rank || ':' || finished || ':' || n_dispatches FROM profile_process WHERE rank IS NOT NULL ORDER BY rank")" \
    "$(printf '0:1:%s\n1:0:%s\n2:1:%s' "$sets" "$sets" "$sets")" "processes of the run"
  same "$(q co "SELECT COUNT(*) FROM profile_record r JOIN profile_process p ON p.workload_id = r.workload_id AND
      p.run_id = r.run_id AND p.pid = r.pid WHERE p.rank IN (0, 2)")" "$((2 * sets))" "the other ranks' records"
  ;;
mpi_analyze)
  # lumen analyze --mpi: K processes of a real mpirun read the parts, process
  # 0 prints; the output is the single process's, byte for byte.
  if [ "${LUMEN_TEST_WITH_MPI:-1}" = 0 ]; then
    # Built without MPI: --mpi says so in one line.
    run analyze --mpi -w "$WL/vcopy/MI200"
    expect_status 2
    expect_err "built without MPI"
    one_line_err
    exit 0
  fi
  mpi_setup
  # Open MPI's own allocations outlive MPI_Finalize (see mpi_outside).
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  # Parts of uneven dispatch counts: three ranks of a profile (rank 1 runs
  # the kernel once more per set), and two recordings as CSV folders.
  $MPIRUN -np 3 "$LUMEN" profile -n ma -w "$TMP/ma" --replay instance -- "$APP" -g local --extra-rank 1 "$sets" \
    "$VCOPY:$((2 * sets))" >"$TMP/out" 2>"$TMP/err" || fail "mpirun profile: $(cat "$TMP/err")"
  cp -r "$WL/vcopy/MI200" "$TMP/ma/rank.3"
  cp -r "$WL/sort_kernels/MI200" "$TMP/ma/rank.4"
  mpi_analyze() { # NP OUT ARGS...: mpirun -np NP lumen analyze --mpi ARGS, stdout to OUT
    local np=$1 out=$2
    shift 2
    timeout 120 $MPIRUN -np "$np" "$LUMEN" analyze --mpi "$@" >"$out" 2>"$TMP/mpi.err"
    MPI_STATUS=$?
  }
  flags_list=("--format json" "--no-pager --width 100" "--format csv" "--rank 1:4 --format json"
    "--rank 2 --no-pager" "-k vec --norm per_cycle --format json" "-d 0:2 --no-pager")
  for flags in "${flags_list[@]}"; do
    # shellcheck disable=SC2086
    run analyze -w "$TMP/ma" $flags
    expect_status 0
    cp "$TMP/out" "$TMP/one"
    [ -s "$TMP/one" ] || fail "analyze $flags: no output"
    for np in 2 3; do
      # shellcheck disable=SC2086
      mpi_analyze "$np" "$TMP/many" -w "$TMP/ma" $flags
      [ "$MPI_STATUS" = 0 ] || fail "mpirun -np $np analyze --mpi $flags: status $MPI_STATUS: $(head -c 600 "$TMP/mpi.err")"
      cmp -s "$TMP/one" "$TMP/many" || fail "mpirun -np $np analyze --mpi $flags differs: $(diff "$TMP/one" "$TMP/many" | head -5)"
    done
  done
  run analyze -w "$TMP/ma" --format json
  same "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ranks"]["n_ranks"])' "$TMP/out")" 5 "ranks merged"
  # Without mpirun: one process (a singleton), the same result.
  run analyze --mpi -w "$TMP/ma" --format json
  expect_status 0
  cp "$TMP/out" "$TMP/single"
  run analyze -w "$TMP/ma" --format json
  cmp -s "$TMP/out" "$TMP/single" || fail "analyze --mpi without mpirun differs"
  # One bad cell in rank 3's part: the single process's one-line error,
  # printed once, every process non-zero, nobody left waiting.
  cp -r "$TMP/ma" "$TMP/mb"
  sed -i '3s/$/,7/' "$TMP/mb/rank.3/pmc_perf.csv"
  run analyze -w "$TMP/mb" --format json
  expect_status 1
  expect_err "mb/rank.3/pmc_perf.csv:3:"
  one_line_err
  want=$(cat "$TMP/err")
  for np in 2 3 4; do
    mpi_analyze "$np" "$TMP/many" -w "$TMP/mb" --format json
    [ "$MPI_STATUS" = 124 ] && fail "mpirun -np $np with a bad part hung"
    [ "$MPI_STATUS" != 0 ] || fail "mpirun -np $np with a bad part succeeded"
    [ -s "$TMP/many" ] && fail "output with a bad part (-np $np)"
    same "$(grep -c '^lumen analyze:' "$TMP/mpi.err")" 1 "error lines (-np $np)"
    same "$(grep '^lumen analyze:' "$TMP/mpi.err")" "$want" "the error (-np $np)"
    # Every process exits non-zero: mpirun names no process that exited 0
    # while others failed, and the error comes from process 0 only.
    grep -q 'exited with non-zero status' "$TMP/mpi.err" || fail "mpirun -np $np: $(cat "$TMP/mpi.err")"
  done
  # A part that is not a database (rank.1: process 0 of 2 loads parts 0 to
  # 2) below the bad cell of process 1's rank.3: the lower one's error.
  printf 'not a database' >"$TMP/mb/rank.1/lumen.db"
  run analyze -w "$TMP/mb"
  want=$(cat "$TMP/err")
  expect_err "mb/rank.1/lumen.db"
  mpi_analyze 2 "$TMP/many" -w "$TMP/mb"
  [ "$MPI_STATUS" != 0 ] && [ "$MPI_STATUS" != 124 ] || fail "mpirun -np 2, rank.1 not a database: status $MPI_STATUS"
  same "$(grep '^lumen analyze:' "$TMP/mpi.err")" "$want" "rank.1's error"
  # Flags process 0 refuses: every process ends, none hangs.
  mpi_analyze 3 "$TMP/many" -w "$TMP/ma" --format xml
  same "$MPI_STATUS" 2 "mpirun -np 3 --format xml"
  expect_mpi_err() { grep -qF -- "$1" "$TMP/mpi.err" || fail "stderr lacks '$1': $(head -c 600 "$TMP/mpi.err")"; }
  expect_mpi_err "--format xml: expected text, csv or json"
  mpi_analyze 2 "$TMP/many" -w "$TMP/ma" -w "$TMP/ma"
  same "$MPI_STATUS" 2 "mpirun -np 2 --mpi with two workloads"
  expect_mpi_err "--mpi reads one folder of rank.R parts"
  # A folder that is one workload, not parts: process 0 reads it alone.
  run analyze -w "$WL/vcopy/MI200" --format json
  cp "$TMP/out" "$TMP/one"
  mpi_analyze 2 "$TMP/many" -w "$WL/vcopy/MI200" --format json
  same "$MPI_STATUS" 0 "mpirun -np 2 on one workload"
  cmp -s "$TMP/one" "$TMP/many" || fail "one workload under --mpi differs"
  ;;
regions)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  # lumen markers around iterations 2..4, runtime ranges around 0..1.
  run profile -n rg -w "$TMP/all" -- "$APP" -g 2 -R solve:2:5 -S io:0:2 fill:8 add:8
  expect_status 0
  run analyze -w "$TMP/all" -r solve --format csv -o "$TMP/solve" --list-stats
  expect_status 0
  same "$(tail -n +2 "$TMP/solve/0.2.csv" | cut -d, -f2,3 | tr '\n' ' ')" "4,fill 5,add 6,fill 7,add 8,fill 9,add " "region solve"
  run analyze -w "$TMP/all" -r io --format csv -o "$TMP/io" --list-stats
  expect_status 0
  same "$(tail -n +2 "$TMP/io/0.2.csv" | cut -d, -f2 | tr '\n' ' ')" "0 1 2 3 " "region io"
  run analyze -w "$TMP/all" -r nowhere
  expect_status 1
  one_line_err
  expect_err "-r nowhere: no such region in this workload (regions: "
  # -r at collection time: only dispatches inside the region collect.
  run profile -n rs -w "$TMP/only" -r solve -- "$APP" -g 2 -R solve:2:5 fill:8 add:8
  expect_status 0
  same "$(q only "SELECT group_concat(dispatch_id, ' ') FROM (SELECT DISTINCT dispatch_id FROM profile_record WHERE set_id >= 0 ORDER BY dispatch_id)")" \
    "4 5 6 7 8 9" "collected dispatches"
  check_values_in_set only
  run analyze -w "$TMP/only" --list-stats --format csv -o "$TMP/oc"
  expect_status 0
  same "$(tail -n +2 "$TMP/oc/0.1.csv" | cut -d, -f2,3 | sort | tr '\n' ' ')" "add,3 fill,3 " "rows in region"
  # ROCTx start/stop ranges: process-wide, each stopped from another thread
  # than the one that started it, overlapping without nesting (load around
  # iterations 1..3, step around 3..5; iteration i launches dispatches 2i
  # and 2i+1).
  run profile -n rx -w "$TMP/rx" -- "$APP" -g 2 -X load:1:4 -X step:3:6 fill:8 add:8
  expect_status 0
  run analyze -w "$TMP/rx" -r step --format csv -o "$TMP/step" --list-stats
  expect_status 0
  same "$(tail -n +2 "$TMP/step/0.2.csv" | cut -d, -f2,3 | tr '\n' ' ')" "6,fill 7,add 8,fill 9,add 10,fill 11,add " "range step"
  run analyze -w "$TMP/rx" -r load --format csv -o "$TMP/load" --list-stats
  expect_status 0
  same "$(tail -n +2 "$TMP/load/0.2.csv" | cut -d, -f2 | tr '\n' ' ')" "2 3 4 5 6 7 " "range load"
  # ... and -r at collection time.
  run profile -n rxo -w "$TMP/rxo" -r load -- "$APP" -g 2 -X load:1:4 -X step:3:6 fill:8 add:8
  expect_status 0
  same "$(q rxo "SELECT group_concat(dispatch_id, ' ') FROM (SELECT DISTINCT dispatch_id FROM profile_record WHERE set_id >= 0 ORDER BY dispatch_id)")" \
    "2 3 4 5 6 7" "collected in range load"
  check_values_in_set rxo
  # Omniperf folders have no regions.
  run analyze -w "$WL/vcopy/MI200" -r solve
  expect_status 1
  expect_err "carries no region markers"
  ;;
filters)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  selected() { q "$1" "SELECT group_concat(dispatch_id, ' ') FROM (SELECT DISTINCT dispatch_id FROM profile_record WHERE set_id >= 0 ORDER BY dispatch_id)"; }
  # Dispatch ids: iteration i launches fill (3i), add (3i+1), reduce (3i+2).
  run profile -n k -w "$TMP/k" -k 'fill|add' -k '!add' -- "$APP" -g 2 fill:4 add:4 reduce:4
  expect_status 0
  same "$(selected k)" "0 3 6 9" "-k fill|add -k !add"
  check_values_in_set k
  run profile -n i -w "$TMP/i" --instance 1:3 -- "$APP" -g 2 fill:4 add:4 reduce:4
  expect_status 0
  same "$(selected i)" "3 4 5 6 7 8" "--instance 1:3"
  run profile -n e -w "$TMP/e" -k reduce --instance ::2 -- "$APP" -g 2 fill:4 add:4 reduce:4
  expect_status 0
  same "$(selected e)" "2 8" "-k reduce --instance ::2"
  run profile -n d -w "$TMP/d" -d 2:5 -- "$APP" -g 2 fill:4 add:4 reduce:4
  expect_status 0
  same "$(selected d)" "2 3 4" "-d 2:5"
  # Filters that select nothing stop after the first run, naming the
  # kernels the application launched (filter_nomatch has more).
  run profile -n g -w "$TMP/g" -g 1 -- "$APP" -g 2 fill:2
  expect_status 2
  expect_err "-g 1 selected none of the 1 kernel the application launched: 'fill' (2 dispatches)"
  same "$(grep -c '^simapp: ' "$TMP/out")" 1 "-g 1: runs made"
  [ ! -e "$TMP/g" ] || fail "-g 1 left a workload folder behind"
  # A -b that names nothing fails before anything is created.
  run profile -n bad -w "$TMP/bad" -b 99 -- "$APP" -g 2 fill:2
  expect_status 2
  expect_err "-b 99: no panel, table, metric or hardware block"
  [ ! -e "$TMP/bad" ] || fail "a bad -b left a workload folder behind"
  run profile -n bad -w "$TMP/bad" -k '(' -- "$APP" fill:1
  expect_status 1
  expect_err "-k"
  ;;
filter_nomatch)
  # A kernel filter that matches nothing: after the first run, one line
  # naming the filter and the kernels the application launched, and no
  # folder that neither analyze nor --resume could use: what this lumen
  # created (here wl/ and wl/t) is removed, in every replay mode.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  kd="$VCOPY [clone .kd]"
  for replay in app instance auto; do
    run profile -q -n t -w "$TMP/wl/t" --replay $replay -k nomatch -- "$APP" -g 2 "$VCOPY:3"
    expect_status 2
    one_line_err
    expect_err "lumen profile: $TMP/wl/t: -k nomatch selected none of the 1 kernel the application launched: '$kd' (3 dispatches); no workload was written"
    same "$(grep -c '^simapp: ' "$TMP/out")" 1 "--replay $replay: application runs"
    [ ! -e "$TMP/wl" ] || fail "--replay $replay: a filter that matches nothing left $(find "$TMP/wl")"
  done
  # A folder that was there (empty) stays, empty; every filter is named, as
  # a shell word.
  mkdir "$TMP/empty"
  run profile -q -n t -w "$TMP/empty" -k 'no match' -k '!vec' --instance 1: -g 2 -- "$APP" -g 2 "$VCOPY:3"
  expect_status 2
  expect_err "-k 'no match' -k '!vec' --instance 1: -g 2 selected none of the 1 kernel"
  [ -d "$TMP/empty" ] && [ -z "$(ls -A "$TMP/empty")" ] || fail "the empty folder: $(ls -A "$TMP/empty")"
  # The default place, workloads/NAME.
  run profile -q -n t -k nomatch -- "$APP" -g 2 "$VCOPY:3"
  expect_status 2
  [ ! -e "$TMP/workloads" ] || fail "a filter that matches nothing left $(find "$TMP/workloads")"
  # A name can be used again at once.
  run profile -q -n t -w "$TMP/wl/t" -k vecCopy -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  run analyze -w "$TMP/wl/t" --list-stats
  expect_status 0
  # --resume never removes what was collected before: run 1 crashed, the
  # resumed run 2 selects nothing; the folder keeps both runs, and a
  # second --resume refuses at once, without running the application.
  run profile -q -n r -w "$TMP/r" -k nomatch -- "$APP" -g 2 --crash-run 1 --crash-after 1 "$VCOPY:3"
  expect_status 1
  expect_err "run 1 (application replay, set 0 of"
  expect_err "killed by signal 11 (SIGSEGV)"
  for again in 1 2; do
    run profile -q -w "$TMP/r" --resume
    expect_status 2
    one_line_err
    expect_err "-k nomatch selected none of the 1 kernel the application launched: '$kd' (3 dispatches); the folder's runs are kept, but --resume keeps these filters"
    same "$(q r "SELECT group_concat(id || ':' || status, ' ') FROM profile_run")" "1:failed 2:ok" "runs kept (--resume $again)"
  done
  [ -z "$(cat "$TMP/out")" ] || fail "the second --resume ran the application: $(cat "$TMP/out")"
  ;;
crash_resume)
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  run profile -n c -w "$TMP/p" -- "$APP" -g 2 --crash-run 3 --crash-after 2 "$VCOPY:3"
  expect_status 1
  expect_err "run 3 (application replay, set 2 of"
  expect_err "killed by signal 11 (SIGSEGV) after 2 dispatches"
  expect_err "lumen profile --resume -w $TMP/p"
  same "$(q p "SELECT group_concat(id || ':' || status, ' ') FROM profile_run")" "1:ok 2:ok 3:failed" "runs kept"
  same "$(q p "SELECT COUNT(*) FROM profile_record WHERE run_id = 3")" 2 "records of the crashed run"
  run analyze -w "$TMP/p"
  expect_status 1
  expect_err "has not finished"
  # It never overwrites a workload.
  run profile -n c -w "$TMP/p" -- "$APP" "$VCOPY:3"
  expect_status 2
  expect_err "already exists; lumen never overwrites a workload"
  run profile -w "$TMP/p" --resume
  expect_status 0
  sets=$(q p "SELECT COUNT(DISTINCT set_id) FROM profile_set")
  same "$(q p "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" "$sets" "runs after resume"
  check_values_in_set p
  golden_equal "$TMP/p" vcopy/MI200
  run profile -w "$TMP/p" --resume
  expect_status 0
  expect_err "nothing to resume"
  ;;
nondeterministic)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  sets=$(n_sets gfx90a)
  # add runs 3 + (run number) times: 4 in run 1, 5 in run 2, ...
  run profile -n nd -w "$TMP/p" -- "$APP" -g 2 --vary add fill:2 add:3
  expect_status 0
  same "$(q p "SELECT group_concat(n, ' ') FROM (SELECT COUNT(*) n FROM profile_record WHERE kernel = 'add' GROUP BY run_id ORDER BY run_id)")" \
    "$(seq 4 $((3 + sets)) | tr '\n' ' ' | sed 's/ $//')" "add per run"
  # Only the instances every run saw make rows; the rest are reported.
  expect_err "$((sets - 1)) selected dispatches did not get every counter set"
  expect_err "add from instance 4 misses"
  run analyze -w "$TMP/p" --list-stats --format csv -o "$TMP/csv"
  expect_status 0
  same "$(tail -n +2 "$TMP/csv/0.1.csv" | cut -d, -f2,3 | sort | tr '\n' ' ')" "add,4 fill,2 " "aligned rows"
  ;;
kernel_mismatch)
  # An application whose kernels are not in the recording a simulated
  # device replays is refused, naming the kernel and what the recording
  # holds; with LUMEN_SIMSDK_MAP=position the mapping is explicit and said.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  unset LUMEN_SIMSDK_MAP
  run profile -n km -w "$TMP/km" -- "$APP" fill:3
  expect_status 1
  expect_err "kernel 'fill' is not in the recording"
  expect_err "vecCopy(double*, double*, double*, int, int)"
  expect_err "earlier runs are kept"
  LUMEN_SIMSDK_MAP=position "$LUMEN" profile -n km2 -w "$TMP/km2" -- "$APP" fill:3 >/dev/null 2>"$TMP/err" ||
    fail "position mapping: $(head -c 600 "$TMP/err")"
  expect_err "kernel 'fill' replays the recorded 'vecCopy"
  ;;
app_errors)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  run profile -n e1 -w "$TMP/e1" -- "$TMP/no-such-app"
  expect_status 1
  one_line_err
  expect_err "no-such-app: no such program"
  printf '#!/bin/sh\necho hi\n' >"$TMP/noexec.sh"
  run profile -n e2 -w "$TMP/e2" -- "$TMP/noexec.sh"
  expect_status 2
  one_line_err
  expect_err "not executable (chmod +x"
  run profile -n e3 -w "$TMP/e3" -- "$APP" --fail-run 1 fill:1
  expect_status 1
  expect_err "run 1 (application replay, set 0 of"
  expect_err "the application exited with status 3"
  run profile -n e4 -w "$TMP/e4"
  expect_status 2
  expect_err "no application to profile"
  run profile -w "$TMP/e5" -- "$APP" fill:1
  expect_status 2
  expect_err "give the workload a name"
  run profile -n e6 -w "$TMP/e6" --replay sometimes -- "$APP" fill:1
  expect_status 2
  expect_err "--replay sometimes: use app, instance, auto or (NVIDIA) kernel"
  run profile -n e7 -w "$TMP/e7" --backend cupti -- "$APP" fill:1
  expect_status 1
  one_line_err
  expect_err "no NVIDIA GPU to profile"
  [ ! -e "$TMP/e7" ] || fail "a failed start left a folder"
  run profile -n e7 -w "$TMP/e7" --backend nvml -- "$APP" fill:1
  expect_status 2
  expect_err "nvml is a telemetry backend, not a counter backend"
  run profile -n e7 -w "$TMP/e7" --replay kernel -- "$APP" fill:1
  expect_status 2
  expect_err "kernel replay is CUPTI's (NVIDIA); gfx90a GPUs use app or instance"
  [ ! -e "$TMP/e7" ] || fail "a refused kernel replay left a folder"
  mkdir "$TMP/ro" && chmod a-w "$TMP/ro"
  if [ "$(id -u)" -ne 0 ]; then
    run profile -n e8 -w "$TMP/ro/sub" -- "$APP" fill:1
    expect_status 1
    expect_err "choose a writable place with -w"
  fi
  unset LUMEN_SIM_RECORDING
  run profile -n e9 -w "$TMP/e9" -- "$APP" fill:1
  expect_status 1
  one_line_err
  expect_err "no usable counter backend"
  [ ! -e "$TMP/e9" ] || fail "a failed start left a folder"
  # The architecture comes from the device.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI100
  run profile -n e10 -w "$TMP/e10" -- "$APP" fill:1
  expect_status 0
  same "$(q e10 "SELECT arch FROM workload")" gfx908 "architecture from the device"
  ;;
records_fifo)
  # A FIFO where lumen reads a process's records file (here made by the
  # application itself, beside the file its tool writes) is refused at
  # once, naming it, without blocking on it: the run fails with that error
  # instead of passing as if the process had reported nothing.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  printf '#!/bin/sh\nmkfifo "${LUMEN_TOOL_CONFIG%%.config}.records.$$-50" || exit 9\nexec "%s" fill:1\n' "$APP" \
    >"$TMP/fifo_app.sh"
  chmod +x "$TMP/fifo_app.sh"
  started=$(date +%s)
  timeout 60 "$LUMEN" profile -n ff -w "$TMP/ff" -- "$TMP/fifo_app.sh" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  [ "$STATUS" -ne 124 ] || fail "a FIFO records file blocked the profile"
  [ $(( $(date +%s) - started )) -le 10 ] || fail "a FIFO records file took $(( $(date +%s) - started )) s to refuse"
  expect_status 1
  expect_err "run 1 (application replay, set 0 of"
  expect_err "cannot read its records file run_1.records."
  expect_err "-50: a FIFO (named pipe), not a regular file: refused"
  ;;
clocks)
  # The test application's short kernel names (fill, add, reduce, ...)
  # stand for the recording's kernels by position.
  export LUMEN_SIMSDK_MAP=position
  export LUMEN_SIM_RECORDING=$WL/_mix/mix_MI200
  run profile -n ck -w "$TMP/p" -- "$APP" -g 2 fill:2 add:2
  expect_status 0
  [ "$(q p "SELECT COUNT(*) FROM clock_sample")" -gt 0 ] || fail "no clock samples"
  # The simulated device runs its second kernel at 90% of the peak clock.
  same "$(q p "SELECT DISTINCT k.name || ':' || d.sclk_mhz FROM dispatch d JOIN kernel k ON k.workload_id = d.workload_id AND k.id = d.kernel_id ORDER BY k.name")" \
    "$(printf '%s\n' add:1530.0 fill:1700.0)" "measured clocks"
  for clock in max measured; do
    run analyze -w "$TMP/p" -k add -b 2.1.0 --clock $clock --format csv -o "$TMP/$clock"
    expect_status 0
  done
  peak_max=$(grep '^2.1.0,' "$TMP/max/2.1.csv" | cut -d, -f5)
  peak_measured=$(grep '^2.1.0,' "$TMP/measured/2.1.csv" | cut -d, -f5)
  awk -v a="$peak_measured" -v b="$peak_max" 'BEGIN { r = a / b; exit !(r > 0.8999999 && r < 0.9000001) }' ||
    fail "peak at the measured clock $peak_measured is not 90% of $peak_max"
  run analyze -w "$WL/vcopy/MI200" --clock measured
  expect_status 1
  expect_err "no clock samples"
  run analyze -w "$TMP/p" --clock sometimes
  expect_status 2
  same "$(q p "SELECT DISTINCT source FROM dispatch_clock")" "simulated device" "clock source"
  same "$(q p "SELECT DISTINCT sampler FROM profile_telemetry")" "simulated device" "sampler"
  run analyze -w "$TMP/p" -b 2.1.0 --clock measured
  expect_err "clocks of the dispatches: 4 sampled by simulated device"
  run profile -n ck -w "$TMP/bad" --telemetry sometimes -- "$APP" fill:1
  expect_status 2
  ;;
clock_estimate_MI200 | clock_estimate_MI300X)
  # A device whose clocks no sampler reads (the simulated one without its
  # clock log; rocm-smi finds no AMD GPU here): each dispatch's clock is
  # estimated from GRBM_GUI_ACTIVE per XCD over its duration, and the
  # workload says so.
  rec=MI200 xcd=1
  [ "$NAME" = clock_estimate_MI300X ] && rec=MI300X_A1 xcd=8
  export LUMEN_SIM_RECORDING=$WL/vcopy/$rec
  LUMEN_SIMSDK_CLOCKS=none run profile -n ce -w "$TMP/p" -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  if [ $xcd = 8 ]; then
    # vcopy/MI300X_A1 holds timestamps rounded to 10 us (durations of 0):
    # no estimate is made up, the clocks stay blank.
    same "$(q p "SELECT COUNT(*) FROM dispatch_clock")" 0 "clock sources without a duration"
    same "$(q p "SELECT COUNT(*) FROM dispatch WHERE sclk_mhz IS NULL")" 3 "clocks without a duration"
    run analyze -w "$TMP/p" -b 2.1.0 --clock measured
    expect_status 1
    expect_err "no clock samples"
    echo PASS; exit 0
  fi
  same "$(q p "SELECT COUNT(*) FROM clock_sample")" 0 "clock samples"
  same "$(q p "SELECT DISTINCT sampler FROM profile_telemetry")" none "sampler"
  [ -n "$(q p "SELECT DISTINCT note FROM profile_telemetry")" ] || fail "no reason for the missing sampler"
  same "$(q p "SELECT DISTINCT source FROM dispatch_clock")" estimate "clock source"
  same "$(q p "SELECT COUNT(*) FROM dispatch WHERE mclk_mhz IS NULL")" 3 "no memory clock estimate"
  recorded vecCopy 3 "$WL/vcopy/$rec/pmc_perf.csv" | awk -v x=$xcd '{ printf "%.3f\n", $1 / x / $2 * 1000 }' >"$TMP/want"
  same "$(q p "SELECT printf('%.3f', sclk_mhz) FROM dispatch ORDER BY row")" "$(cat "$TMP/want")" "estimated clocks"
  run analyze -w "$TMP/p" -b 2.1.0 --clock measured
  expect_status 0
  expect_err "clocks of the dispatches: 3 estimated from GRBM_GUI_ACTIVE / duration"
  expect_err "no memory clock was sampled"
  # --telemetry none: no sampler at all, the same estimates.
  run profile -n cn -w "$TMP/n" --telemetry none -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  same "$(q n "SELECT COUNT(*) FROM clock_sample")" 0 "samples with --telemetry none"
  same "$(q n "SELECT DISTINCT note FROM profile_telemetry")" "turned off (--telemetry none)" "sampler note"
  same "$(q n "SELECT printf('%.3f', sclk_mhz) FROM dispatch ORDER BY row")" "$(cat "$TMP/want")" "estimates without a sampler"
  ;;
self_time)
  # --self-time in every mode: per run in profile, import in db, per
  # request in serve.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  run profile -n st -w "$TMP/p" --self-time -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  expect_err "lumen self-time:"
  grep -q "application run .*(12)" "$TMP/err" || fail "no per-run phase: $(grep -A8 self-time "$TMP/err")"
  expect_err "compose dispatch rows"
  run db import --db "$TMP/s.db" -w "$TMP/p" --self-time
  expect_status 0
  grep -q "import .*(1)" "$TMP/err" || fail "no import phase"
  . "$SRCDIR/../../scripts/serve-lib.sh"
  start_lumen_serve "$LUMEN" "$TMP" -w "$TMP/p" --self-time || fail "serve"
  for _ in 1 2 3; do curl -s -o /dev/null "${URL}api/analysis?w=f0&norm=per_kernel"; done
  curl -s -o /dev/null "${URL}api/summary?w=f0"
  kill -TERM "$SERVER"
  wait "$SERVER"
  grep -q "request /api/analysis .*(3)" "$TMP/serve.err" || fail "no per-request phase: $(cat "$TMP/serve.err")"
  grep -q "request /api/summary .*(1)" "$TMP/serve.err" || fail "no summary request phase"
  ;;
export)
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  run profile -n ex -w "$TMP/p" -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  # A workload from the simulated device says so wherever its numbers are
  # shown: the profile's output, analyze (text, summary, JSON), the store.
  expect_err "collected on the simulated device, which replays $WL/vcopy/MI200"
  run analyze -w "$TMP/p"
  expect_status 0
  expect_out "SIMULATED: these numbers come from the simulated device"
  expect_out "comes from the simulated device replaying $WL/vcopy/MI200"
  run analyze -w "$TMP/p" --format json -b 2.1.1
  expect_status 0
  grep -q "\"simulated\":\"$WL/vcopy/MI200\"" "$TMP/out" || fail "JSON does not mark the workload simulated"
  run analyze -w "$WL/vcopy/MI200" --format json -b 2.1.1
  ! grep -q '"simulated"' "$TMP/out" || fail "a recorded folder is marked simulated"
  run db import --db "$TMP/s.db" -w "$TMP/p" -n simulated_one
  expect_status 0
  run db list --db "$TMP/s.db"
  expect_out "lumen (simulated)"
  run db list --db "$TMP/s.db" --format csv
  expect_out ",yes"
  run analyze --db "$TMP/s.db" -w simulated_one -b 2.1.1
  expect_status 0
  expect_out "comes from the simulated device replaying"
  run export -w "$TMP/p" --omniperf "$TMP/omni"
  expect_status 0
  for f in pmc_perf.csv sysinfo.csv roofline.csv SQ_LEVEL_WAVES.csv SQ_INST_LEVEL_VMEM.csv; do
    [ -f "$TMP/omni/$f" ] || fail "export lacks $f"
  done
  head -1 "$TMP/omni/pmc_perf.csv" | grep -q '^Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size,' || fail "pmc_perf.csv header"
  golden_equal "$TMP/omni" vcopy/MI200
  # The exported folder is the reference's format: no lumen database in it.
  [ ! -e "$TMP/omni/lumen.db" ] || fail "lumen.db in an Omniperf folder"
  # It stays marked as a replay, in analyze and in a store it is imported into.
  run analyze -w "$TMP/omni" --format json -b 2.1.1
  expect_status 0
  grep -q "\"simulated\":\"$WL/vcopy/MI200\"" "$TMP/out" || fail "the export is not marked simulated"
  run db import --db "$TMP/s2.db" -w "$TMP/omni" -n simulated_export
  expect_status 0
  run db list --db "$TMP/s2.db"
  expect_out "omniperf (simulated)"
  run export -w "$TMP/p" --omniperf "$TMP/omni"
  expect_status 1
  one_line_err
  expect_err "already exists"
  run export -w "$TMP/p"
  expect_status 2
  # Omniperf folders export too (a copy in canonical form).
  run export -w "$WL/_mix/mix_MI300X_A1" --omniperf "$TMP/mix"
  expect_status 0
  run analyze -w "$WL/_mix/mix_MI300X_A1" --format csv -o "$TMP/a1"
  run analyze -w "$TMP/mix" --format csv -o "$TMP/a2"
  for f in "$TMP"/a1/*.csv; do
    [ "$(basename "$f")" = 1.1.csv ] && continue
    cmp -s "$f" "$TMP/a2/$(basename "$f")" || fail "table $(basename "$f") differs after export"
  done
  ;;
rocprofiler_sdk)
  # lumen finds the SDK (here the simulated one), checks its version and
  # its agents, and says why it cannot be used.
  rocp_row() { "$LUMEN" list backends | grep '^rocprofiler-sdk '; }
  row=$(LUMEN_ROCPROFILER_SDK=$SIMSDK LUMEN_SIMSDK_VERSION=0.4.2 rocp_row)
  case $row in *"no  "*"version 0.4.2 found; lumen needs 0.5 or later (ROCm 6.3+)"*) ;; *) fail "old SDK: $row" ;; esac
  row=$(LUMEN_ROCPROFILER_SDK=$SIMSDK rocp_row)
  case $row in *"no  "*"version 1.0.0 (1.0 layout, supported) found, but it reports no GPU agent"*) ;; *) fail "no agent: $row" ;; esac
  row=$(LUMEN_ROCPROFILER_SDK=$TMP/nowhere.so rocp_row)
  case $row in *"LUMEN_ROCPROFILER_SDK=$TMP/nowhere.so cannot be loaded"*) ;; *) fail "bad path: $row" ;; esac
  row=$(LUMEN_ROCPROFILER_SDK=$SIMSDK LUMEN_SIM_RECORDING=$WL/vcopy/MI200 rocp_row)
  case $row in *"yes  "*"version 1.0.0 (1.0 layout, supported), 8 GPU agents"*) ;; *) fail "usable: $row" ;; esac
  # Agents, counters with their dimensions, configs under the limits.
  export LUMEN_ROCPROFILER_SDK=$SIMSDK LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  "$ROCP_CHECK" SQ_WAVES TCC_HIT TCP_TOTAL_CACHE_ACCESSES TCP_TCC_READ_REQ >"$TMP/chk" || fail "rocp_check: $(cat "$TMP/chk")"
  same "$(cat "$TMP/chk")" "$(printf '%s\n' 'version 1.0.0' 'agent 0 gfx90a gfx_target_version=90010 xcc=1 cu=104' 'gpus 8' \
    'counter SQ_WAVES block SQ dimensions XCC x1 INSTANCE x1' 'counter TCC_HIT block TCC dimensions XCC x1 INSTANCE x32' \
    'counter TCP_TOTAL_CACHE_ACCESSES block TCP dimensions XCC x1 INSTANCE x104' 'counter TCP_TCC_READ_REQ block TCP dimensions XCC x1 INSTANCE x104' \
    'config of 4: accepted')" "simulated MI200"
  # A smaller TCP budget: the same config is refused.
  LUMEN_SIMSDK_LIMITS=TCP=1 "$ROCP_CHECK" TCP_TOTAL_CACHE_ACCESSES TCP_TCC_READ_REQ | grep -qx 'config of 2: exceeds the hardware limit' ||
    fail "no refusal over the limit"
  "$ROCP_CHECK" TCP_TCP_LATENCY_NOPE | grep -qx 'counter TCP_TCP_LATENCY_NOPE not supported by agent 0' || fail "unknown counter"
  # MI300X: eight XCDs.
  LUMEN_SIM_RECORDING=$WL/vcopy/MI300X_A1 "$ROCP_CHECK" SQ_WAVES TCC_HIT >"$TMP/chk"
  grep -qx 'agent 0 gfx942 gfx_target_version=90402 xcc=8 cu=304' "$TMP/chk" || fail "MI300X agent: $(cat "$TMP/chk")"
  grep -qx 'counter SQ_WAVES block SQ dimensions XCC x8 INSTANCE x1' "$TMP/chk" || fail "MI300X SQ_WAVES: $(cat "$TMP/chk")"
  # The simulated SDK in each version's layout (LUMEN_SIMSDK_LAYOUT), read
  # at the headers' offsets: counter info version 0 everywhere, version 1
  # refused by 0.5/0.6 (INCOMPATIBLE_ABI, 18) and laid out differently by
  # the 7.0 branch and the development line, which both say 1.0.0.
  for layout in 0.5 0.6 7.0 dev; do
    case $layout in
      0.5|0.6) want="version $layout.0|raw TCC_HIT v0 name@8|raw TCC_HIT v1 status 18" ;;
      7.0) want="version 1.0.0|raw TCC_HIT v0 name@8|raw TCC_HIT v1 name@8 dims 2 first XCC as structs" ;;
      dev) want="version 1.0.0|raw TCC_HIT v0 name@8|raw TCC_HIT v1 name@16 dims 2 first XCC as pointers" ;;
    esac
    got=$(LUMEN_SIMSDK_LAYOUT=$layout "$ROCP_CHECK" --raw TCC_HIT | grep -E '^(version|raw)' | paste -sd'|')
    same "$got" "$want" "layout $layout"
  done
  LUMEN_SIMSDK_LAYOUT=6.3 "$ROCP_CHECK" --raw TCC_HIT 2>"$TMP/err" | grep -q '^load: the library found does not report its version' ||
    fail "unknown layout accepted"
  grep -q 'LUMEN_SIMSDK_LAYOUT=6.3 is not one of 0.5, 0.6, 7.0, dev' "$TMP/err" || fail "unknown layout: $(cat "$TMP/err")"
  # A tool that reads each version's layout gets kernel symbols and is
  # finalized on every layout; one that reads the 1.x layout on 0.5/0.6
  # gets a record it misreads and, having written its name over the
  # handle of the 16-byte client id, is never finalized.
  tool=$(dirname "$ROCP_CHECK")/liblayout_tool.so
  asan=$(ldd "$APP" | awk '/libasan/ {print $3}')
  for layout in 0.5 0.6 7.0 dev; do
    for abi in own 1.x; do
      LUMEN_SIMSDK_LAYOUT=$layout LAYOUT_TOOL_ABI=$abi LD_PRELOAD="${asan:+$asan }$tool" \
        "$APP" -g 0 "$VCOPY:1" >/dev/null 2>"$TMP/tool" || fail "simapp on layout $layout: $(cat "$TMP/tool")"
      seen=$(grep -c -e '^layout_tool: kind=10 operation=2 phase=1$' -e '^layout_tool: finalized$' "$TMP/tool")
      case $layout/$abi in 0.5/1.x|0.6/1.x) want=0 ;; *) want=2 ;; esac
      same "$seen" "$want" "tool reading $abi on layout $layout: $(cat "$TMP/tool")"
    done
  done
  ;;
sdk_layouts)
  # `lumen profile` against the simulated SDK in each version's layout
  # (LUMEN_SIMSDK_LAYOUT: 0.5 = ROCm 6.3, 0.6 = ROCm 6.4, the ROCm 7.0
  # branch, the development line), whose declarations are the SDK's own
  # (tests/sim/sdk_abi.h), not lumen's: the SDK is named with its version
  # and layout, every counter is found (counter info and dimensions read
  # the same way in every version), kernel names and ROCTx ranges arrive
  # (callback tracing records of 56 or 64 bytes), the tool is finalized
  # (client ids of 16 or 24 bytes), and a set over the hardware limit is
  # split: the tables are the recording's.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  for layout in 0.5 0.6 7.0 dev; do
    export LUMEN_SIMSDK_LAYOUT=$layout
    case $layout in
      0.5 | 0.6) version=$layout.0 form="0.5/0.6 layout" ;;
      *) version=1.0.0 form="1.0 layout" ;;
    esac
    row=$("$LUMEN" list backends | grep '^rocprofiler-sdk ')
    case $row in *"yes  "*"version $version ($form, supported), 8 GPU agents"*) ;; *) fail "list backends on $layout: $row" ;; esac
    LUMEN_SIMSDK_LIMITS=TCP=2 run profile -n v -w "$TMP/p$layout" -- "$APP" -g 2 -X part:1:2 "$VCOPY:3"
    expect_status 0
    ! grep -q "not supported by agent" "$TMP/err" || fail "counters missing on $layout: $(grep -m3 'not supported' "$TMP/err")"
    ! grep -q "never finalized" "$TMP/err" || fail "tool not finalized on $layout: $(grep -m1 'never finalized' "$TMP/err")"
    expect_err "split: "
    same "$(q "p$layout" "SELECT DISTINCT kernel FROM profile_record")" "$VCOPY [clone .kd]" "kernel name on $layout"
    check_values_in_set "p$layout"
    golden_equal "$TMP/p$layout" vcopy/MI200
    run analyze -w "$TMP/p$layout" -r part --format csv -o "$TMP/r$layout" --list-stats
    expect_status 0
    same "$(tail -n +2 "$TMP/r$layout/0.2.csv" | cut -d, -f2 | tr '\n' ' ')" "1 " "range part on $layout"
  done
  # Versions lumen knows no layout of: a newer 1.x is read in 1.0's layout
  # where the sizes the SDK reports prove it compatible; a newer major
  # version, or a development version between 0.6 and 1.0, is refused
  # with its number.
  unset LUMEN_SIMSDK_LAYOUT
  row=$(LUMEN_SIMSDK_VERSION=1.2.0 "$LUMEN" list backends | grep '^rocprofiler-sdk ')
  case $row in *"yes  "*"version 1.2.0 (newer than 1.0; read in the 1.0 layout, whose sizes it reports), 8 GPU agents"*) ;; *) fail "1.2.0: $row" ;; esac
  LUMEN_SIMSDK_VERSION=1.2.0 run profile -n v -w "$TMP/p12" -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  golden_equal "$TMP/p12" vcopy/MI200
  for v in 2.0.0 0.7.0; do
    row=$(LUMEN_SIMSDK_VERSION=$v "$LUMEN" list backends | grep '^rocprofiler-sdk ')
    case $row in *"no  "*"version $v found; lumen knows the layouts of 0.5, 0.6 and 1.0"*) ;; *) fail "$v: $row" ;; esac
    LUMEN_SIMSDK_VERSION=$v run profile -n v -w "$TMP/p$v" -- "$APP" -g 2 "$VCOPY:3"
    expect_status 1
    one_line_err
    expect_err "version $v found; lumen knows the layouts of 0.5, 0.6 and 1.0"
  done
  ;;
kill9)
  # lumen profile killed with SIGKILL (no handler runs): the application
  # and the helper process it started die with it, run after run, and
  # --resume completes the profile.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  for try in 1 2 3 4 5; do
    rm -rf "$TMP/k" "$TMP/pids"
    start_hanging k --spawn
    [ "$(wc -l <"$TMP/pids")" -ge 4 ] || fail "try $try: expected 4 pids: $(cat "$TMP/pids")"
    kill -KILL "$LP"
    wait "$LP" 2>/dev/null
    LP=
    all_gone
  done
  run profile -w "$TMP/k" --resume
  expect_status 0
  golden_equal "$TMP/k" vcopy/MI200
  ;;
early_signal)
  # SIGINT or SIGTERM while lumen profile creates the workload (before the
  # first run): it stops as interrupted and leaves nothing, so the same
  # command works again. Signals at 0 to 60 ms after start (python3 starts
  # lumen, so the early ones arrive before lumen's main).
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  for ms in 0 5 10 15 20 25 30 40 50 60; do
    for sig in INT TERM; do
      KIND="SIG$sig at $ms ms"
      rm -rf "$TMP/e"
      # (a background job ignores SIGINT unless it is given back its default)
      python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
        "$LUMEN" profile -n e -w "$TMP/e" -- "$APP" -g 2 "$VCOPY:3" >"$TMP/out" 2>"$TMP/err" &
      LP=$!
      sleep "$(printf '0.%03d' "$ms")"
      kill -"$sig" "$LP" 2>/dev/null
      wait "$LP"
      STATUS=$?
      LP=
      if [ -e "$TMP/e" ]; then
        # What is left is a profile lumen can continue or a finished one.
        run profile -w "$TMP/e" --resume
        expect_status 0
        golden_equal "$TMP/e" vcopy/MI200
      else
        run profile -n e -w "$TMP/e" -- "$APP" -g 2 "$VCOPY:3"
        expect_status 0
      fi
    done
  done
  KIND=
  ;;
signals)
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  # Run 2 hangs; each run's application leaves a helper process behind.
  start_hanging p --spawn
  # The run that ended took its helper with it.
  [ "$(wc -l <"$TMP/pids")" -eq 4 ] || fail "expected 4 pids: $(cat "$TMP/pids")"
  alive "$(sed -n 2p "$TMP/pids")" && fail "run 1's helper outlived its run"
  # One profile per folder at a time.
  run profile -w "$TMP/p" --resume
  expect_status 2
  expect_err "another \`lumen profile\` is writing this workload"
  kill -TERM "$LP"
  wait "$LP"
  STATUS=$?
  expect_status 1
  expect_err "run 2 (application replay, set 1 of"
  expect_err "interrupted by signal 15 (SIGTERM)"
  all_gone
  same "$(q p "SELECT group_concat(id || ':' || status, ' ') FROM profile_run")" "1:ok 2:interrupted" "runs"
  run profile -w "$TMP/p" --resume
  expect_status 0
  sets=$(q p "SELECT COUNT(DISTINCT set_id) FROM profile_set")
  same "$(q p "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" "$sets" "runs after resume"
  golden_equal "$TMP/p" vcopy/MI200
  ;;
timeout)
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  run profile -n t -w "$TMP/p" --timeout 2 -- "$APP" -g 2 --hang-run 2 --crash-after 1 --pid-file "$TMP/pids" "$VCOPY:3"
  expect_status 1
  expect_err "run 2 (application replay, set 1 of"
  expect_err "did not finish within --timeout 2 s and was stopped after 1 dispatches"
  all_gone
  same "$(q p "SELECT group_concat(id || ':' || status, ' ') FROM profile_run")" "1:ok 2:timeout" "runs"
  same "$(q p "SELECT value FROM profile_option WHERE key = 'timeout'")" 2 "stored timeout"
  run profile -n t2 -w "$TMP/bad" --timeout 0 -- "$APP" fill:1
  expect_status 2
  expect_err "--timeout 0: give a number of seconds above 0"
  # --resume runs the timed-out set again (run 3 does not hang).
  run profile -w "$TMP/p" --resume
  expect_status 0
  sets=$(q p "SELECT COUNT(DISTINCT set_id) FROM profile_set")
  same "$(q p "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" "$sets" "runs after resume"
  same "$(q p "SELECT status FROM profile_run WHERE id = 3")" ok "the retried run"
  golden_equal "$TMP/p" vcopy/MI200
  ;;
resume_leftovers)
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  start_hanging p
  # lumen dies without a chance to clean up: the application goes with it.
  kill -KILL "$LP"
  wait "$LP" 2>/dev/null
  all_gone
  same "$(q p "SELECT group_concat(id || ':' || status, ' ') FROM profile_run")" "1:ok 2:running" "runs before resume"
  [ -e "$TMP/p/run_2.config" ] || fail "expected run 2's files before --resume"
  run profile -w "$TMP/p" --resume
  expect_status 0
  same "$(q p "SELECT COUNT(*) FROM profile_run WHERE status = 'running'")" 0 "runs left running"
  same "$(q p "SELECT status FROM profile_run WHERE id = 2")" interrupted "the interrupted run"
  left=$(cd "$TMP/p" && ls run_* 2>/dev/null)
  [ -z "$left" ] || fail "leftover run files: $left"
  expect_err "1 run left unfinished by an earlier lumen marked interrupted"
  golden_equal "$TMP/p" vcopy/MI200
  ;;
refused_split)
  # The SDK accepts at most two TCP counters per config: lumen's sets (made
  # for four) are refused on the device, split before the first run, and
  # the split parts get runs of their own; the tables are still the
  # recording's.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  planned=$(n_sets gfx90a)
  LUMEN_SIMSDK_LIMITS=TCP=2 run profile -n s -w "$TMP/p" -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  expect_err "counter set 0: rocprofiler-sdk refused it on gfx90a (over the hardware limits); split: "
  sets=$(q p "SELECT COUNT(DISTINCT set_id) FROM profile_set")
  [ "$sets" -gt "$planned" ] || fail "no set was split: $sets sets"
  same "$(q p "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" "$sets" "a run per set"
  same "$(q p "SELECT MAX(n) FROM (SELECT COUNT(*) n FROM profile_set WHERE block = 'TCP' GROUP BY set_id)")" 2 "TCP counters per set"
  same "$(q p "SELECT COUNT(*) FROM log WHERE message LIKE '%refused it on gfx90a%'")" "$((sets - planned))" "logged splits"
  check_values_in_set p
  golden_equal "$TMP/p" vcopy/MI200
  ;;
counter_lacking)
  # rocprofiler-sdk defines no TCP_TCP_LATENCY for gfx942: asked for (-b),
  # it is an error naming counter and agent; in a full profile it is left
  # out with a warning and its metrics have no value.
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI300X_A1
  run profile -n l -w "$TMP/b" -b 3.1.25 -- "$APP" -g 2 "$VCOPY:3"
  expect_status 2
  one_line_err
  expect_err "counter TCP_TCP_LATENCY is not supported by agent gfx942 (GPU 0, rocprofiler-sdk 1.0.0)"
  run profile -n l -w "$TMP/p" -- "$APP" -g 2 "$VCOPY:3"
  expect_status 0
  expect_err "counter TCP_TCP_LATENCY is not supported by agent gfx942 (GPU 0): left out"
  same "$(q p "SELECT COUNT(*) FROM profile_set WHERE counter = 'TCP_TCP_LATENCY'")" 0 "TCP_TCP_LATENCY in a set"
  golden_equal "$TMP/p" vcopy/MI300X_A1
  ;;
cupti_no_gpu)
  # Where there is no NVIDIA GPU: `lumen list backends` says why CUPTI
  # cannot collect, and `lumen profile --backend cupti` says so in one
  # line, with the fix, before creating anything.
  row=$("$LUMEN" list backends | grep '^cupti ')
  case $row in *" yes    yes "*) echo "SKIP: an NVIDIA GPU is present ($row)"; exit 77 ;; esac
  case $row in
    *"built; not usable: "*"\`lumen profile --backend cupti\` needs an NVIDIA GPU and its driver"*) ;;
    *"no  "*"not built: "*) ;;
    *"built; not usable: CUPTI cannot be loaded into an AddressSanitizer build"*) ;;
    *) fail "cupti row: $row" ;;
  esac
  VAPP=$(dirname "$APP")/cuda_vcopy
  [ -x "$VAPP" ] || VAPP=$APP
  run profile -n v --backend cupti -- "$VAPP"
  expect_status 1
  one_line_err
  case $row in *"not built"*) expect_err "built without the CUDA toolkit" ;; *) expect_err "no NVIDIA GPU to profile: " ;; esac
  [ ! -e "$TMP/workloads" ] || fail "a refused profile created $(find "$TMP/workloads")"
  # Chosen automatically: the error names what each backend lacks.
  LUMEN_ROCPROFILER_SDK=$TMP/none.so run profile -n v -- "$VAPP"
  expect_status 1
  one_line_err
  expect_err "no usable counter backend: rocprofiler-sdk: "
  expect_err "; cupti: "
  [ ! -e "$TMP/workloads" ] || fail "a refused profile created a folder"
  # --replay kernel reaches the backend (AMD refuses it; here CUPTI has no GPU).
  run profile -n v --backend cupti --replay kernel -- "$VAPP"
  expect_status 1
  expect_err "no NVIDIA GPU to profile"
  ;;
list_backends)
  export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
  run list backends
  expect_status 0
  grep -q '^sim ' "$TMP/out" && fail "a sim backend row: $(cat "$TMP/out")"
  grep -q '^rocprofiler-sdk  *counters  *yes  *yes  *version 1.0.0 (1.0 layout, supported), 8 GPU agents' "$TMP/out" ||
    fail "rocprofiler-sdk row (simulated SDK): $(grep rocprofiler "$TMP/out")"
  # Without an SDK: not found, with the fix.
  LUMEN_ROCPROFILER_SDK= run list backends
  grep -q '^rocprofiler-sdk  *counters  *yes  *no  *librocprofiler-sdk.so not found: install rocprofiler-sdk 0.5 or later (ROCm 6.3+)' "$TMP/out" ||
    fail "rocprofiler-sdk row: $(grep rocprofiler "$TMP/out")"
  # A recording without the simulated SDK: it is never looked for, and the
  # row says which variable is missing (only then).
  expect_out "(LUMEN_SIM_RECORDING is set, but the simulated SDK that replays it is loaded only where LUMEN_ROCPROFILER_SDK names it: build/src/sim/librocprofiler-sdk.so)"
  LUMEN_ROCPROFILER_SDK= LUMEN_SIM_RECORDING= run list backends
  ! grep -q LUMEN_SIM_RECORDING "$TMP/out" || fail "the hint without a recording: $(grep rocprofiler "$TMP/out")"
  grep -q '^rocm-smi  *telemetry  *yes ' "$TMP/out" || fail "rocm-smi row"
  grep -q '^nvml  *telemetry  *yes ' "$TMP/out" || fail "nvml row"
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo PASS
