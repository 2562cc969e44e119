#!/usr/bin/env bash
# Medians and quartiles in bounded memory against the in-memory path:
# with --stat-mem 0 no operand's values are kept (every median and
# quantile is found by passes over the blocks, counting the keys' bits
# down to the whole key where need be), with --stat-mem 1 the buckets that
# hold the wanted ranks are collected within one megabyte. The output must
# be the bytes of the default run, on every shared workload and on scaled
# copies, with filters, normalizations, time weighting and comparisons;
# --self-time shows that the extra passes ran.
# Usage: stat_mem_test.sh LUMEN SCALE_WORKLOAD SHARED_DIR TEST_NAME
set -u
LUMEN=$1
SCALE=$2
SHARED=$3
NAME=$4
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-sm-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"

# same MB ARGS...: --stat-mem MB and the default print the same (and exit
# with the same status).
same() {
  local mb=$1
  shift
  "$LUMEN" analyze "$@" >"$TMP/default.out" 2>"$TMP/default.err"
  local d=$?
  "$LUMEN" analyze --stat-mem "$mb" "$@" >"$TMP/bounded.out" 2>"$TMP/bounded.err"
  local b=$?
  [ "$d" -eq "$b" ] || fail "exit status $d by default, $b with --stat-mem $mb: $* ($(head -c 300 "$TMP/bounded.err"))"
  cmp -s "$TMP/default.out" "$TMP/bounded.out" || fail "output differs with --stat-mem $mb: $* ($(diff "$TMP/default.out" "$TMP/bounded.out" | head -5))"
  cmp -s "$TMP/default.err" "$TMP/bounded.err" || fail "stderr differs with --stat-mem $mb: $*"
}

# passes MB PHASE ARGS...: the run with --stat-mem MB reports PHASE.
passes() {
  local mb=$1 phase=$2
  shift 2
  "$LUMEN" analyze --stat-mem "$mb" --self-time "$@" >/dev/null 2>"$TMP/time" || fail "analyze --stat-mem $mb $*"
  grep -q "$phase" "$TMP/time" || fail "no '$phase' with --stat-mem $mb: $(head -c 400 "$TMP/time")"
}

case $NAME in
shared)
  n=0
  while read -r pmc; do
    dir=$(dirname "$pmc")
    same 0 -w "$dir" --format json
    same 1 -w "$dir" --format json
    n=$((n + 1))
  done < <(find "$WL" -name pmc_perf.csv | sort)
  [ "$n" -ge 50 ] || fail "only $n workloads found"
  passes 0 "medians, count pass" -w "$WL/_synthetic/vcopy_MI200_x1000"
  passes 1 "medians, collect pass" -w "$WL/_synthetic/vcopy_MI200_x1000"
  run analyze -w "$WL/vcopy/MI200" --stat-mem lots
  expect_status 2
  expect_err "--stat-mem lots"
  one_line_err
  run analyze -w "$WL/vcopy/MI200" --stat-mem -3
  expect_status 2
  one_line_err
  ;;
scaled)
  "$SCALE" "$WL/vcopy/MI200" 4500 "$TMP/big" || fail "scale_workload"
  "$SCALE" "$WL/_mix/mix_MI200" 4200 "$TMP/mix" || fail "scale_workload mix"
  "$SCALE" "$WL/vcopy/MI300X_A1" 4100 "$TMP/mi300" || fail "scale_workload MI300X"
  passes 1 "medians, collect pass" -w "$TMP/big" --format json
  passes 0 "medians, count pass" -w "$TMP/big" --format json
  same 0 -w "$TMP/big" --format json
  same 1 -w "$TMP/big" --format json
  same 4 -w "$TMP/big" --format json --block-rows 7
  same 1 -w "$TMP/big" --load whole --format json
  same 1 -w "$TMP/big" -d 17:4000 --norm per_kernel --format csv -o /dev/stdout
  same 0 -w "$TMP/big" --weight time -b 2 -b 16 --format json
  same 1 -w "$TMP/big" --threads 1 -b 16 -b 18 --format json
  same 1 -w "$TMP/mi300" --format json
  same 0 -w "$TMP/mix" -k '!vcopy' --format json
  same 1 -w "$TMP/mix" --summary
  same 1 -w "$TMP/mix" -w "$TMP/big" -b 2 -b 17
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo "ok: $NAME"
