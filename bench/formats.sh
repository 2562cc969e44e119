#!/usr/bin/env bash
# Reading other tools' files at scale: a generated rocprofv3 run (N
# dispatches x 20 counters) as a counter collection CSV (one row per
# dispatch and counter, about 3.3 KB per dispatch), as a rocpd database
# (tests/integration/make_rocpd.py: rocpd's tables and the views over
# them; case rocpd-plain: plain tables under the view names) and as
# rocprofv3's JSON output (tests/integration/make_v3_json.py), each read by
# `lumen analyze --list-stats` (the whole run folded per dispatch, then
# the top-kernel tables), against one `wc -l` pass over the CSV of the same
# run, everything from the page cache (one untimed run first). The target:
# within 8x of wc -l, memory bounded by the folded table (not the file).
# Prints the median and best of RUNS, peak memory and CPU time.
#
# Usage: bench/formats.sh [N] [RUNS] [CASES]   (default 200000 dispatches, 3
#        runs, CASES "csv rocpd json"; the issue's case is N=1000000, a
#        3.3 GB file)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
RUNS=${2:-3}
CASES=${3:-"csv rocpd json"}
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
read -r wmed wmin _ wcpu <<<"$("$MEASURE" "$RUNS" wc -l "$FILE")"
printf '%-28s %10s %7s %9s %9s %8s %9s %9s %7s %7s  %s\n' case dispatches MB "med ms" "min ms" "RSS MiB" \
  "wc ms" "cpu ms" "x wc" "x cpu" "<= 8x wc"

# row NAME PATH [ARGS...]: time lumen on PATH against wc -l of the CSV.
row() {
  local name=$1 path=$2
  shift 2
  local mb med min rss cpu ratio cratio ok
  mb=$(du -m "$path" | cut -f1)
  "$LUMEN" analyze -w "$path" "$@" --list-stats >/dev/null 2>&1
  read -r med min rss cpu <<<"$("$MEASURE" "$RUNS" "$LUMEN" analyze -q -w "$path" "$@" --list-stats)"
  ratio=$(awk -v a="$med" -v b="$wmed" 'BEGIN { printf "%.1f", (b > 0) ? a / b : 0 }')
  cratio=$(awk -v a="$cpu" -v b="$wcpu" 'BEGIN { printf "%.1f", (b > 0) ? a / b : 0 }')
  ok=$(awk -v r="$ratio" 'BEGIN { print r <= 8 ? "met" : "MISSED" }')
  printf '%-28s %10s %7s %9s %9s %8s %9s %9s %7s %7s  %s\n' "$name" "$N" "$mb" "$med" "$min" "$rss" "$wmed" \
    "$cpu" "$ratio" "$cratio" "$ok"
}

for c in $CASES; do
  case $c in
  csv) row "rocprofv3 counter_collection" "$FILE" --arch gfx942 ;;
  rocpd)
    python3 tests/integration/make_rocpd.py "$FILE" "$WORK/1_results.db" gfx942
    row "rocpd database" "$WORK/1_results.db"
    ;;
  rocpd-plain)
    python3 tests/integration/make_rocpd.py "$FILE" "$WORK/1_plain.db" gfx942 --plain
    row "rocpd plain tables" "$WORK/1_plain.db"
    ;;
  json)
    python3 tests/integration/make_v3_json.py "$FILE" "$WORK/1_results.json" gfx942
    row "rocprofv3 JSON" "$WORK/1_results.json"
    ;;
  esac
done
