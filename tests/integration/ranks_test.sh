#!/usr/bin/env bash
# The rank.R parts of an MPI profile read for analysis: `lumen analyze -w
# DIR` reads from each part's database only the counter columns the
# analysis evaluates (--load whole reads every column), and must print the
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
  cmp -s "$TMP/sel.out" "$TMP/all.out" || fail "output differs: $* ($(diff "$TMP/sel.out" "$TMP/all.out" | head -5))"
  cmp -s "$TMP/sel.err" "$TMP/all.err" || fail "stderr differs: $* ($(diff "$TMP/sel.err" "$TMP/all.err" | head -5))"
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
*)
  fail "unknown test $NAME"
  ;;
esac
echo "ok"
