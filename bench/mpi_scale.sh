#!/usr/bin/env bash
# Benchmark of MPI profiles read as one workload: RANKS simulated ranks of
# 1,000 dispatches each, every rank's part (DIR/rank.R/lumen.db, as
# `mpirun -np RANKS lumen profile -w DIR` writes them) made from a real
# recording scaled to 1,000 dispatches (bench/scale_workload.c), with its
# rank and host on every row and kernel times that differ by rank (up to
# 6 % longer), so the rank table has an imbalance to find. For each size:
#  - import: `lumen db import` of the folder into a new SQLite store (the
#    parts merged on the fly, the rows written, the default view kept),
#  - analyze: `lumen analyze -w DIR`, every panel, one process (its reader
#    threads load the parts side by side),
#  - one rank: `lumen analyze -w DIR --rank 0` (which reads rank 0's part
#    alone),
#  - K=2: `mpirun -np 2 lumen analyze --mpi -w DIR` (two processes read the
#    parts, process 0 merges and evaluates; skipped without mpirun),
# with wall time, CPU time (user + system of every process of the command)
# and peak resident memory of its largest process (bench/measure.c).
#
# Larger K, estimated (Amdahl): the parts are the parallel share and
# everything else is serial on process 0. A K=2 run with --self-time gives
# process 0's own parts (count and time: t_part, the time to load one) and
# its waits for the others; the serial time S is the rest of its total:
# the pass over every part's shape, receiving, unpacking and merging every
# part (a cost per byte that does not shrink with K), the merged tables'
# statistics, the evaluation and the output. Then T(K) = S + ceil(N / K) *
# t_part (each process loads N / K parts while process 0 merges), with S as
# the floor however many processes read; mpirun's start (about 0.1 s here)
# comes on top. The estimate assumes one core per process and a file
# system that serves K readers at once; on this machine (2 cores, shared
# with other work) the two processes compete for the cores, so the
# measured K=2 time is above what two nodes would take.
# Everything is written under $TMPDIR (default /tmp) and removed at the end.
#
# Usage: bench/mpi_scale.sh [RANKS...]   (default: 256 1024)
# LUMEN_BENCH_RECORDING=ipblocks_SQ/MI200 takes another shared workload
# (default vcopy/MI200, every counter: 1,173 stored counter columns per
# dispatch; analysis reads 639 of its 1,025 pmc_perf columns);
# LUMEN_BENCH_NO_IMPORT=1 leaves out the import; LUMEN_BENCH_VARY=1 makes
# the counters differ from rank to rank (below); LUMEN_BENCH_PARTS=DIR
# keeps the generated parts in DIR/ranks_N and reuses them when there.
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDING=${LUMEN_BENCH_RECORDING:-vcopy/MI200}
PER_RANK=1000
SIZES=${*:-256 1024}
. bench/lib.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-mpi-XXXXXX")
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT

# One rank's part: the recording scaled, as a lumen workload folder; with
# LUMEN_BENCH_VARY=1, eight of them whose counters are scaled by 1, 1.125,
# ..., 1.875 (rank r takes part r mod 8), so that no counter but those of
# idle blocks holds one value in every part.
VARIANTS=1
[ -n "${LUMEN_BENCH_VARY:-}" ] && VARIANTS=8
for ((v = 0; v < VARIANTS; v++)); do
  build-bench/scale_workload "$SHARED/workloads/$RECORDING" "$PER_RANK" "$WORK/csv$v" "$(awk -v v=$v 'BEGIN { print 1 + v / 8 }')"
  "$LUMEN" db import --db "$WORK/scratch.db" -w "$WORK/csv$v" -n "part$v" >/dev/null
  "$LUMEN" db export --db "$WORK/scratch.db" "part$v" -w "$WORK/part$v" >/dev/null
done
columns=$(sqlite3 "$WORK/part0/lumen.db" "SELECT COUNT(*) FROM column_data")

make_parts() { # RANKS DIR: the ranks' parts, 8 ranks per host
  local n=$1 dir=$2 r
  mkdir -p "$dir"
  for ((r = 0; r < n; r++)); do
    mkdir "$dir/rank.$r"
    cp "$WORK/part$((r % VARIANTS))/lumen.db" "$dir/rank.$r/lumen.db"
    sqlite3 "$dir/rank.$r/lumen.db" "UPDATE dispatch SET rank = $r, host = 'node$((r / 8))',
      end_ns = start_ns + (end_ns - start_ns) * (1 + ($r % 7) / 100.0)"
  done
}

MPIRUN=""
if command -v mpirun >/dev/null 2>&1; then
  MPIRUN="mpirun --oversubscribe"
  [ "$(id -u)" -eq 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
fi

printf 'recording %s: %d counter columns per dispatch, %d dispatches per rank\n\n' "$RECORDING" "$columns" "$PER_RANK"
printf '%-6s %10s %8s | %10s %8s | %11s %9s %8s | %11s %9s %8s | %11s %9s %8s | %11s %9s %8s  %s\n' ranks dispatches \
  "parts MB" "import ms" "peak MiB" "analyze ms" "CPU ms" "peak MiB" "--rank 0 ms" "CPU ms" "peak MiB" \
  "K=2 ms" "CPU ms" "peak MiB" "t_part ms" "serial ms" "" "goal (1,024 ranks, one process: <= 10 s, <= 4 GB)"
estimates=""
for n in $SIZES; do
  dir="$WORK/ranks_$n"
  [ -n "${LUMEN_BENCH_PARTS:-}" ] && dir="$LUMEN_BENCH_PARTS/ranks_$n${LUMEN_BENCH_VARY:+_vary}"
  [ -d "$dir" ] || make_parts "$n" "$dir"
  mb=$(du -smL "$dir" | cut -f1)
  imp_ms=- imp_rss=-
  if [ -z "${LUMEN_BENCH_NO_IMPORT:-}" ]; then
    read -r imp_ms _ imp_rss _ <<<"$(build-bench/measure 1 "$LUMEN" db import --db "$WORK/store_$n.db" -w "$dir" -n "r$n")"
    rm -f "$WORK/store_$n.db"
  fi
  "$LUMEN" analyze -w "$dir" >/dev/null 2>&1 # warm the page cache
  read -r an_ms _ an_rss an_cpu <<<"$(build-bench/measure 1 "$LUMEN" analyze -w "$dir")"
  read -r one_ms _ one_rss one_cpu <<<"$(build-bench/measure 1 "$LUMEN" analyze -w "$dir" --rank 0)"
  k2_ms=- k2_rss=- k2_cpu=- t_part=- serial=-
  if [ -n "$MPIRUN" ]; then
    # shellcheck disable=SC2086
    read -r k2_ms _ k2_rss k2_cpu <<<"$(build-bench/measure 1 $MPIRUN -np 2 "$LUMEN" analyze --mpi -w "$dir")"
    # shellcheck disable=SC2086
    read -r t_part serial <<<"$($MPIRUN -np 2 "$LUMEN" analyze --mpi -w "$dir" --self-time 2>&1 >/dev/null | awk '
      /mpi: load own parts/ { own = $(NF - 2); count = substr($NF, 2) + 0 }
      /mpi: wait for the others/ { wait = $(NF - 2) }
      $1 == "total" { total = $2 }
      END { printf "%.1f %.0f\n", count ? own / count : 0, total - own - wait }')"
    line="  $n ranks: T(K) = $serial + ceil($n / K) * $t_part ms:"
    for k in 4 8 16 64 256 1024; do
      [ "$k" -gt "$n" ] && break
      line="$line  K=$k $(awk -v s="$serial" -v p="$t_part" -v n="$n" -v k="$k" 'BEGIN { printf "%.1f s", (s + int((n + k - 1) / k) * p) / 1000 }')"
    done
    estimates="$estimates$line
"
  fi
  verdict=""
  if [ "$n" = 1024 ]; then
    verdict=$(awk -v t="$an_ms" -v m="$an_rss" 'BEGIN { print (t <= 10000 && m <= 4096) ? "met" : "MISSED" }')
  fi
  printf '%-6s %10s %8s | %10s %8s | %11s %9s %8s | %11s %9s %8s | %11s %9s %8s | %11s %9s %8s  %s\n' "$n" \
    "$((n * PER_RANK))" "$mb" "$imp_ms" "$imp_rss" "$an_ms" "$an_cpu" "$an_rss" "$one_ms" "$one_cpu" "$one_rss" \
    "$k2_ms" "$k2_cpu" "$k2_rss" "$t_part" "$serial" "" "$verdict"
  [ -n "${LUMEN_BENCH_PARTS:-}" ] || rm -rf "$dir"
done
if [ -n "$estimates" ]; then
  printf '\nlarger K, estimated (Amdahl; method in the header):\n%s' "$estimates"
else
  printf '\nno mpirun: K=2 and the estimate for larger K left out (scripts/deps.sh installs Open MPI)\n'
fi
