#!/usr/bin/env bash
# Benchmark of MPI profiles read as one workload: RANKS simulated ranks of
# 1,000 dispatches each, every rank's part (DIR/rank.R/lumen.db, as
# `mpirun -np RANKS lumen profile -w DIR` writes them) made from a real
# recording scaled to 1,000 dispatches (bench/scale_workload.c), with its
# rank and host on every row and kernel times that differ by rank (up to
# 6 % longer), so the rank table has an imbalance to find. For each size:
#  - import: `lumen db import` of the folder into a new SQLite store (the
#    parts merged on the fly, the rows written, the default view kept),
#  - analyze: `lumen analyze -w DIR`, every panel, one process,
#  - one rank: `lumen analyze -w DIR --rank 0`,
# with wall time and peak resident memory (bench/measure.c). Everything is
# written under $TMPDIR (default /tmp) and removed at the end.
#
# Usage: bench/mpi_scale.sh [RANKS...]   (default: 256 1024)
# LUMEN_BENCH_RECORDING=ipblocks_SQ/MI200 takes another shared workload
# (default vcopy/MI200, every counter: 1,022 columns per dispatch).
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDING=${LUMEN_BENCH_RECORDING:-vcopy/MI200}
PER_RANK=1000
SIZES=${*:-256 1024}
. bench/lib.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-mpi-XXXXXX")
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT

# One rank's part: the recording scaled, as a lumen workload folder.
build-bench/scale_workload "$SHARED/workloads/$RECORDING" "$PER_RANK" "$WORK/csv"
"$LUMEN" db import --db "$WORK/scratch.db" -w "$WORK/csv" -n part >/dev/null
"$LUMEN" db export --db "$WORK/scratch.db" part -w "$WORK/part" >/dev/null
columns=$(sqlite3 "$WORK/part/lumen.db" "SELECT COUNT(*) FROM column_data")

make_parts() { # RANKS DIR: the ranks' parts, 8 ranks per host
  local n=$1 dir=$2 r
  mkdir -p "$dir"
  for ((r = 0; r < n; r++)); do
    mkdir "$dir/rank.$r"
    cp "$WORK/part/lumen.db" "$dir/rank.$r/lumen.db"
    sqlite3 "$dir/rank.$r/lumen.db" "UPDATE dispatch SET rank = $r, host = 'node$((r / 8))',
      end_ns = start_ns + (end_ns - start_ns) * (1 + ($r % 7) / 100.0)"
  done
}

printf 'recording %s: %d counter columns per dispatch, %d dispatches per rank\n\n' "$RECORDING" "$columns" "$PER_RANK"
printf '%-7s %10s %9s %11s %9s %11s %9s %11s %9s  %s\n' ranks dispatches "parts MB" "import ms" "peak MiB" \
  "analyze ms" "peak MiB" "--rank 0 ms" "peak MiB" "goal (1,024 ranks: analyze <= 10 s, <= 4 GB)"
for n in $SIZES; do
  dir="$WORK/ranks_$n"
  make_parts "$n" "$dir"
  mb=$(du -sm "$dir" | cut -f1)
  read -r imp_ms _ imp_rss <<<"$(build-bench/measure 1 "$LUMEN" db import --db "$WORK/store_$n.db" -w "$dir" -n "r$n")"
  rm -f "$WORK/store_$n.db"
  "$LUMEN" analyze -w "$dir" >/dev/null 2>&1 # warm the page cache
  read -r an_ms _ an_rss <<<"$(build-bench/measure 1 "$LUMEN" analyze -w "$dir")"
  read -r one_ms _ one_rss <<<"$(build-bench/measure 1 "$LUMEN" analyze -w "$dir" --rank 0)"
  verdict=""
  if [ "$n" = 1024 ]; then
    verdict=$(awk -v t="$an_ms" -v m="$an_rss" 'BEGIN { print (t <= 10000 && m <= 4096) ? "met" : "MISSED" }')
  fi
  printf '%-7s %10s %9s %11s %9s %11s %9s %11s %9s  %s\n' "$n" "$((n * PER_RANK))" "$mb" "$imp_ms" "$imp_rss" \
    "$an_ms" "$an_rss" "$one_ms" "$one_rss" "$verdict"
  rm -rf "$dir"
done
