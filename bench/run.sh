#!/usr/bin/env bash
# Benchmark of `lumen analyze` (all panels, output discarded): wall time
# and peak memory on real workloads and on scaled-up copies of vcopy/MI200.
# The scaled folders are written under $TMPDIR (default /tmp) and removed
# at the end; nothing is committed. Prints a table.
#
# Usage: bench/run.sh [RUNS]      (default 5 runs per case, median shown)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
. bench/lib.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

for n in 1000 10000 100000; do
  build-bench/scale_workload "$SHARED/workloads/vcopy/MI200" "$n" "$WORK/mi200_$n"
done

printf '%-24s %10s %10s %12s %12s %10s %12s %s\n' case dispatches "csv MB" "median ms" "min ms" "peak MiB" target result
row() {
  local name=$1 dir=$2 target_ms=$3 target_mb=$4
  local n size out med min rss ok
  n=$(($(wc -l <"$dir/pmc_perf.csv") - 1))
  size=$(du -m "$dir/pmc_perf.csv" | cut -f1)
  # One untimed run warms the page cache, as for a user re-running analyze.
  "$LUMEN" analyze -w "$dir" >/dev/null
  out=$(build-bench/measure "$RUNS" "$LUMEN" analyze -w "$dir")
  read -r med min rss <<<"$out"
  ok=$(awk -v m="$med" -v t="$target_ms" -v r="$rss" -v tm="$target_mb" \
        'BEGIN { print (m <= t && (tm == 0 || r <= tm)) ? "met" : "MISSED" }')
  local target="<= ${target_ms} ms"
  [ "$target_mb" = 0 ] || target="$target, <= ${target_mb} MiB"
  printf '%-24s %10s %10s %12s %12s %10s %-26s %s\n' "$name" "$n" "$size" "$med" "$min" "$rss" "$target" "$ok"
}
row vcopy/MI200 "$SHARED/workloads/vcopy/MI200" 50 0
row vcopy/MI300X_A1 "$SHARED/workloads/vcopy/MI300X_A1" 100 0
row "synthetic MI200 x1000" "$WORK/mi200_1000" 100 0
row "synthetic MI200 x10000" "$WORK/mi200_10000" 300 0
row "synthetic MI200 x100000" "$WORK/mi200_100000" 2000 1536
