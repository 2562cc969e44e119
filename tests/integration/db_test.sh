#!/usr/bin/env bash
# End-to-end tests of `lumen db` and `lumen analyze --db`, on a SQLite store
# and, when LUMEN_TEST_PG names a PostgreSQL server, on PostgreSQL too.
# Usage: db_test.sh LUMEN SIMAPP SHARED_DIR TEST_NAME
set -u
LUMEN=$1
APP=$2
SHARED=$3
NAME=$4
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-dbt-XXXXXX)
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
same_tables() { # DIR_A DIR_B: every csv table equal (1.1 may differ in the path only)
  for f in "$1"/*.csv; do
    cmp -s "$f" "$2/$(basename "$f")" || fail "table $(basename "$f") differs: $(diff "$f" "$2/$(basename "$f")" | head -4)"
  done
  [ "$(ls "$1" | wc -l)" -eq "$(ls "$2" | wc -l)" ] || fail "table counts differ"
}

suite() {
  local DB=$1
  # Start from an empty store.
  run db list --db "$DB" --format csv
  if [ "$STATUS" -eq 0 ]; then
    tail -n +2 "$TMP/out" | cut -d'"' -f2 | while read -r n; do
      [ -n "$n" ] && "$LUMEN" db rm --db "$DB" "$n" >/dev/null
    done
  fi
  case $NAME in
  import_list_rm)
    run db import --db "$DB" -w "$WL/vcopy/MI200" -w "$WL/_mix/mix_MI200"
    expect_status 0
    expect_out "imported as 'vcopy_MI200' (3 dispatches)"
    expect_out "imported as 'mix_MI200' (40 dispatches)"
    run db import --db "$DB" -w "$WL/vcopy/MI200"
    expect_status 0
    expect_out "already in the store as 'vcopy_MI200'"
    run db list --db "$DB"
    expect_status 0
    [ "$(grep -c 'gfx90a' "$TMP/out")" -eq 2 ] || fail "list: $(cat "$TMP/out")"
    run db import --db "$DB" -w "$WL/_mix/mix_MI300X_A1" -n "mix'; DROP TABLE workload; --" --team "a b"
    expect_status 0
    run db list --db "$DB" --format csv
    expect_out "\"mix'; DROP TABLE workload; --\",\"a b\",gfx942,MI300X_A1,24,omniperf,"
    run db rm --db "$DB" "mix'; DROP TABLE workload; --" vcopy_MI200
    expect_status 0
    run db rm --db "$DB" vcopy_MI200
    expect_status 1
    one_line_err
    expect_err "no workload named 'vcopy_MI200' in the store"
    run db list --db "$DB" --format csv
    [ "$(tail -n +2 "$TMP/out" | wc -l)" -eq 1 ] || fail "after rm: $(cat "$TMP/out")"
    ;;
  analyze_same)
    for w in vcopy/MI200 vcopy/MI300X_A1 _mix/mix2gpu_MI200 _mix/mix_MI100 _mix/mix_MI200; do
      n=${w//\//_}
      run db import --db "$DB" -w "$WL/$w" -n "$n"
      expect_status 0
      for opts in "" "-k vec --norm per_kernel" "-d 0:2 --norm per_second" "--list-stats -g 2"; do
        rm -rf "$TMP/a" "$TMP/b"
        # shellcheck disable=SC2086
        "$LUMEN" analyze -w "$WL/$w" $opts --format csv -o "$TMP/a" 2>"$TMP/ea"
        sa=$?
        # shellcheck disable=SC2086
        "$LUMEN" analyze --db "$DB" -w "$n" $opts --format csv -o "$TMP/b" 2>"$TMP/eb"
        sb=$?
        [ "$sa" -eq "$sb" ] || fail "$w $opts: exit $sa from the folder, $sb from the store ($(cat "$TMP/eb"))"
        [ "$sa" -eq 0 ] && same_tables "$TMP/a" "$TMP/b"
      done
      # The text report with its summary (roofline places, findings): from
      # the columns the analysis reads (nothing kept) and from the kept
      # default view, the same as from the folder.
      "$LUMEN" analyze -w "$WL/$w" --width 0 >"$TMP/ta" 2>&1
      LUMEN_STORE_CACHE=off "$LUMEN" analyze --db "$DB" -w "$n" --width 0 >"$TMP/tb" 2>&1
      "$LUMEN" analyze --db "$DB" -w "$n" --width 0 >"$TMP/tc" 2>&1
      grep -q "Summary\|summary" "$TMP/ta" || fail "$w: no summary in the text report"
      cmp -s "$TMP/ta" "$TMP/tb" || fail "$w: text report from the columns differs: $(diff "$TMP/ta" "$TMP/tb" | head -4)"
      cmp -s "$TMP/ta" "$TMP/tc" || fail "$w: text report from the kept view differs: $(diff "$TMP/ta" "$TMP/tc" | head -4)"
      # Twice: the second answer comes from the stored analysis, the same.
      rm -rf "$TMP/c"
      "$LUMEN" analyze --db "$DB" -w "$n" -k vec --norm per_kernel --format csv -o "$TMP/c" 2>/dev/null
      rm -rf "$TMP/a" && "$LUMEN" analyze -w "$WL/$w" -k vec --norm per_kernel --format csv -o "$TMP/a" 2>/dev/null
      [ -d "$TMP/a" ] && same_tables "$TMP/a" "$TMP/c"
    done
    # Comparison of two stored workloads equals comparison of the folders.
    "$LUMEN" analyze -w "$WL/vcopy/MI200" -w "$WL/_mix/mix2gpu_MI200" -b 2 --format csv -o "$TMP/ca" 2>/dev/null
    run analyze --db "$DB" -w vcopy_MI200 -w _mix_mix2gpu_MI200 -b 2 --format csv -o "$TMP/cb"
    expect_status 0
    same_tables "$TMP/ca" "$TMP/cb"
    # JSON: the same document but for the workload's path.
    "$LUMEN" analyze -w "$WL/vcopy/MI200" --format json 2>/dev/null | grep -v '"path"' >"$TMP/ja"
    "$LUMEN" analyze --db "$DB" -w vcopy_MI200 --format json 2>/dev/null | grep -v '"path"' >"$TMP/jb"
    cmp -s "$TMP/ja" "$TMP/jb" || fail "json differs"
    ;;
  export_profile)
    export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
    rm -rf "$TMP/prof" "$TMP/out_wl" "$TMP/a" "$TMP/b" "$TMP/c"
    run profile -n prof -w "$TMP/prof" -- "$APP" -g 2 'vecCopy(double*, double*, double*, int, int):3'
    expect_status 0
    run db import --db "$DB" -w "$TMP/prof"
    expect_status 0
    expect_out "imported as 'prof' (3 dispatches)"
    run analyze -w "$TMP/prof" --format csv -o "$TMP/a"
    run analyze --db "$DB" -w prof --format csv -o "$TMP/b"
    expect_status 0
    same_tables "$TMP/a" "$TMP/b"
    rm -rf "$TMP/out_wl"
    run db export --db "$DB" prof -w "$TMP/out_wl"
    expect_status 0
    [ -f "$TMP/out_wl/lumen.db" ] || fail "no lumen.db in the export"
    run analyze -w "$TMP/out_wl" --format csv -o "$TMP/c"
    expect_status 0
    same_tables "$TMP/a" "$TMP/c"
    run db export --db "$DB" prof -w "$TMP/out_wl"
    expect_status 1
    expect_err "already exists"
    # the exported folder is the same workload
    run db import --db "$DB" -w "$TMP/out_wl"
    expect_out "already in the store as 'prof'"
    ;;
  mpi_import)
    # Both layouts of an MPI profile go into the store as one workload each,
    # with every row's rank and host; the store's --rank is the folder's.
    export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
    command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun not found"; exit 77; }
    local mpirun="mpirun --oversubscribe --allow-run-as-root" vcopy='vecCopy(double*, double*, double*, int, int)'
    if [ ! -d "$TMP/parts" ]; then
      $mpirun -np 3 "$LUMEN" profile -n parts -w "$TMP/parts" --replay instance -- "$APP" -g local --extra-rank 1 12 \
        "$vcopy:24" >"$TMP/out" 2>"$TMP/err" || fail "mpirun: $(cat "$TMP/err")"
      # mpirun under the preloaded tool library: LeakSanitizer would report
      # Open MPI's own leaks (see profile_test.sh, mpi_outside).
      ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        run profile -n one -w "$TMP/one" -- $mpirun -np 2 "$APP" -g local --extra-rank 0 1 "$vcopy:2:1048576:256"
      expect_status 0
    fi
    run db import --db "$DB" -w "$TMP/parts" -w "$TMP/one"
    expect_status 0
    expect_out "imported as 'parts' (7 dispatches)"
    expect_out "imported as 'one' (5 dispatches)"
    run db list --db "$DB" --format csv
    expect_out ",7,lumen,"
    run db import --db "$DB" -w "$TMP/parts"
    expect_out "already in the store as 'parts'"
    for wl in parts one; do
      for sel in "" "--rank 1" "--rank 0,2"; do
        run analyze -w "$TMP/$wl" $sel --format json
        expect_status 0
        cp "$TMP/out" "$TMP/folder.json"
        run analyze --db "$DB" -w $wl $sel --format json
        expect_status 0
        # The store keeps the first rank's system information: a rank's
        # own (its start time) is in the folder only.
        python3 - "$TMP/folder.json" "$TMP/out" <<'PY' || fail "$wl $sel: the store's analysis differs from the folder's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def tables(d):
    for p in d["panels"]:
        for t in p["tables"]:
            if t.get("id") == "1.1":
                t["rows"] = [r for r in t["rows"] if r["cells"][0] != "timestamp"]
    return d["panels"]
assert tables(a) == tables(b) and a.get("ranks") == b.get("ranks"), "differ"
PY
      done
      # A second look comes from the kept analysis, rank table included.
      run analyze --db "$DB" -w $wl --format json
      python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ranks"]["n_ranks"] >= 2' "$TMP/out" ||
        fail "$wl: no rank table in the kept analysis"
    done
    run analyze --db "$DB" -w parts --rank 5
    expect_status 1
    expect_err "ranks in the data: 0:3"
    # The server's /api/analysis takes rank= the way analyze takes --rank.
    . "$SRCDIR/../../scripts/serve-lib.sh"
    start_server --db "$DB"
    get "/api/analysis?w=db:parts&rank=1:3"
    expect_code 200 "analysis of ranks 1 and 2"
    "$LUMEN" analyze --db "$DB" -w parts --rank 1:3 --format json >"$TMP/cli.json" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
    python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:3]); assert a["panels"] == b["panels"] and a["ranks"] == b["ranks"] and a["ranks"]["n_ranks"] == 2' \
      "$TMP/body" "$TMP/cli.json" || fail "/api/analysis?rank=1:3 and analyze --rank 1:3 differ"
    get "/api/analysis?w=db:parts&rank=9"
    expect_code 400 "a rank not in the data"
    kill "$SERVER" 2>/dev/null
    wait "$SERVER" 2>/dev/null
    ;;
  bad_input)
    "$LUMEN" db import --db "$DB" -w "$WL/vcopy/MI200" -n tmp >/dev/null && "$LUMEN" db rm --db "$DB" tmp >/dev/null
    run analyze --db "$DB" -w nobody
    expect_status 1
    one_line_err
    expect_err "no workload named 'nobody'"
    mkdir -p "$TMP/empty"
    run db import --db "$DB" -w "$TMP/empty"
    expect_status 1
    one_line_err
    expect_err "not a workload folder"
    run db list --db "$DB" --format csv
    [ "$(tail -n +2 "$TMP/out" | wc -l)" -eq 0 ] || fail "a failed import left a workload"
    run db import --db "$DB" -w "$WL/vcopy/MI200" -n ""
    expect_status 1
    expect_err "a workload name has 1 to 200 characters"
    run db import --db "$DB" -w "$WL/vcopy/MI200" -w "$WL/vcopy/MI100" -n x
    expect_status 2
    run db frobnicate --db "$DB"
    expect_status 2
    expect_err "unknown subcommand 'frobnicate'"
    run db
    expect_status 2
    ;;
  *)
    fail "unknown test $NAME"
    ;;
  esac
}

KIND=sqlite
suite "$TMP/store.db"
if [ -n "${LUMEN_TEST_PG:-}" ]; then
  KIND=postgresql
  suite "$LUMEN_TEST_PG/test_cli"
else
  echo "LUMEN_TEST_PG is not set: PostgreSQL part skipped"
fi
# Stores that cannot be reached say so in one line.
run analyze --db "$TMP/none/store.db" -w x
[ "$STATUS" -eq 1 ] || fail "missing store: status $STATUS"
one_line_err
expect_err "no store here"
run db list --db "postgresql://nobody@127.0.0.1:1/none"
[ "$STATUS" -eq 1 ] || fail "unreachable server: status $STATUS"
one_line_err
expect_err "cannot connect"
echo PASS
