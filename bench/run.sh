#!/usr/bin/env bash
# Benchmark of `lumen analyze` (all panels, output discarded): wall time
# and peak memory on real workloads and on scaled-up copies of vcopy
# (MI200 and MI300X), next to one `wc -l` pass over the same pmc_perf.csv;
# then the CSV loader alone in MB/s next to `cat` and `wc -l`. The scaled
# folders are written under $TMPDIR (default /tmp) and removed at the end;
# nothing is committed. The 1,000,000-dispatch case (about 5.5 GB of CSV)
# is skipped, with a message, when $TMPDIR has no room for it.
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
build-bench/scale_workload "$SHARED/workloads/vcopy/MI300X_A1" 100000 "$WORK/mi300x_100000"
# The million-dispatch copy: ten times the 100,000 one, plus a margin.
need_kb=$(( $(du -sk "$WORK/mi200_100000" | cut -f1) * 11 ))
free_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
BIG=
if [ "$free_kb" -gt "$need_kb" ]; then
  build-bench/scale_workload "$SHARED/workloads/vcopy/MI200" 1000000 "$WORK/mi200_1000000"
  BIG=$WORK/mi200_1000000
else
  echo "skipping synthetic MI200 x1000000: it needs $((need_kb / 1024)) MiB in ${TMPDIR:-/tmp}, $((free_kb / 1024)) MiB free" >&2
fi

# The copies just written are still being flushed to disk: let that end
# before anything is timed.
sync
printf '%-26s %10s %8s %10s %10s %9s %8s %6s  %-34s %s\n' case dispatches "csv MB" "median ms" "min ms" \
  "peak MiB" "wc ms" "x wc" target result
# row NAME DIR TARGET_MS TARGET_MIB MAX_TIMES_WC (0: no goal)
row() {
  local name=$1 dir=$2 target_ms=$3 target_mb=$4 target_x=$5
  local n size out med min rss wc_med wc_min wc_rss ratio ok
  n=$(($(wc -l <"$dir/pmc_perf.csv") - 1))
  size=$(du -m "$dir/pmc_perf.csv" | cut -f1)
  # One untimed run warms the page cache, as for a user re-running analyze.
  "$LUMEN" analyze -w "$dir" >/dev/null
  out=$(build-bench/measure "$RUNS" "$LUMEN" analyze -w "$dir")
  read -r med min rss _ <<<"$out"
  out=$(build-bench/measure "$RUNS" wc -l "$dir/pmc_perf.csv")
  read -r wc_med wc_min wc_rss _ <<<"$out"
  ratio=$(awk -v m="$med" -v w="$wc_med" 'BEGIN { printf "%.1f", (w > 0) ? m / w : 0 }')
  ok=$(awk -v m="$med" -v t="$target_ms" -v r="$rss" -v tm="$target_mb" -v x="$ratio" -v tx="$target_x" \
        'BEGIN { print (m <= t && (tm == 0 || r <= tm) && (tx == 0 || x <= tx)) ? "met" : "MISSED" }')
  local target="<= ${target_ms} ms"
  [ "$target_mb" = 0 ] || target="$target, <= ${target_mb} MiB"
  [ "$target_x" = 0 ] || target="$target, <= ${target_x}x wc"
  printf '%-26s %10s %8s %10s %10s %9s %8s %6s  %-34s %s\n' "$name" "$n" "$size" "$med" "$min" "$rss" \
    "$wc_med" "$ratio" "$target" "$ok"
}
# 1,000 times faster than rocprofiler-compute's 11.5 s on this folder.
row vcopy/MI200 "$SHARED/workloads/vcopy/MI200" 11.5 0 0
row vcopy/MI300X_A1 "$SHARED/workloads/vcopy/MI300X_A1" 100 0 0
row "synthetic MI200 x1000" "$WORK/mi200_1000" 100 0 0
row "synthetic MI200 x10000" "$WORK/mi200_10000" 300 0 0
row "synthetic MI200 x100000" "$WORK/mi200_100000" 600 600 6
row "synthetic MI300X x100000" "$WORK/mi300x_100000" 1500 1536 6
# The million's goal is time and memory (no multiple of wc -l).
[ -z "$BIG" ] || row "synthetic MI200 x1000000" "$BIG" 8000 2048 0

# The loader alone (bench/load.c) next to reading the file with cat and wc -l.
echo
printf '%-26s %-12s %10s %10s\n' file pass "median ms" "MB/s"
loader() {
  local name=$1 file=$2 bytes ms
  bytes=$(stat -c %s "$file")
  cat "$file" >/dev/null
  for tool in cat "wc -l"; do
    read -r ms _ _ <<<"$(build-bench/measure "$RUNS" $tool "$file")"
    printf '%-26s %-12s %10s %10s\n' "$name" "$tool" "$ms" "$(awk -v b="$bytes" -v m="$ms" 'BEGIN { printf "%.0f", b / 1e6 / (m / 1e3) }')"
  done
  build-bench/load "$file" "$RUNS" | while read -r pass ms mbs; do
    printf '%-26s %-12s %10s %10s\n' "$name" "$pass" "$ms" "$mbs"
  done
}
loader "synthetic MI200 x100000" "$WORK/mi200_100000/pmc_perf.csv"
loader "synthetic MI300X x100000" "$WORK/mi300x_100000/pmc_perf.csv"
[ -z "$BIG" ] || loader "synthetic MI200 x1000000" "$BIG/pmc_perf.csv"
