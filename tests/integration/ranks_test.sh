#!/usr/bin/env bash
# The rank.R parts of an MPI profile read for analysis: `lumen analyze -w
# DIR` reads from each part's database only the counter columns the
# analysis evaluates, and with --rank only the selected ranks' parts
# (--load whole reads every column of every part), and must print the
# same bytes either way, on parts made from several shared workloads
# (three architectures), in every output mode and with the filters. The
# parts are what `lumen profile` writes (a lumen database per rank),
# made here through `lumen db import` and `lumen db export`, each rank's
# rows given their rank, a host and kernel times that differ by rank.
# Usage: ranks_test.sh LUMEN SHARED_DIR TEST_NAME
set -u
LUMEN=$1
SHARED=$2
NAME=$3
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-rk-XXXXXX)
trap 'chmod -R u+w "$TMP"; rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
command -v sqlite3 >/dev/null 2>&1 || { echo "SKIP: sqlite3 not found"; exit 77; }

# parts WORKLOAD DIR N: N ranks' parts of the shared WORKLOAD in DIR.
parts() {
  local src=$1 dir=$2 n=$3 r
  rm -rf "$TMP/scratch.db" "$TMP/one"
  "$LUMEN" db import --db "$TMP/scratch.db" -w "$src" -n part >/dev/null 2>"$TMP/err" || fail "import $src: $(cat "$TMP/err")"
  "$LUMEN" db export --db "$TMP/scratch.db" part -w "$TMP/one" >/dev/null 2>"$TMP/err" || fail "export: $(cat "$TMP/err")"
  mkdir -p "$dir"
  for ((r = 0; r < n; r++)); do
    mkdir "$dir/rank.$r"
    cp "$TMP/one/lumen.db" "$dir/rank.$r/lumen.db"
    sqlite3 "$dir/rank.$r/lumen.db" "UPDATE dispatch SET rank = $r, host = 'node$((r / 2))',
      end_ns = start_ns + (end_ns - start_ns) * (1 + $r / 50.0)" || fail "cannot edit rank $r"
  done
}

# same ARGS...: the output (and status, and stderr) with the analysis's
# columns and with every column are equal.
same() {
  "$LUMEN" analyze "$@" >"$TMP/sel.out" 2>"$TMP/sel.err"
  local s=$?
  "$LUMEN" analyze --load whole "$@" >"$TMP/all.out" 2>"$TMP/all.err"
  local a=$?
  [ "$s" -eq "$a" ] || fail "exit status $s with the analysis's columns, $a with all: $* ($(head -c 300 "$TMP/sel.err"))"
  cmp -s "$TMP/sel.out" "$TMP/all.out" ||
    fail "output differs: $* ($(diff "$TMP/sel.out" "$TMP/all.out" | head -5 | cut -c1-300))"
  cmp -s "$TMP/sel.err" "$TMP/all.err" ||
    fail "stderr differs: $* ($(diff "$TMP/sel.err" "$TMP/all.err" | head -5 | cut -c1-300))"
}

# columns ARGS...: the pmc_perf column count of the merged workload (-v).
columns() {
  "$LUMEN" analyze -v "$@" 2>&1 >/dev/null | sed -n 's/.* dispatches, \([0-9]*\) columns$/\1/p' | head -1
}

case $NAME in
columns)
  n=0
  for wl in vcopy/MI200 vcopy/MI100 vcopy/MI300X_A1 ipblocks_SQ/MI200 mem_levels_L2/MI200 _mix/mix_MI200 \
    kernel_names/MI200; do
    dir="$TMP/r$n"
    parts "$WL/$wl" "$dir" 3
    [ "$(ls "$dir")" = "$(printf 'rank.0\nrank.1\nrank.2')" ] || fail "parts of $wl"
    same -w "$dir"
    same -w "$dir" --format json
    same -w "$dir" --format csv -o "$TMP/csv_$n"
    same -w "$dir" -b 2 -b 7.1 --norm per_kernel
    same -w "$dir" --rank 1 --format json
    same -w "$dir" --rank 0,2 -d 0:2
    same -w "$dir" -k . --kernel-index 0 --format json
    same -w "$dir" --summary --format json
    same -w "$dir" --weight time --format json
    same -w "$TMP/one" --format json # one lumen database, not parts
    # The selection holds fewer columns than the parts (every column).
    sel=$(columns -w "$dir") all=$(columns -w "$dir" --load whole)
    [ -n "$sel" ] && [ -n "$all" ] && [ "$sel" -lt "$all" ] || fail "$wl: $sel columns read, $all with every column"
    n=$((n + 1))
  done
  # A comparison of two folders of parts, and one with a workload folder.
  same -w "$TMP/r0" -w "$TMP/r3"
  same -w "$WL/vcopy/MI200" -w "$TMP/r0" --format json
  # A folder of CSV files among the parts: read whole, as before.
  cp -r "$WL/ipblocks_SQ/MI200" "$TMP/r0/rank.3" && chmod -R u+w "$TMP/r0/rank.3"
  same -w "$TMP/r0" --format json
  same -w "$TMP/r0" --rank 3 --format json
  ;;
rank_parts)
  # --rank reads only the selected ranks' parts (and the first part's
  # system information, the merged workload's); --load whole reads every
  # part. Ranks of different recordings of one architecture: other
  # kernels, rooflines and system information (rank 1 on another host).
  dir="$TMP/mixed"
  i=0
  for wl in vcopy/MI200 _mix/mix_MI200 ipblocks_SQ/MI200 vcopy/MI200 mem_levels_L2/MI200; do
    parts "$WL/$wl" "$TMP/p$i" 1
    mkdir -p "$dir" && mv "$TMP/p$i/rank.0" "$dir/rank.$i"
    sqlite3 "$dir/rank.$i/lumen.db" "UPDATE dispatch SET rank = $i" || fail "cannot edit rank $i"
    i=$((i + 1))
  done
  sqlite3 "$dir/rank.1/lumen.db" "UPDATE sysinfo SET value = 'node-b' WHERE key = 'hostname'" || fail "host"
  for sel in 0 1 2 4 1,3 1:3 '>0' 0,2 3:5 '1:5:2'; do
    same -w "$dir" --rank "$sel"
    same -w "$dir" --rank "$sel" --format json
    same -w "$dir" --rank "$sel" --format csv -o "$TMP/csv_$i" && i=$((i + 1))
    same -w "$dir" --rank "$sel" -k vecCopy --instance 0 --format json
    same -w "$dir" --rank "$sel" -d 0:1 --norm per_kernel --format json
  done
  # The selection reads fewer rows, and says how many there are in all.
  rows=$("$LUMEN" analyze -v -w "$dir" --rank 2 2>&1 >/dev/null | sed -n 's/.*gfx90a, \([0-9]*\) dispatches.*/\1/p')
  all=$("$LUMEN" analyze -v -w "$dir" --rank 2 --load whole 2>&1 >/dev/null | sed -n 's/.*gfx90a, \([0-9]*\) dispatches.*/\1/p')
  [ -n "$rows" ] && [ -n "$all" ] && [ "$rows" -lt "$all" ] || fail "--rank 2 read $rows dispatches, $all with every part"
  # A rank that is not there: every part is read, the error names them.
  same -w "$dir" --rank 7
  run analyze -w "$dir" --rank 7
  expect_status 1
  expect_err "ranks in the data: 0:5"
  # A comparison with a selection per workload.
  same -w "$dir" -w "$dir" --rank 1 --rank 3 --format json
  # Under --mpi the other processes read the same selection.
  if command -v mpirun >/dev/null 2>&1; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # Open MPI's own leaks
    for sel in 1,3 2:5 4 '>0'; do
      timeout 120 mpirun --oversubscribe --allow-run-as-root -np 2 "$LUMEN" analyze --mpi -w "$dir" --rank "$sel" \
        --format json >"$TMP/mpi.out" 2>"$TMP/mpi.err"
      status=$?
      grep -q "built without MPI" "$TMP/mpi.err" && break
      [ "$status" -eq 0 ] || fail "--mpi --rank $sel: exit status $status ($(head -c 300 "$TMP/mpi.err"))"
      "$LUMEN" analyze --load whole -w "$dir" --rank "$sel" --format json >"$TMP/all.out" 2>&1
      cmp -s "$TMP/mpi.out" "$TMP/all.out" || fail "--mpi --rank $sel differs from one process reading every part"
    done
  fi
  # A part that cannot be read is an error even when not selected.
  mkdir "$TMP/bad" && cp -r "$dir"/rank.* "$TMP/bad/" && chmod -R u+w "$TMP/bad"
  printf 'not a database' >"$TMP/bad/rank.3/lumen.db"
  run analyze -w "$TMP/bad" --rank 1
  [ "$STATUS" -ne 0 ] || fail "a damaged part left out of the selection went unnoticed"
  expect_err "rank.3"
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo "ok"
