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
  import_stream)
    # Every shared workload folder, imported with its counter columns read
    # back from the files in groups of one column, of a few columns and of
    # the default size: each view from the store's columns (nothing kept)
    # and the kept default view print what the folder prints, and the
    # fingerprint (learnt while writing) finds the copy on a second import.
    i=0
    while read -r pmc; do
      dir=$(dirname "$pmc")
      i=$((i + 1))
      n="s$i"
      case $((i % 3)) in
      0) group=1 ;;
      1) group=200 ;;
      *) group= ;;
      esac
      LUMEN_IMPORT_GROUP_BYTES=$group run db import --db "$DB" -w "$dir" -n "$n"
      si=$STATUS
      # The folder's own view, once for both engines.
      if [ ! -f "$TMP/ref$i.json" ]; then
        "$LUMEN" analyze -w "$dir" --format json 2>"$TMP/ea" | grep -v '"path"' >"$TMP/ref$i.json"
        echo "${PIPESTATUS[0]}" >"$TMP/ref$i.status"
      fi
      cp "$TMP/ref$i.json" "$TMP/ja"
      sa=$(cat "$TMP/ref$i.status")
      if [ "$si" -ne 0 ]; then
        # A folder the store refuses is one analysis refuses too.
        [ "$sa" -ne 0 ] || fail "$dir: import failed ($(cat "$TMP/err")) but analyze -w did not"
        continue
      fi
      # Folders of the same contents (the shared set has some) are one.
      if grep -q "already in the store as" "$TMP/out"; then
        n=$(sed -n "s/.*already in the store as '\([^']*\)'.*/\1/p" "$TMP/out")
      fi
      LUMEN_STORE_CACHE=off "$LUMEN" analyze --db "$DB" -w "$n" --format json 2>"$TMP/eb" |
        grep -v '"path"' >"$TMP/jb"
      sb=${PIPESTATUS[0]}
      "$LUMEN" analyze --db "$DB" -w "$n" --format json 2>"$TMP/ec" | grep -v '"path"' >"$TMP/jc"
      sc=${PIPESTATUS[0]}
      [ "$sa" -eq "$sb" ] && [ "$sa" -eq "$sc" ] ||
        fail "$dir: exit $sa from the folder, $sb from the columns, $sc kept ($(head -c 300 "$TMP/eb"))"
      cmp -s "$TMP/ja" "$TMP/jb" || fail "$dir: the view from the columns differs: $(diff "$TMP/ja" "$TMP/jb" | head -4)"
      cmp -s "$TMP/ja" "$TMP/jc" || fail "$dir: the kept view differs: $(diff "$TMP/ja" "$TMP/jc" | head -4)"
      # The same contents under another name, and under the same name.
      LUMEN_IMPORT_GROUP_BYTES=${group:-1} run db import --db "$DB" -w "$dir" -n "again$i"
      expect_status 0
      expect_out "already in the store as '$n'"
      if [ $((i % 5)) -eq 0 ]; then
        run db import --db "$DB" -w "$dir" -n "$n"
        expect_status 0
        expect_out "already in the store as '$n'"
      fi
    done < <(find "$WL" -name pmc_perf.csv | sort)
    [ "$i" -ge 50 ] || fail "only $i workloads found"
    # The text report with its summary on a folder of 1,000 dispatches.
    "$LUMEN" db list --db "$DB" --format csv | tail -n +2 | cut -d'"' -f2 | while read -r old; do
      "$LUMEN" db rm --db "$DB" "$old" >/dev/null
    done
    LUMEN_IMPORT_GROUP_BYTES=100000 run db import --db "$DB" -w "$WL/_synthetic/vcopy_MI200_x1000" -n big
    expect_status 0
    expect_out "imported as 'big' (1000 dispatches)"
    "$LUMEN" analyze -w "$WL/_synthetic/vcopy_MI200_x1000" --width 0 -k vec --norm per_cycle >"$TMP/ta" 2>&1
    LUMEN_STORE_CACHE=off "$LUMEN" analyze --db "$DB" -w big --width 0 -k vec --norm per_cycle >"$TMP/tb" 2>&1
    cmp -s "$TMP/ta" "$TMP/tb" || fail "x1000: the text report differs: $(diff "$TMP/ta" "$TMP/tb" | head -4)"
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
    # with every row's rank and host, every rank's system information and
    # roofline, and which rank collected each set of a --split ranks
    # profile: analyze --db prints what analyze -w prints, for every
    # --rank selection.
    export LUMEN_SIM_RECORDING=$WL/vcopy/MI200
    command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun not found"; exit 77; }
    local mpirun="mpirun --oversubscribe --allow-run-as-root" vcopy='vecCopy(double*, double*, double*, int, int)'
    if [ ! -d "$TMP/parts" ]; then
      # Rank 2 replays a copy of the recording whose roofline has half the
      # HBM bandwidth, and rank 1's part says it ran on another host: the
      # ranks' system information and rooflines differ.
      cp -r "$WL/vcopy/MI200" "$TMP/rec2" && chmod -R u+w "$TMP/rec2"
      python3 - "$TMP/rec2/roofline.csv" <<'PY' || fail "cannot edit the roofline"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
for r in rows[1:]:
    r[1] = repr(float(r[1]) / 2)
csv.writer(open(sys.argv[1], "w"), lineterminator="\n").writerows(rows)
PY
      local part="$LUMEN profile -n parts -w $TMP/parts --replay instance -- $APP -g local --extra-rank 1 12"
      $mpirun -np 2 -x LUMEN_SIM_RECORDING="$WL/vcopy/MI200" $part "$vcopy:24" : \
        -np 1 -x LUMEN_SIM_RECORDING="$TMP/rec2" $part "$vcopy:24" >"$TMP/out" 2>"$TMP/err" ||
        fail "mpirun: $(cat "$TMP/err")"
      sqlite3 "$TMP/parts/rank.1/lumen.db" "UPDATE sysinfo SET value = 'node-b' WHERE key = 'hostname'" ||
        fail "cannot edit rank 1's host"
      # --split ranks: 4 ranks, each collecting every 4th set of the plan.
      $mpirun -np 4 "$LUMEN" profile --split ranks -n split -w "$TMP/split" -- "$APP" -g 2 "$vcopy:3:1048576:256" \
        >"$TMP/out" 2>"$TMP/err" || fail "mpirun --split ranks: $(cat "$TMP/err")"
      # mpirun under the preloaded tool library: LeakSanitizer would report
      # Open MPI's own leaks (see profile_test.sh, mpi_outside).
      ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        run profile -n one -w "$TMP/one" -- $mpirun -np 2 "$APP" -g local --extra-rank 0 1 "$vcopy:2:1048576:256"
      expect_status 0
    fi
    run db import --db "$DB" -w "$TMP/parts" -w "$TMP/one" -w "$TMP/split"
    expect_status 0
    expect_out "imported as 'parts' (7 dispatches)"
    expect_out "imported as 'one' (5 dispatches)"
    expect_out "imported as 'split' (3 dispatches)"
    run db list --db "$DB" --format csv
    expect_out ",7,lumen,"
    # The listing counts each workload's parts and their distinct hosts:
    # 'parts' has three parts on two hosts (rank 1's edited above), the
    # --split ranks profile four parts on this host, and the profile of one
    # process that ran two ranks no parts.
    ranks_of() { # FILE: "name ranks hosts" per workload of a JSON listing
      python3 -c 'import json,sys; [print(w["name"], w["ranks"], w["hosts"]) for w in json.load(open(sys.argv[1]))["workloads"]]' "$1"
    }
    local want=$'one 0 0\nparts 3 2\nsplit 4 1'
    run db list --db "$DB" --format json
    [ "$(ranks_of "$TMP/out" | sort)" = "$want" ] || fail "db list json: ranks and hosts: $(ranks_of "$TMP/out")"
    run db list --db "$DB" --format csv
    [ "$(python3 -c 'import csv,sys; [print(r["name"], r["ranks"], r["hosts"]) for r in csv.DictReader(open(sys.argv[1]))]' "$TMP/out" | sort)" = "$want" ] ||
      fail "db list csv: ranks and hosts: $(cat "$TMP/out")"
    run db list --db "$DB"
    grep -q '^parts .* 3 ranks on 2 hosts$' "$TMP/out" || fail "db list: parts: $(cat "$TMP/out")"
    grep -q '^split .* 4 ranks on 1 host$' "$TMP/out" || fail "db list: split: $(cat "$TMP/out")"
    ! grep -q '^one .*rank' "$TMP/out" || fail "db list: one process shows ranks: $(cat "$TMP/out")"
    run db import --db "$DB" -w "$TMP/parts"
    expect_out "already in the store as 'parts'"
    # same_report FOLDER_OUT STORE_OUT WHAT: the same bytes, but for the
    # name of what was read (the folder, the store) in the note on replays.
    # shellcheck disable=SC2317
    same_report() {
      python3 - "$1" "$2" <<'PY' || fail "$3: analyze --db differs from analyze -w"
import re, sys
a, b = (re.sub(r"(?m)^NOTE: .* comes from the simulated device", "NOTE: @ comes from the simulated device",
               open(p, encoding="utf-8", errors="replace").read()) for p in sys.argv[1:3])
if a != b:
    la, lb = a.splitlines(), b.splitlines()
    i = next((k for k in range(min(len(la), len(lb))) if la[k] != lb[k]), min(len(la), len(lb)))
    sys.exit("line %d: %r / %r" % (i + 1, la[i] if i < len(la) else "", lb[i] if i < len(lb) else ""))
PY
    }
    local sel wl fmt
    for wl in parts one split; do
      local sels='"" "--rank 1" "--rank 2" "--rank 0,2" "--rank 1:3"'
      [ $wl = one ] && sels='"" "--rank 1" "--rank 0"'
      [ $wl = split ] && sels='""'
      eval "set -- $sels"
      for sel in "$@"; do
        for fmt in text json; do
          run analyze -w "$TMP/$wl" $sel --format $fmt
          expect_status 0
          cp "$TMP/out" "$TMP/folder.out"
          # The first look evaluates (or finds the view kept at import), the
          # second finds it kept: both print what the folder gives.
          for look in 1 2; do
            run analyze --db "$DB" -w $wl $sel --format $fmt
            expect_status 0
            if [ $fmt = text ]; then
              same_report "$TMP/folder.out" "$TMP/out" "$wl $sel (text, look $look)"
            else
              python3 - "$TMP/folder.out" "$TMP/out" <<'PY' || fail "$wl $sel (json, look $look): the store's analysis differs from the folder's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    for w in d["workloads"]:
        w.pop("path", None), w.pop("id", None)
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
            fi
          done
        done
      done
      # A second look comes from the kept analysis, rank table included.
      if [ $wl != split ]; then
        run analyze --db "$DB" -w $wl --format json
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ranks"]["n_ranks"] >= 2' "$TMP/out" ||
          fail "$wl: no rank table in the kept analysis"
      fi
    done
    # What the comparisons above compare is there: rank 1's host and rank
    # 2's roofline are their own, and the split says which rank collected
    # each set.
    run analyze --db "$DB" -w parts --rank 1 --format json
    grep -q '"node-b"' "$TMP/out" || fail "--rank 1 from the store: not rank 1's host"
    run analyze --db "$DB" -w parts --rank 0 --format json
    ! grep -q '"node-b"' "$TMP/out" || fail "--rank 0 from the store: rank 1's host"
    python3 - "$DB" "$LUMEN" <<'PY' || fail "--rank 2 from the store: not rank 2's roofline"
import json, subprocess, sys
def hbm(rank):
    out = subprocess.run([sys.argv[2], "analyze", "--db", sys.argv[1], "-w", "parts", "--rank", rank,
                          "--format", "json"], capture_output=True, check=True).stdout
    for p in json.loads(out)["panels"]:
        for t in p["tables"]:
            if t.get("id") == "4.1":
                return t["rows"][0]["cells"]
    raise SystemExit("no roofline table")
a, b = hbm("0"), hbm("2")
assert a != b, "rank 0 and rank 2 show the same roofline"
PY
    run analyze --db "$DB" -w split
    expect_out "rank 1: sets 1, 5, 9"
    # --rank on the combined split: the folder's message, naming the store.
    run analyze --db "$DB" -w split --rank 1
    expect_status 1
    one_line_err
    expect_err "$DB: --rank: the ranks of this --split ranks profile collected shares of the counter sets"
    # The kept copy of a workload goes out and back in as itself.
    rm -rf "$TMP/parts_out"
    run db export --db "$DB" parts -w "$TMP/parts_out"
    expect_status 0
    for sel in "--rank 1" "--rank 2"; do
      run analyze -w "$TMP/parts" $sel
      cp "$TMP/out" "$TMP/folder.out"
      run analyze -w "$TMP/parts_out" $sel
      expect_status 0
      same_report "$TMP/folder.out" "$TMP/out" "export, then $sel"
    done
    run analyze --db "$DB" -w parts --rank 5
    expect_status 1
    expect_err "ranks in the data: 0:3"
    # The server's /api/analysis takes rank= the way analyze takes --rank.
    . "$SRCDIR/../../scripts/serve-lib.sh"
    start_server --db "$DB"
    get "/api/workloads"
    expect_code 200 "the workloads"
    [ "$(ranks_of "$TMP/body" | sort)" = "$want" ] || fail "/api/workloads: ranks and hosts: $(cat "$TMP/body")"
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
