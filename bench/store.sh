#!/usr/bin/env bash
# Benchmark of the workload store: for scaled copies of vcopy/MI200 and
# vcopy/MI300X_A1 (100,000 dispatches by default), import each into a new
# SQLite store and time
#  - the import (`lumen db import`, which also evaluates, from the stored
#    columns, and keeps the default view),
#  - `lumen analyze --db STORE -w NAME` (the default view, kept at import),
#  - a new view (a kernel filter and another normalization) evaluated from
#    the stored columns (LUMEN_STORE_CACHE=off: nothing is kept or reused),
#  - the same new view from the CSV folder, for reference;
# and print each figure (median of RUNS runs, peak resident memory) next to
# its goal, then what takes room in the store. Everything is written under
# $TMPDIR (default /tmp) and removed at the end.
#
# Usage: bench/store.sh [DISPATCHES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
RUNS=${2:-5}
. bench/lib.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-store-XXXXXX")
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT

# Goals of the scale work for 100,000 dispatches.
GOAL_STORE_PCT=25 # store size, % of pmc_perf.csv
GOAL_IMPORT_MS=2000
GOAL_VIEW_MS=300
GOAL_VIEW_MIB=500

printf 'load average at the start: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %-44s %16s %14s %10s %s\n' workload measure goal lumen "peak MiB" result
verdict() { # VALUE GOAL [RSS GOAL_RSS]: empty without a goal
  [ -n "$2" ] || return 0
  awk -v v="$1" -v g="$2" -v r="${3:-0}" -v gr="${4:-0}" \
    'BEGIN { print (v <= g && (gr == 0 || r <= gr)) ? "met" : "MISSED" }'
}
line() { # WORKLOAD MEASURE GOAL LUMEN RSS RESULT
  printf '%-22s %-44s %16s %14s %10s %s\n' "$@"
}
timed() { # LABEL GOAL_MS GOAL_MIB COMMAND...: median of RUNS, after one warm-up run
  local label=$1 goal=$2 goal_mib=$3
  shift 3
  "$@" >/dev/null 2>&1
  local med min rss
  read -r med min rss _ <<<"$(build-bench/measure "$RUNS" "$@")"
  local goal_text=""
  [ -n "$goal" ] && goal_text="<= $goal ms"
  [ -n "$goal_mib" ] && goal_text="$goal_text, <= $goal_mib MiB"
  line "$WL" "$label" "$goal_text" "$med ms" "$rss" "$(verdict "$med" "$goal" "$rss" "${goal_mib:-0}")"
}

for src in vcopy/MI200 vcopy/MI300X_A1; do
  WL="$src x$N"
  dir="$WORK/wl_${src//\//_}"
  store="$WORK/store_${src//\//_}.db"
  build-bench/scale_workload "$SHARED/workloads/$src" "$N" "$dir"
  # (the copy is flushed to disk before anything is timed, not during)
  sync
  csv_bytes=$(stat -c %s "$dir/pmc_perf.csv")
  folder_bytes=$(du -sb "$dir" | cut -f1)
  # Each timed import writes a new store (the last one stays for the views).
  timed "import (new store; keeps the default view)" "$GOAL_IMPORT_MS" "" \
    sh -c 'rm -f "$1"; exec "$2" db import --db "$1" -w "$3" -n big' sh "$store" "$LUMEN" "$dir"
  sync
  store_bytes=$(stat -c %s "$store")
  pct=$(awk -v s="$store_bytes" -v c="$csv_bytes" 'BEGIN { printf "%.1f", 100 * s / c }')
  line "$WL" "pmc_perf.csv (folder: $((folder_bytes / 1000000)) MB)" "" "$((csv_bytes / 1000000)) MB" "" ""
  line "$WL" "store size, % of pmc_perf.csv" "<= $GOAL_STORE_PCT %" "$((store_bytes / 1000000)) MB ($pct %)" "" \
    "$(verdict "$pct" "$GOAL_STORE_PCT")"
  timed "default view (kept at import)" "$GOAL_VIEW_MS" "" "$LUMEN" analyze --db "$store" -w big
  timed "default view, --format json" "" "" "$LUMEN" analyze --db "$store" -w big --format json
  timed "new view from the columns (-k vec, per_cycle)" "$GOAL_VIEW_MS" "$GOAL_VIEW_MIB" \
    env LUMEN_STORE_CACHE=off "$LUMEN" analyze --db "$store" -w big -k vec --norm per_cycle
  timed "the same new view from the CSV folder" "" "" "$LUMEN" analyze -w "$dir" -k vec --norm per_cycle
  # What takes room: bytes per table and index (SQLite's dbstat).
  python3 - "$store" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
total = sum(r[1] for r in rows)
shown = [f"{n} {b / 1e6:.1f} MB" for n, b in rows if b >= total / 100]
print("    store by table and index: " + ", ".join(shown))
kinds = db.execute("SELECT CASE WHEN codec IS NULL OR codec = 0 THEN 'raw' ELSE CAST(substr(data, 1, 1) AS TEXT) END, "
                   "COUNT(*), SUM(length(data)) FROM column_data GROUP BY 1 ORDER BY 1").fetchall()
names = {"C": "constant", "I": "integer planes", "S": "shuffled doubles", "raw": "raw"}
print("    columns by encoding: " + ", ".join(f"{names.get(k, k)} {n} ({b / 1e6:.2f} MB)" for k, n, b in kinds))
PY
done
printf '\n%s dispatches, %s runs per timed row (median; peak is the largest of the runs); load average\n' "$N" "$RUNS"
printf 'at the end: %s (on a shared machine the times grow with it).\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'The scaled folders repeat the source rows in order, so their columns compress far better than\n'
printf 'measured counters would (docs/workload-format.md gives figures with noise added).\n'
