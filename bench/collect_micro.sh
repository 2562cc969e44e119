#!/usr/bin/env bash
# Micro-benchmark of the tool library's per-dispatch path on the simulated
# runtime: N launches (default 1,000,000) of one kernel from 1 and from 8
# threads, run three ways: without the tool (the simulated device's own
# time), with the tool and a kernel filter that selects nothing, and with
# the tool collecting one counter set on every dispatch (application
# replay, as `lumen profile` configures it). The tool's cost per dispatch
# is the difference to the run without it, divided by N; the collected
# figure still includes the simulated device's making of the counter
# records, so it is an upper bound. Prints a table with the targets, the
# peak memory of the application and the size of its records, and the
# same difference in CPU time (user + system, all threads: on a loaded
# machine the steadier of the two).
#
# Usage: bench/collect_micro.sh [N] [RUNS]     (median of RUNS, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
RUNS=${2:-3}
# LUMEN_BENCH_BUILD=DIR: use an existing build folder instead of build-bench.
if [ -n "${LUMEN_BENCH_BUILD:-}" ]; then
  B=$LUMEN_BENCH_BUILD
  SHARED=${LUMEN_SHARED_DIR:-../shared}
else
  . bench/lib.sh
  B=build-bench
fi
cmake --build "$B" -j "$(nproc)" --target collect_micro lumen_tool >/dev/null
BIN=$B/bench/collect_micro
TOOL=$B/src/tool/liblumen_tool.so
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-collect-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export LUMEN_SIM_RECORDING="$SHARED/workloads/vcopy/MI200"
export LUMEN_SIMSDK_CLOCKS=none
KERNEL='vecCopy(double*, double*, double*, int, int) [clone .kd]'
COUNTERS="SQ_WAVES SQ_BUSY_CYCLES GRBM_COUNT GRBM_GUI_ACTIVE"
# shellcheck disable=SC2086
"$BIN" config "$WORK/none.cfg" gfx90a "$WORK/none.rec" 'no-such-kernel' $COUNTERS
# shellcheck disable=SC2086
"$BIN" config "$WORK/all.cfg" gfx90a "$WORK/all.rec" - $COUNTERS

# one CASE THREADS: median seconds, peak KiB, records bytes and median CPU
# seconds of RUNS runs
one() {
  local case=$1 threads=$2 times=() cpus=() rss=0 bytes=0
  for _ in $(seq 1 "$RUNS"); do
    rm -f "$WORK"/*.rec.*
    local env=()
    [ "$case" = device ] || env=(LD_PRELOAD="$TOOL" LUMEN_TOOL_CONFIG="$WORK/$case.cfg")
    # (the application's stdout holds its time; the runtime may print notes)
    times+=("$(env "${env[@]}" /usr/bin/time -f '%M %U %S' -o "$WORK/rss" "$BIN" launch "$N" "$threads" "$KERNEL" \
      2>/dev/null | grep -E '^[0-9.]+$' | tail -1)")
    local r u s
    read -r r u s <<<"$(tail -1 "$WORK/rss")"
    cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')")
    [ "$r" -gt "$rss" ] && rss=$r
    bytes=$(cat "$WORK"/*.rec.* 2>/dev/null | wc -c)
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p" | tr '\n' ' '
  echo "$rss $bytes $(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p")"
}

printf '%-34s %8s %10s %12s %10s %10s %12s %-10s %s\n' case threads "wall s" "µs/dispatch" "CPU µs" "peak MiB" \
  "records MB" target result
for threads in 1 8; do
  read -r t_dev rss_dev _ cpu_dev <<<"$(one device "$threads")"
  printf '%-34s %8s %10.3f %12s %10s %10d %12s\n' "simulated device alone" "$threads" "$t_dev" - - $((rss_dev / 1024)) -
  for case in none all; do
    read -r t rss bytes cpu <<<"$(one "$case" "$threads")"
    us=$(awk -v t="$t" -v d="$t_dev" -v n="$N" 'BEGIN { printf "%.3f", (t - d) * 1e6 / n }')
    cpu_us=$(awk -v t="$cpu" -v d="$cpu_dev" -v n="$N" 'BEGIN { printf "%.3f", (t - d) * 1e6 / n }')
    if [ "$case" = none ]; then name="unselected (filter matches none)"; target=1; else name="collected (one set, every dispatch)"; target=5; fi
    ok=$(awk -v u="$us" -v t="$target" 'BEGIN { print (u <= t) ? "met" : "MISSED" }')
    printf '%-34s %8s %10.3f %12s %10s %10d %12.1f %-10s %s\n' "$name" "$threads" "$t" "$us" "$cpu_us" $((rss / 1024)) \
      "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "<= $target µs" "$ok"
  done
done
