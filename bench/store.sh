#!/usr/bin/env bash
# Benchmark of the workload store: import a scaled copy of vcopy/MI200
# (100,000 dispatches by default) into a SQLite store, then time
#  - `lumen analyze --db STORE -w NAME` (the default view, kept at import),
#  - a new view (a kernel filter and another normalization) evaluated from
#    the stored columns (LUMEN_STORE_CACHE=off: nothing is kept or reused),
#  - the same analysis from the CSV folder, for reference.
# Everything is written under $TMPDIR (default /tmp) and removed at the end.
#
# Usage: bench/store.sh [DISPATCHES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
RUNS=${2:-5}
. bench/lib.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-store-XXXXXX")
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT

build-bench/scale_workload "$SHARED/workloads/vcopy/MI200" "$N" "$WORK/wl"
t0=$(date +%s.%N)
"$LUMEN" db import --db "$WORK/store.db" -w "$WORK/wl" -n big >/dev/null
t1=$(date +%s.%N)
import_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
store_mb=$(du -m "$WORK/store.db" | cut -f1)

printf '%-46s %12s %12s %10s %s\n' case "median ms" "min ms" "peak MiB" target
row() {
  local name=$1 target=$2
  shift 2
  "$@" >/dev/null 2>&1 # warm the page cache
  read -r med min rss <<<"$(build-bench/measure "$RUNS" "$@")"
  printf '%-46s %12s %12s %10s %s\n' "$name" "$med" "$min" "$rss" "$target"
}
row "store: default view (kept at import)" "<= 300 ms" "$LUMEN" analyze --db "$WORK/store.db" -w big
row "store: json, default view" "" "$LUMEN" analyze --db "$WORK/store.db" -w big --format json
row "store: new view, evaluated from the columns" "" \
  env LUMEN_STORE_CACHE=off "$LUMEN" analyze --db "$WORK/store.db" -w big -k vec --norm per_cycle
row "folder: the same new view from CSV" "" "$LUMEN" analyze -w "$WORK/wl" -k vec --norm per_cycle
printf '\nimport of %s dispatches: %s ms (includes evaluating the default view); store %s MB\n' \
  "$N" "$import_ms" "$store_mb"
