#!/usr/bin/env bash
# Reading other tools' files at scale: a generated rocprofv3 counter
# collection (N dispatches x 20 counters, one row each, about 3.3 KB per
# dispatch) read by `lumen analyze --list-stats` (the whole file folded
# per dispatch, then the top-kernel tables), against one `wc -l` pass over
# the same file, both from the page cache (one untimed run first). The
# target: within 8x of wc -l, memory bounded by the folded table (not the
# file). Prints the median and best of RUNS, peak memory and CPU time.
#
# Usage: bench/formats.sh [N] [RUNS]     (default 200000 dispatches, 3 runs;
#        the issue's case is N=1000000, a 3.3 GB file)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
RUNS=${2:-3}
if [ -n "${LUMEN_BENCH_BUILD:-}" ]; then
  LUMEN=$LUMEN_BENCH_BUILD/src/cli/lumen
  MEASURE=$LUMEN_BENCH_BUILD/measure
  cc -O2 -o "$MEASURE" bench/measure.c
else
  . bench/lib.sh
  MEASURE=build-bench/measure
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-formats-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FILE=$WORK/1_counter_collection.csv
python3 bench/gen_rocprofv3.py "$N" "$FILE"
MB=$(du -m "$FILE" | cut -f1)
"$LUMEN" analyze -w "$FILE" --arch gfx942 --list-stats >/dev/null 2>&1
read -r med min rss cpu <<<"$("$MEASURE" "$RUNS" "$LUMEN" analyze -q -w "$FILE" --arch gfx942 --list-stats)"
read -r wmed wmin _ wcpu <<<"$("$MEASURE" "$RUNS" wc -l "$FILE")"
ratio=$(awk -v a="$med" -v b="$wmed" 'BEGIN { printf "%.1f", (b > 0) ? a / b : 0 }')
cratio=$(awk -v a="$cpu" -v b="$wcpu" 'BEGIN { printf "%.1f", (b > 0) ? a / b : 0 }')
ok=$(awk -v r="$ratio" 'BEGIN { print r <= 8 ? "met" : "MISSED" }')
printf '%-28s %10s %7s %9s %9s %8s %9s %9s %7s %7s  %s\n' case dispatches MB "med ms" "min ms" "RSS MiB" \
  "wc ms" "cpu ms" "x wc" "x cpu" "<= 8x wc"
printf '%-28s %10s %7s %9s %9s %8s %9s %9s %7s %7s  %s\n' "rocprofv3 counter_collection" "$N" "$MB" "$med" \
  "$min" "$rss" "$wmed" "$cpu" "$ratio" "$cratio" "$ok"
