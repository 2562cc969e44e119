#!/usr/bin/env bash
# Streamed evaluation against the whole-file path: `lumen analyze` reads
# counter columns from the file in blocks of dispatches by default; with
# --load whole every column is in memory. Both must print the same bytes,
# on every shared workload and on scaled copies (thousands of dispatches,
# so that both halves of the sums and many blocks are exercised), with
# filters, normalizations, comparisons and blocks down to one dispatch.
# Usage: stream_test.sh LUMEN SCALE_WORKLOAD SHARED_DIR TEST_NAME
set -u
LUMEN=$1
SCALE=$2
SHARED=$3
NAME=$4
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-st-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"

# same ARGS...: streamed and whole-file output (and exit status) are equal.
same() {
  "$LUMEN" analyze "$@" >"$TMP/stream.out" 2>"$TMP/stream.err"
  local s=$?
  "$LUMEN" analyze --load whole "$@" >"$TMP/whole.out" 2>"$TMP/whole.err"
  local w=$?
  [ "$s" -eq "$w" ] || fail "exit status $s streamed, $w whole: $* ($(head -c 300 "$TMP/stream.err"))"
  cmp -s "$TMP/stream.out" "$TMP/whole.out" || fail "output differs: $* ($(diff "$TMP/stream.out" "$TMP/whole.out" | head -5))"
  cmp -s "$TMP/stream.err" "$TMP/whole.err" || fail "stderr differs: $*"
}

case $NAME in
shared)
  n=0
  while read -r pmc; do
    dir=$(dirname "$pmc")
    same -w "$dir" --format json
    same -w "$dir" --format json --block-rows 1
    n=$((n + 1))
  done < <(find "$WL" -name pmc_perf.csv | sort)
  [ "$n" -ge 50 ] || fail "only $n workloads found"
  ;;
scaled)
  # 4,500 dispatches: two halves of the sums (from 4,096 on) and several
  # blocks; blocks of one dispatch on a smaller copy (also in a sanitizer
  # build the test stays within its time).
  "$SCALE" "$WL/vcopy/MI200" 4500 "$TMP/big" || fail "scale_workload"
  "$SCALE" "$WL/vcopy/MI200" 700 "$TMP/small" || fail "scale_workload small"
  "$SCALE" "$WL/_mix/mix_MI200" 4200 "$TMP/mix" || fail "scale_workload mix"
  "$SCALE" "$WL/vcopy/MI300X_A1" 4100 "$TMP/mi300" || fail "scale_workload MI300X"
  # Streaming is what runs: most columns stay in the file.
  "$LUMEN" analyze -w "$TMP/big" -b 2 -vv >/dev/null 2>"$TMP/log" || fail "analyze -vv"
  grep -q "columns read in blocks" "$TMP/log" || fail "no streaming reported: $(head -c 300 "$TMP/log")"
  same -w "$TMP/big" --format json
  # Every panel loads the formulas' inputs while indexing when they fit;
  # with no room for them, they are read in blocks too.
  "$LUMEN" analyze -w "$TMP/big" -vv >/dev/null 2>"$TMP/log" || fail "analyze -vv"
  loaded=$(grep -o "[0-9]* of [0-9]* pmc_perf columns read in blocks" "$TMP/log" | cut -d' ' -f1)
  LUMEN_LOAD_CAP=1 "$LUMEN" analyze -w "$TMP/big" -vv >/dev/null 2>"$TMP/log" || fail "analyze -vv, no room"
  roomless=$(grep -o "[0-9]* of [0-9]* pmc_perf columns read in blocks" "$TMP/log" | cut -d' ' -f1)
  [ -n "$loaded" ] && [ -n "$roomless" ] && [ $((roomless - loaded)) -ge 100 ] ||
    fail "the formulas' inputs were not loaded while indexing: ${loaded:-?} deferred, ${roomless:-?} with no room"
  LUMEN_LOAD_CAP=1 same -w "$TMP/big" --format json
  LUMEN_LOAD_CAP=1 same -w "$TMP/mi300" --format json --block-rows 333
  same -w "$TMP/big" --format json --block-rows 7
  same -w "$TMP/small" --format json --block-rows 1
  same -w "$TMP/big" -d 17:4000 --norm per_kernel --format csv -o /dev/stdout
  same -w "$TMP/big" --weight time -b 2 -b 16 --format json
  same -w "$TMP/big" --threads 1 -b 16 -b 18 --format json
  same -w "$TMP/mi300" --format json --block-rows 333
  same -w "$TMP/mix" -k '!vcopy' --format json
  same -w "$TMP/mix" --kernel-index 0 -b 2 --format json
  same -w "$TMP/mix" --summary
  same -w "$TMP/mix" -w "$TMP/big" -b 2 -b 17
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo "ok: $NAME"
