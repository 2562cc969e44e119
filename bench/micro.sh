#!/usr/bin/env bash
# Benchmark of lumen's micro-optimisations: each is switched off in turn by
# a patch of bench/micro/ applied to a copy of the sources (never to the
# checkout), and the variants are timed against the sources as they are on
# the cases a user feels:
#  - format-fixed: lm_format_fixed against snprintf("%.*f") (the text
#    report's numbers, one dispatch index per dispatch): `lumen analyze` of
#    vcopy/MI200 (3 dispatches) and of copies scaled to 100,000 and
#    1,000,000 dispatches, and `lumen db import` of the 100,000 one;
#  - tool-put: the tool library's numbers written by hand against the
#    lm_buf_printf path it keeps for long records: the tool's cost per
#    collected dispatch (bench/collect_micro, 1 thread);
#  - the CSV reader's three ways with one file, on `lumen analyze` of the
#    scaled copies: reading through windows (csv-no-windows: the count and
#    the parse read the mapping), the mapping (csv-no-mmap: the file read
#    whole into memory with read), giving parsed pages of the mapping back
#    (csv-no-release, measured where it acts: with csv-no-windows).
# Each case runs every variant in turn, RUNS rounds after one warm-up, and
# keeps the least wall time (the machine is shared) and the largest peak
# resident memory. gain % = 100 x (without - with) / without; an
# optimisation is kept where it gains 10 % or more in time or in memory on
# one of its cases. A patch that no longer applies (its optimisation was
# removed) is reported and skipped: give an older REV to measure it.
# Everything is written under $TMPDIR (default /tmp) and removed at the end;
# the 1,000,000-dispatch copy (about 5.5 GB) is skipped when there is no
# room for it.
#
# Usage: bench/micro.sh [RUNS] [REV]     (default 5 rounds, HEAD)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
REV=${2:-HEAD}
SHARED=$(cd "${LUMEN_SHARED_DIR:-../shared}" && pwd)
PATCHES=$PWD/bench/micro
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-micro-XXXXXX")
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT

# The helpers of bench/lib.sh, without its build of the checkout.
cc -O2 -o "$WORK/scale_workload" bench/scale_workload.c
cc -O2 -o "$WORK/measure" bench/measure.c

# One copy of REV's sources, built (Release) once per variant; each
# variant's programs are kept in $WORK/bin/VARIANT.
TREE=$WORK/tree
mkdir -p "$TREE" "$WORK/bin"
git archive "$REV" | tar -x -C "$TREE"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$TREE" -B "$TREE/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLUMEN_SHARED_DIR="$SHARED" \
  "${launcher[@]}" >/dev/null
VARIANTS=()
# variant NAME PATCH...: build REV with the patches applied (none: as it is)
variant() {
  local name=$1 p
  shift
  for p in "$@"; do
    if ! git -C "$TREE" apply --check "$PATCHES/$p.patch" 2>/dev/null; then
      echo "skipping $name: bench/micro/$p.patch does not apply to $REV (removed?)" >&2
      return 0
    fi
  done
  for p in "$@"; do git -C "$TREE" apply "$PATCHES/$p.patch"; done
  cmake --build "$TREE/build" -j "$(nproc)" --target lumen lumen_tool collect_micro >/dev/null
  mkdir -p "$WORK/bin/$name"
  cp "$TREE/build/src/cli/lumen" "$TREE/build/src/tool/liblumen_tool.so" "$TREE/build/bench/collect_micro" \
    "$WORK/bin/$name/"
  for p in "$@"; do git -C "$TREE" apply -R "$PATCHES/$p.patch"; done
  VARIANTS+=("$name")
}
# (git apply needs a repository: the copy gets an empty one)
git -C "$TREE" init -q
variant with
variant format-fixed format-fixed
variant tool-put tool-put
variant csv-no-windows csv-no-windows
variant csv-no-mmap csv-no-mmap
variant csv-no-windows+no-release csv-no-windows csv-no-release
has() { [[ " ${VARIANTS[*]} " == *" $1 "* ]]; }

# The workloads: vcopy/MI200 scaled to 100,000 and 1,000,000 dispatches.
"$WORK/scale_workload" "$SHARED/workloads/vcopy/MI200" 100000 "$WORK/mi200_100000"
need_kb=$(($(du -sk "$WORK/mi200_100000" | cut -f1) * 11))
free_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
BIG=
if [ "$free_kb" -gt "$need_kb" ]; then
  "$WORK/scale_workload" "$SHARED/workloads/vcopy/MI200" 1000000 "$WORK/mi200_1000000"
  BIG=$WORK/mi200_1000000
else
  echo "skipping MI200 x1000000: it needs $((need_kb / 1024)) MiB in ${TMPDIR:-/tmp}" >&2
fi
sync

# measure_case VARIANT... -- COMMAND...: COMMAND (@BIN@ in an argument
# stands for the variant's folder of programs) run for each variant in
# turn, RUNS rounds after a warm-up; sets BEST_MS[VARIANT] (least wall
# time) and PEAK_MIB[VARIANT] (largest peak resident memory)
declare -A BEST_MS PEAK_MIB
measure_case() {
  local vs=() v r cmd min rss
  while [ "$1" != -- ]; do
    vs+=("$1")
    shift
  done
  shift
  for v in "${vs[@]}"; do
    BEST_MS[$v]=
    PEAK_MIB[$v]=0
    cmd=("${@//@BIN@/$WORK/bin/$v}")
    # a warm-up run (the page cache, as for a user re-running)
    "${cmd[@]}" >/dev/null 2>&1 || { echo "$v: ${cmd[*]} failed" >&2; exit 1; }
  done
  for r in $(seq 1 "$RUNS"); do
    for v in "${vs[@]}"; do
      cmd=("${@//@BIN@/$WORK/bin/$v}")
      read -r _ min rss _ <<<"$("$WORK/measure" 1 "${cmd[@]}")"
      BEST_MS[$v]=$(awk -v a="${BEST_MS[$v]}" -v b="$min" 'BEGIN { print (a == "" || b < a) ? b : a }')
      PEAK_MIB[$v]=$(awk -v a="${PEAK_MIB[$v]}" -v b="$rss" 'BEGIN { print (b > a) ? b : a }')
    done
  done
}

printf 'load average at the start: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %-34s %-6s %12s %12s %8s\n' optimisation case what with without "gain %"
declare -A VERDICT
# row OPT CASE WHAT WITH WITHOUT: a line of the table; a gain of 10 % or
# more keeps OPT, except on a case marked "(small)" (shown, not judged)
row() {
  local gain
  gain=$(awk -v w="$4" -v o="$5" 'BEGIN { printf "%.1f", (o > 0) ? 100 * (o - w) / o : 0 }')
  printf '%-26s %-34s %-6s %12s %12s %8s\n' "$1" "$2" "$3" "$4" "$5" "$gain"
  [[ $2 == *"(small)"* ]] && return 0
  if awk -v g="$gain" 'BEGIN { exit !(g >= 10) }'; then VERDICT[$1]=kept; else : "${VERDICT[$1]:=removed}"; fi
}
# compare OPT CASE WITH_VARIANT WITHOUT_VARIANT: time and memory rows
compare() {
  row "$1" "$2" "ms" "${BEST_MS[$3]}" "${BEST_MS[$4]}"
  row "$1" "$2" "MiB" "${PEAK_MIB[$3]}" "${PEAK_MIB[$4]}"
}

csv_vs=()
for v in csv-no-windows csv-no-mmap csv-no-windows+no-release; do has "$v" && csv_vs+=("$v"); done
fmt_vs=()
has format-fixed && fmt_vs+=(format-fixed)
cases=("vcopy/MI200 (small)|$SHARED/workloads/vcopy/MI200" "MI200 x100000|$WORK/mi200_100000")
[ -z "$BIG" ] || cases+=("MI200 x1000000|$BIG")
for c in "${cases[@]}"; do
  name="analyze ${c%%|*}"
  dir=${c#*|}
  vs=(with "${fmt_vs[@]}")
  [[ $name == *x1* ]] && vs+=("${csv_vs[@]}")
  measure_case "${vs[@]}" -- "@BIN@/lumen" analyze -w "$dir"
  has format-fixed && compare lm_format_fixed "$name" with format-fixed
  if [[ $name == *x1* ]]; then
    has csv-no-windows && compare "csv: windows" "$name" with csv-no-windows
    has csv-no-mmap && compare "csv: mapping" "$name" with csv-no-mmap
    has csv-no-windows+no-release && compare "csv: madvise release" "$name, mapped parse" \
      csv-no-windows csv-no-windows+no-release
  fi
done
if has format-fixed; then
  # (each import writes a new store)
  measure_case with format-fixed -- sh -c 'rm -f "$1"; exec "$2" db import --db "$1" -w "$3" -n big' \
    sh "$WORK/store.db" "@BIN@/lumen" "$WORK/mi200_100000"
  compare lm_format_fixed "db import MI200 x100000" with format-fixed
fi

# The tool's cost per collected dispatch: the run with the tool collecting
# every dispatch less the run without it, divided by the launches.
if has tool-put; then
  N=1000000
  export LUMEN_SIM_RECORDING="$SHARED/workloads/vcopy/MI200" LUMEN_SIMSDK_CLOCKS=none
  COUNTERS="SQ_WAVES SQ_BUSY_CYCLES GRBM_COUNT GRBM_GUI_ACTIVE"
  KERNEL='vecCopy(double*, double*, double*, int, int) [clone .kd]'
  # shellcheck disable=SC2086
  "$WORK/bin/with/collect_micro" config "$WORK/all.cfg" gfx90a "$WORK/all.rec" - $COUNTERS
  declare -A US
  for v in with tool-put; do US[$v]=; done
  for r in $(seq 0 "$RUNS"); do
    for v in with tool-put; do
      rm -f "$WORK"/all.rec.*
      dev=$("$WORK/bin/$v/collect_micro" launch "$N" 1 "$KERNEL" 2>/dev/null | grep -E '^[0-9.]+$' | tail -1)
      tool=$(LD_PRELOAD="$WORK/bin/$v/liblumen_tool.so" LUMEN_TOOL_CONFIG="$WORK/all.cfg" \
        "$WORK/bin/$v/collect_micro" launch "$N" 1 "$KERNEL" 2>/dev/null | grep -E '^[0-9.]+$' | tail -1)
      [ "$r" = 0 ] && continue # warm-up
      us=$(awk -v t="$tool" -v d="$dev" -v n="$N" 'BEGIN { printf "%.3f", (t - d) * 1e6 / n }')
      US[$v]=$(awk -v a="${US[$v]}" -v b="$us" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
  done
  row "tool: numbers by hand" "collected dispatch, 1 thread" "µs" "${US[with]}" "${US[tool-put]}"
fi

echo
printf '%-26s %s\n' optimisation verdict
for k in "${!VERDICT[@]}"; do printf '%-26s %s\n' "$k" "${VERDICT[$k]}"; done | sort
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
