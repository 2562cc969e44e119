#!/usr/bin/env bash
# `lumen export --omniperf` against lumen's own reader: every shared
# workload folder (every folder under the shared data holding a
# pmc_perf.csv, found at run time) is exported, and the export analyzed
# again must give the report of its source, every table and value; only
# the fields naming the folder differ. A source that analyze refuses may
# be refused by export too, with a one-line error, or exported to a folder
# that analyze refuses the same way.
# Usage: export_test.sh LUMEN SHARED_DIR TEST_NAME
# LUMEN_TEST_EXPORT_EVERY=N checks every Nth folder only (slow builds:
# the sanitizers); the default is every folder.
set -u
LUMEN=$1
SHARED=$2
NAME=$3
TMP=$(mktemp -d /tmp/lumen-ex-XXXXXX)
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
EVERY=${LUMEN_TEST_EXPORT_EVERY:-1}

# names DIR FILE...: "FILE COLUMN" for every column of each file's header
# (quotes dropped), sorted: the columns a file has, whatever their order.
names() {
  local dir=$1
  shift
  awk -v dir="$dir/" 'FNR == 1 { f = substr(FILENAME, length(dir) + 1); n = split($0, a, ",");
    for (i = 1; i <= n; i++) { c = a[i]; gsub(/["\r]/, "", c); print f " " c } nextfile }' "${@/#/$dir/}" | sort
}

# same_files SRC OUT: every file of SRC that the reader reads is in OUT,
# with the same columns under the same names (pmc_perf.csv of the rocpd
# layout, one row per counter, is written one row per dispatch).
same_files() {
  local src=$1 out=$2 f header files=()
  for f in "$src/pmc_perf.csv" "$src/sysinfo.csv" "$src/roofline.csv" "$src"/SQ*.csv; do
    [ -f "$f" ] || continue
    f=${f##*/}
    [ -f "$out/$f" ] || fail "$src: the export lacks $f"
    if [ "$f" = pmc_perf.csv ]; then
      IFS= read -r header <"$src/$f"
      case $header in *Counter_Name*) continue ;; esac
    fi
    files+=("$f")
  done
  [ "${#files[@]}" -gt 0 ] || return 0
  names "$src" "${files[@]}" >"$TMP/src.names"
  names "$out" "${files[@]}" >"$TMP/ex.names"
  cmp -s "$TMP/src.names" "$TMP/ex.names" ||
    fail "$src: the export's columns differ: $(diff "$TMP/src.names" "$TMP/ex.names" | head -6)"
}

# roundtrip DIR [ANALYZE ARGS...]: DIR exported, both analyzed with the
# arguments, the reports compared.
N_RUNS=0
N_SAME=0
N_REFUSED=0
roundtrip() {
  local src=$1
  shift
  local out="$TMP/x$N_RUNS" what="$src${*:+ $*}"
  N_RUNS=$((N_RUNS + 1))
  "$LUMEN" analyze -w "$src" --format json "$@" >"$TMP/src.json" 2>"$TMP/src.err"
  local src_status=$?
  "$LUMEN" export -w "$src" --omniperf "$out" >"$TMP/ex.out" 2>"$TMP/ex.err"
  local ex_status=$?
  [ "$ex_status" -le 1 ] || fail "$what: export exit status $ex_status ($(head -c 600 "$TMP/ex.err"))"
  if [ "$ex_status" -ne 0 ]; then
    # Refused as analyze refuses it: the reader's one-line error.
    [ "$src_status" -ne 0 ] || fail "$what: analyze reads it, export refuses it: $(head -c 600 "$TMP/ex.err")"
    [ "$(grep -c . "$TMP/ex.err")" -eq 1 ] || fail "$what: export's error is not one line: $(cat "$TMP/ex.err")"
    [ "$(sed 's/^lumen export: //' "$TMP/ex.err")" = "$(sed 's/^lumen analyze: //' "$TMP/src.err")" ] ||
      fail "$what: export refuses it for another reason than analyze: $(cat "$TMP/ex.err" "$TMP/src.err")"
    N_REFUSED=$((N_REFUSED + 1))
    return
  fi
  same_files "$src" "$out"
  "$LUMEN" analyze -w "$out" --format json "$@" >"$TMP/ex.json" 2>"$TMP/ex.err"
  local again_status=$?
  [ "$again_status" -eq "$src_status" ] ||
    fail "$what: analyze exit status $src_status, $again_status after export ($(head -c 600 "$TMP/ex.err"))"
  # What analyze says (warnings, a refusal) is the same but for the folder's name.
  sed "s|$out|FOLDER|g" "$TMP/ex.err" >"$TMP/ex.said"
  sed "s|$src|FOLDER|g" "$TMP/src.err" >"$TMP/src.said"
  cmp -s "$TMP/src.said" "$TMP/ex.said" ||
    fail "$what: analyze says other things after export: $(diff "$TMP/src.said" "$TMP/ex.said" | head -6)"
  if [ "$src_status" -eq 0 ]; then
    # Equal bytes but for the folder's name are equal reports; else the
    # reports are compared field by field (python3 starts slowly).
    sed "s|$out|FOLDER|g" "$TMP/ex.json" >"$TMP/ex.said"
    sed "s|$src|FOLDER|g" "$TMP/src.json" >"$TMP/src.said"
    cmp -s "$TMP/src.said" "$TMP/ex.said" ||
      python3 "$SRCDIR/same_analysis.py" "$TMP/src.json" "$TMP/ex.json" >"$TMP/diff" ||
      fail "$what: the export analyzes differently: $(head -10 "$TMP/diff")"
    N_SAME=$((N_SAME + 1))
  else
    N_REFUSED=$((N_REFUSED + 1))
  fi
  rm -rf "$out"
}

# folders ROOT...: the folders under ROOTs holding a pmc_perf.csv, sorted,
# every EVERY-th of them.
folders() {
  find "$@" -name pmc_perf.csv -printf '%h\n' 2>/dev/null | sort | awk -v n="$EVERY" '(NR - 1) % n == 0'
}

case $NAME in
roundtrip)
  n=0
  while read -r dir; do
    roundtrip "$dir"
    n=$((n + 1))
  done < <(folders "$SHARED/workloads")
  [ "$n" -ge $((50 / EVERY)) ] || fail "only $n workloads found"
  while read -r dir; do
    roundtrip "$dir" --compat 3.3
    n=$((n + 1))
  done < <(folders "$SHARED/workloads-3.3")
  # Folders of the reference's later versions, read both ways.
  while read -r dir; do
    roundtrip "$dir"
    roundtrip "$dir" --compat 3.3
    n=$((n + 1))
  done < <(folders "$SHARED/formats/rocprofiler-compute")
  echo "$n folders: $N_SAME reports the same after export, $N_REFUSED refused alike"
  ;;
store)
  # Folders read back from a lumen database (imported, then written as a
  # lumen folder), which holds every dispatch column whether the folder had
  # it or not, and of a column of text only its first cell: the export
  # still analyzes as the lumen folder does.
  i=0
  while read -r dir; do
    compat=()
    case $dir in "$SHARED/workloads-3.3/"*) compat=(--compat 3.3) ;; esac
    "$LUMEN" db import --db "$TMP/store.db" -w "$dir" -n "w$i" >"$TMP/out" 2>&1 || fail "import $dir: $(cat "$TMP/out")"
    "$LUMEN" db export --db "$TMP/store.db" "w$i" -w "$TMP/lumen$i" >"$TMP/out" 2>&1 ||
      fail "db export of $dir: $(cat "$TMP/out")"
    roundtrip "$TMP/lumen$i" ${compat[@]+"${compat[@]}"}
    i=$((i + 1))
  done < <(folders "$SHARED/workloads/_mix" "$SHARED/workloads/vcopy" "$SHARED/workloads-3.3/vcopy")
  [ "$i" -ge 3 ] || fail "only $i workloads found"
  [ "$N_SAME" -eq "$i" ] || fail "$((i - N_SAME)) of $i lumen folders refused"
  echo "$i folders exported from a lumen database: $N_SAME reports the same after export"
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
