#!/usr/bin/env bash
# End-to-end tests of the real lumen binary.
# Usage: cli_test.sh LUMEN JSON_GET SHARED_DIR SOURCE_DIR TEST_NAME
set -u
LUMEN=$1
JSON_GET=$2
SHARED=$3
SOURCE=$4
NAME=$5
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-it-XXXXXX)
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT

SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; s = (a < 0 ? -a : a); exit !(d <= 1e-9 * s + 1e-12) }' || fail "$1 is not $2"; }
copy_wl() { cp -r "$WL/$1" "$TMP/wl"; chmod -R u+w "$TMP/wl"; }

case $NAME in
text_output)
  run analyze -w "$WL/vcopy/MI200"
  expect_status 0
  expect_out "2. System Speed-of-Light"
  expect_out "VALU IOPs"
  expect_out "427.03"
  expect_out "Gb/s"
  expect_out "18.2 L2 Cache Hit Rate (pct)"
  ;;
csv_output)
  run analyze -w "$WL/vcopy/MI200" --format csv -o "$TMP/csv"
  expect_status 0
  [ -f "$TMP/csv/2.1.csv" ] && [ -f "$TMP/csv/18.10.csv" ] && [ -f "$TMP/csv/0.1.csv" ] || fail "missing table files"
  head -1 "$TMP/csv/2.1.csv" | grep -qx 'Metric_ID,Metric,Avg,Unit,Peak,Pct of Peak,coll_level,Tips' || fail "2.1 header"
  grep -q '^2.1.1,VALU IOPs,427.0323563102217,Giop,22630.4,1.88698545456652,pmc_perf,$' "$TMP/csv/2.1.csv" || fail "2.1.1 row"
  [ "$(ls "$TMP/csv" | wc -l)" -eq 49 ] || fail "expected 49 tables, got $(ls "$TMP/csv" | wc -l)"
  ;;
json_output)
  run analyze -w "$WL/vcopy/MI200" --format json -b 2.1.1 -b 17.2
  expect_status 0
  v=$("$JSON_GET" panels.1.tables.0.rows.0.cells.1 <"$TMP/out") || fail "json path"
  near "$v" 427.0323563102217
  [ "$("$JSON_GET" panels.1.tables.0.rows.0.id <"$TMP/out")" = "2.1.1" ] || fail "row id"
  [ "$("$JSON_GET" panels.2.tables.0.id <"$TMP/out")" = "17.2" ] || fail "table 17.2"
  [ "$("$JSON_GET" workloads.0.arch <"$TMP/out")" = "gfx90a" ] || fail "arch"
  [ "$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")" = "3" ] || fail "selected"
  ;;
read_only)
  copy_wl vcopy/MI200
  before=$(cd "$TMP/wl" && find . -type f | sort | xargs md5sum)
  chmod -R a-w "$TMP/wl"
  run analyze -w "$TMP/wl"
  expect_status 0
  after=$(cd "$TMP/wl" && find . -type f | sort | xargs md5sum)
  [ "$before" = "$after" ] || fail "the workload folder changed"
  ;;
block_filter)
  run analyze -w "$WL/vcopy/MI200" -b 3.1.10 -b 17.2 --format csv -o "$TMP/csv"
  expect_status 0
  [ "$(tail -n +2 "$TMP/csv/3.1.csv" | wc -l)" -eq 1 ] || fail "3.1 should hold one row"
  grep -q '^3.1.10,Active CUs,70' "$TMP/csv/3.1.csv" || fail "3.1.10"
  [ ! -f "$TMP/csv/2.1.csv" ] || fail "2.1 should not be shown"
  run analyze -w "$WL/vcopy/MI200" -b TCC --format json
  expect_status 0
  "$JSON_GET" panels.2.tables.0.id <"$TMP/out" | grep -q . || fail "TCC block selects tables"
  run analyze -w "$WL/vcopy/MI200" -b "VALU FLOPs" --format csv -o "$TMP/csv2"
  expect_status 0
  grep -q '^2.1.0,VALU FLOPs' "$TMP/csv2/2.1.csv" && grep -q '^11.1.0,VALU FLOPs' "$TMP/csv2/11.1.csv" || fail "metric name"
  run analyze -w "$WL/vcopy/MI200" -b 99
  expect_status 1
  expect_err "-b 99"
  ;;
compare)
  run analyze -w "$WL/_mix/mix_MI200" -w "$WL/_mix/mixB_MI200"
  expect_status 0
  expect_out "Avg [2]"
  expect_out "%)"
  run analyze -w "$WL/_mix/mix_MI200" -w "$WL/_mix/mixB_MI200" --format json -b 2.1
  expect_status 0
  "$JSON_GET" panels.1.tables.0.rows.8.compare.0.delta_pct <"$TMP/out" >/dev/null || fail "delta in json"
  # Top kernels are matched by name: the row for a kernel compares it with
  # the same kernel of the other run.
  run analyze -w "$WL/_mix/mix_MI200" -w "$WL/_mix/mixB_MI200" --format csv -o "$TMP/c"
  expect_status 0
  head -1 "$TMP/c/0.1.csv" | grep -q 'Count \[2\]' || fail "compare columns"
  # The same kernels as a newer ROCm names them (no " [clone .kd]"; ".kd"
  # dropped): matched all the same, and the comparison says how.
  copy_wl _mix/mix_MI200
  sed -i -e 's/ \[clone \.kd\]//' -e 's/\.kd"/"/; s/\.kd,/,/' "$TMP/wl/"*.csv
  grep -q 'clone \.kd' "$TMP/wl/pmc_perf.csv" && fail "the copy still has ROCm suffixes"
  run analyze -w "$WL/_mix/mix_MI200" -w "$TMP/wl" -b 0 --format json
  expect_status 0
  for r in 0 1 2 3 4; do
    [ "$("$JSON_GET" panels.0.tables.0.rows.$r.compare.0.delta_pct.2 <"$TMP/out")" = "0" ] ||
      fail "top kernel $r: not matched across name suffixes"
    "$JSON_GET" panels.0.tables.0.rows.$r.compare.0.matched_by <"$TMP/out" | grep -q "without its ROCm suffix" ||
      fail "top kernel $r: the match is not said to be by suffix-less name"
  done
  run analyze -w "$WL/_mix/mix_MI200" -w "$TMP/wl" -b 0
  expect_status 0
  expect_out "matched with workload [2] by kernel name without the suffix"
  grep -q -- "-100" "$TMP/out" && fail "a kernel shown as gone (-100 %)"
  # --summary of a comparison: both summaries side by side with deltas.
  run analyze -w "$WL/_mix/mix_MI200" -w "$WL/_mix/mixB_MI200" --summary --width 80
  expect_status 0
  expect_out "Summary of [1]"
  expect_out "vs [2]"
  expect_out "GPU time [2] 2.59 ms (-12.6 %)"
  [ "$(grep -c -- "-> \[2\] .* calls (" "$TMP/out")" -eq 5 ] || fail "not every kernel compared: $(cat "$TMP/out")"
  expect_out "+ new in [2]: memory-bound at HBM"
  [ "$(wc -L <"$TMP/out")" -le 80 ] || fail "compared summary wider than 80 columns"
  run analyze -w "$WL/_mix/mix_MI200" -w "$TMP/wl" --summary
  expect_status 0
  expect_out "(matched by name without the ROCm suffix)"
  grep -q "not among the kernels of \[2\]" "$TMP/out" && fail "a renamed kernel not matched in the summaries"
  run analyze -w "$WL/_mix/mix_MI200" -w "$WL/_mix/mixB_MI200" --summary --format json
  expect_status 0
  [ "$("$JSON_GET" summaries.1.kernels_total <"$TMP/out")" = "5" ] || fail "summaries in JSON"
  # A 3.1 profile against a 3.3 one (ROCm 6.4 vs 7.x).
  run analyze -w "$SHARED/formats/rocprofiler-compute/gemm_fp8_3.1.0_MI325X" \
      -w "$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X" --summary
  expect_status 0
  expect_out "only in [2]'s summary"
  ;;
compare_same_folder)
  # The reference tool refuses the same folder twice; lumen compares two
  # selections of one workload (kernel 0 against kernel 1).
  run analyze -w "$WL/_mix/mix_MI200" -w "$WL/_mix/mix_MI200" --kernel-index 0 --kernel-index 1 --format json
  expect_status 0
  a=$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")
  b=$("$JSON_GET" workloads.1.dispatches_selected <"$TMP/out")
  [ "$a" != "" ] && [ "$b" != "" ] || fail "selections"
  ;;
gpu_and_dispatch)
  # Dispatch 12 ran on GPU 3: lumen selects it (the reference tool refuses it).
  run analyze -w "$WL/_mix/mix2gpu_MI200" -g 3 -d 12 --format json
  expect_status 0
  [ "$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")" = "1" ] || fail "one dispatch"
  [ "$("$JSON_GET" panels.0.tables.1.rows.0.cells.1 <"$TMP/out")" = "12" ] || fail "dispatch 12"
  run analyze -w "$WL/_mix/mix2gpu_MI200" -g 0
  expect_status 1
  expect_err "GPU ids in the data: 2, 3"
  run analyze -w "$WL/_mix/mix2gpu_MI200" -g 3 -d 5
  expect_status 1
  run analyze -w "$WL/vcopy/MI200" -d '>0' --format json
  expect_status 0
  [ "$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")" = "2" ] || fail ">0"
  run analyze -w "$WL/vcopy/MI200" -d 0:2 -d 2 --format json
  [ "$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")" = "3" ] || fail "ranges add up"
  run analyze -w "$WL/vcopy/MI200" -d 'x'
  expect_status 2
  expect_err "-d 'x'"
  # A single id past the workload's dispatches is an error naming it and
  # the count, even beside ids that are there (it was dropped silently).
  run analyze -w "$WL/vcopy/MI200" -d 0,9
  expect_status 1
  one_line_err
  expect_err "-d 9: no dispatch has this Dispatch_ID (3 dispatches; Dispatch_ID values: 0:3)"
  run analyze -w "$WL/_mix/mix2gpu_MI200" -g 3 -d 12,5
  expect_status 1
  expect_err "-d 5: no dispatch has this Dispatch_ID on the selected GPU(s)"
  ;;
kernel_filters)
  total=$(grep -c . "$WL/_mix/mix_MI200/pmc_perf.csv"); total=$((total - 1))
  run analyze -w "$WL/_mix/mix_MI200" -k 'rocprim' --format json
  expect_status 0
  inc=$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")
  run analyze -w "$WL/_mix/mix_MI200" -k '!rocprim' --format json
  expect_status 0
  exc=$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")
  [ $((inc + exc)) -eq "$total" ] && [ "$inc" -gt 0 ] || fail "include $inc + exclude $exc != $total"
  run analyze -w "$WL/_mix/mix_MI200" -k 'no_such_kernel_name'
  expect_status 1
  run analyze -w "$WL/_mix/mix_MI200" -k '('
  expect_status 1
  expect_err "-k '('"
  run analyze -w "$WL/_mix/mix_MI200" --instance 0 --format json
  expect_status 0
  [ "$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/out")" = "5" ] || fail "first instance of 5 kernels"
  run analyze -w "$WL/_mix/mix_MI200" --kernel-index 9
  expect_status 1
  expect_err "--kernel-index 9"
  # The summary narrows with every filter: the README's -k example on a
  # multi-kernel folder, --kernel-index and -k together, -d.
  run analyze -w "$WL/_mix/mix_MI200" -k Kokkos
  expect_status 0
  expect_out "Summary: 1 kernel,"
  grep -q "^[0-9]\. .*rocprim" "$TMP/out" && fail "-k Kokkos: a rocprim kernel in the summary"
  run analyze -w "$WL/_mix/mix_MI200" -k Kokkos --summary --format json
  expect_status 0
  [ "$("$JSON_GET" summary.kernels_total <"$TMP/out")" = "1" ] || fail "-k Kokkos: kernels_total"
  [ "$("$JSON_GET" summary.kernels.0.calls <"$TMP/out")" = "3" ] || fail "-k Kokkos: calls"
  "$JSON_GET" summary.kernels.1.name <"$TMP/out" >/dev/null 2>&1 && fail "-k Kokkos: a second summary kernel"
  run analyze -w "$WL/_mix/mix_MI200" --kernel-index 1 --kernel-index 3 --summary --format json
  expect_status 0
  [ "$("$JSON_GET" summary.kernels_total <"$TMP/out")" = "2" ] || fail "--kernel-index 1,3: kernels_total"
  [ "$("$JSON_GET" summary.kernels.0.calls <"$TMP/out")" = "4" ] || fail "--kernel-index 1: calls"
  [ "$("$JSON_GET" summary.kernels.1.calls <"$TMP/out")" = "21" ] || fail "--kernel-index 3: calls"
  run analyze -w "$WL/_mix/mix_MI200" --kernel-index 1 -k fill --summary
  expect_status 1
  expect_err "no dispatch matches the filters"
  run analyze -w "$WL/_mix/mix_MI200" -d 3:5 --summary
  expect_status 0
  expect_out "Summary: 2 kernels,"
  # A pattern that backtracks without end is refused at PCRE2's match
  # limit, not taken for "no match" (which would change the selection).
  copy_wl vcopy/MI200
  python3 -c 'import sys; p = sys.argv[1]; s = open(p).read().replace("vecCopy(double*, double*, double*, int, int) [clone .kd]", "a" * 40 + "b", 1); open(p, "w").write(s)' "$TMP/wl/pmc_perf.csv"
  run analyze -w "$TMP/wl" -k '!(a+)+$' -b 2
  expect_status 1
  one_line_err
  expect_err "match limit exceeded"
  # An inclusion alike; the message names the pattern and the kernel name
  # it gave up on.
  run analyze -w "$TMP/wl" -k '(a+)+$'
  expect_status 1
  one_line_err
  expect_err "-k '(a+)+\$': gave up matching it against kernel name '$(printf 'a%.0s' $(seq 40))b'"
  expect_err "match limit exceeded"
  ;;
bad_input)
  run analyze
  expect_status 2; one_line_err; expect_err "no workload"
  run analyze -w "$TMP/nowhere"
  expect_status 1; one_line_err; expect_err "$TMP/nowhere"
  mkdir "$TMP/empty"
  run analyze -w "$TMP/empty"
  expect_status 1; one_line_err; expect_err "cannot find pmc_perf.csv"
  run analyze -w "$WL/dispatch_7/MI200"
  expect_status 1; one_line_err; expect_err "unmerged"
  copy_wl vcopy/MI200
  head -c $(( $(head -1 "$WL/vcopy/MI200/pmc_perf.csv" | wc -c) + 500 )) "$WL/vcopy/MI200/pmc_perf.csv" >"$TMP/wl/pmc_perf.csv"
  run analyze -w "$TMP/wl"
  expect_status 1; one_line_err; expect_err "pmc_perf.csv:2:"; expect_err "truncated"
  cp "$WL/vcopy/MI200/pmc_perf.csv" "$TMP/wl/pmc_perf.csv"
  sed -i '3s/$/,42/' "$TMP/wl/pmc_perf.csv"
  run analyze -w "$TMP/wl"
  expect_status 1; one_line_err; expect_err "pmc_perf.csv:3:"; expect_err "found"
  cp "$WL/vcopy/MI200/pmc_perf.csv" "$TMP/wl/pmc_perf.csv"
  col=$(head -1 "$TMP/wl/pmc_perf.csv" | tr ',' '\n' | grep -nx SQ_WAVES | cut -d: -f1)
  # The quoted kernel name holds commas: shift the field number past them.
  extra=$(sed -n 3p "$WL/vcopy/MI200/pmc_perf.csv" | grep -o '"[^"]*"' | tr -cd , | wc -c)
  awk -F, -v OFS=, -v c="$((col + extra))" 'NR==3 { $c = "abc" } { print }' "$WL/vcopy/MI200/pmc_perf.csv" >"$TMP/wl/pmc_perf.csv"
  run analyze -w "$TMP/wl"
  expect_status 1; one_line_err; expect_err "pmc_perf.csv:3:$col: field 'SQ_WAVES': 'abc' is not a number"
  cp "$WL/vcopy/MI200/pmc_perf.csv" "$TMP/wl/pmc_perf.csv"
  c2=$(head -1 "$TMP/wl/sysinfo.csv" | tr ',' '\n' | grep -nx cu_per_gpu | cut -d: -f1)
  cut -d, -f"$c2" --complement "$WL/vcopy/MI200/sysinfo.csv" >"$TMP/wl/sysinfo.csv"
  run analyze -w "$TMP/wl"
  expect_status 1; one_line_err; expect_err "field 'cu_per_gpu'"
  sed 's/gfx90a/gfx1036/' "$WL/vcopy/MI200/sysinfo.csv" >"$TMP/wl/sysinfo.csv"
  run analyze -w "$TMP/wl"
  expect_status 1; one_line_err; expect_err "gfx1036 has no metric definitions"
  run analyze -w "$WL/_edge/zero_grbm_gui_active_row0"
  expect_status 1; one_line_err; expect_err "GRBM_GUI_ACTIVE"
  run analyze -w "$WL/_edge/blank_sq_insts_salu_all"
  expect_status 1; one_line_err; expect_err "every dispatch row has an empty cell"
  # A 2 GB line: refused quickly with the line named, not read whole.
  cp "$WL/vcopy/MI200/sysinfo.csv" "$TMP/wl/sysinfo.csv"
  head -1 "$WL/vcopy/MI200/pmc_perf.csv" >"$TMP/wl/pmc_perf.csv"
  truncate -s 2G "$TMP/wl/pmc_perf.csv"
  start=$(date +%s)
  run analyze -w "$TMP/wl"
  expect_status 1; one_line_err; expect_err "pmc_perf.csv:2:"; expect_err "longer than"
  [ $(( $(date +%s) - start )) -lt 20 ] || fail "too slow on a 2 GB line"
  # Zero durations (MI300 folders store rounded timestamps): rates are inf.
  run analyze -w "$WL/vcopy/MI300X_A1" -b 2.1.1 --format csv -o "$TMP/z"
  expect_status 0
  grep -q '^2.1.1,VALU IOPs,inf' "$TMP/z/2.1.csv" || fail "zero duration gives inf"
  ;;
flags)
  run analyze -w "$WL/vcopy/MI200" --plan
  expect_status 2; one_line_err; expect_err "--plan is not a flag of \`lumen analyze\`"
  run analyze -w "$WL/vcopy/MI200" --bogus
  expect_status 2; expect_err "unknown flag --bogus"
  run analyze -w "$WL/vcopy/MI200" --norm per_moon
  expect_status 2; expect_err "--norm per_moon: expected per_wave, per_cycle, per_second or per_kernel"
  run analyze -w "$WL/vcopy/MI200" --time-unit min
  expect_status 2; one_line_err; expect_err "--time-unit min: expected s, ms, us or ns"
  run analyze -w "$WL/vcopy/MI200" --weight heavy
  expect_status 2; expect_err "--weight heavy: use count (each dispatch once, the reference tool's) or time"
  run analyze -w "$WL/vcopy/MI200" --format xml
  expect_status 2
  run analyze -w "$WL/vcopy/MI200" -b 2 --decimal 4
  expect_status 0; expect_out "427.0324"
  run analyze -w "$WL/vcopy/MI200" --time-unit us --format csv -o "$TMP/t"
  expect_status 0
  head -1 "$TMP/t/0.1.csv" | grep -q 'Sum(us)' || fail "time unit"
  grep -q ',52.32,' "$TMP/t/0.1.csv" || fail "52.32 us"
  run analyze -w "$WL/_mix/mix_MI200" --max-stat-num 2 -b 2
  expect_status 0
  [ "$(sed -n '/0.2 Dispatch List/,/^$/p' "$TMP/out" | grep -c '^│ [0-9]')" -eq 2 ] || fail "max-stat-num"
  run analyze -p "$WL/vcopy/MI200" --list-stats
  expect_status 0; expect_out "0.2 Dispatch List"
  grep -q "System Speed-of-Light" "$TMP/out" && fail "--list-stats shows only the lists"
  run analyze -w "$WL/vcopy/MI200" --norm per_kernel -b 10.1 --format csv -o "$TMP/n"
  grep -q 'Instr per kernel' "$TMP/n/10.1.csv" || fail "per_kernel unit"
  # --corrected: units as written and the 18.1 channel typo fixed.
  run analyze -w "$WL/vcopy/MI200" -b 2.1.19 -b 18.1 --format csv -o "$TMP/ref"
  run analyze -w "$WL/vcopy/MI200" -b 2.1.19 -b 18.1 --format csv -o "$TMP/fix" --corrected
  expect_status 0
  grep -q 'Gb/s' "$TMP/ref/2.1.csv" && grep -q 'GB/s' "$TMP/fix/2.1.csv" || fail "units"
  a=$(grep '^18.1.0' "$TMP/ref/18.1.csv" | cut -d, -f3); b=$(grep '^18.1.0' "$TMP/fix/18.1.csv" | cut -d, -f3)
  [ "$a" != "$b" ] || fail "corrected 18.1"
  ;;
help_and_logs)
  "$LUMEN" help analyze >"$TMP/h1"; "$LUMEN" analyze --help >"$TMP/h2"
  cmp -s "$TMP/h1" "$TMP/h2" || fail "help texts differ"
  grep -q -- "--kernel-index" "$TMP/h1" || fail "help lists flags"
  # An option's values in the help are exactly its table's, in its order:
  # those the error for a value outside the table names.
  for flag in norm weight time-unit clock; do
    listed=$(sed -nE "s/^  --$flag ([^ ]+).*/\1/p" "$TMP/h1")
    "$LUMEN" analyze -w "$WL/vcopy/MI200" --$flag lumen_no_such_value >/dev/null 2>"$TMP/err"
    table=$(sed -E 's/.*: (expected|use) //; s/ \([^)]*\)//g; s/, | or /|/g' "$TMP/err")
    [ -n "$listed" ] && [ "$listed" = "$table" ] || fail "help lists --$flag $listed, the table $table"
  done
  "$LUMEN" analyze -w "$WL/vcopy/MI200" --norm lumen_no_such_value >/dev/null 2>"$TMP/err"
  table=$(sed -E 's/.*: expected //; s/, | or /|/g' "$TMP/err")
  "$LUMEN" help serve | grep -qF "[&norm=$table]" || fail "help serve lists norm=$table"
  run --version
  expect_status 0; expect_out "lumen "
  run analyze -w "$WL/vcopy/MI200" --self-time -b 2
  expect_status 0; expect_err "lumen self-time"; expect_err "evaluate"; expect_err "load"
  LUMEN_LOG=debug "$LUMEN" analyze -w "$WL/vcopy/MI200" -b 2 >/dev/null 2>"$TMP/err"
  grep -q "debug" "$TMP/err" || fail "LUMEN_LOG=debug"
  "$LUMEN" analyze -w "$WL/vcopy/MI200" -b 2 -v >/dev/null 2>"$TMP/err"
  grep -q "debug" "$TMP/err" || fail "-v"
  "$LUMEN" analyze -q -w "$WL/vcopy/MI200" -b 2 >/dev/null 2>"$TMP/err"
  [ ! -s "$TMP/err" ] || fail "-q still logs"
  ;;
list)
  run list metrics --arch gfx942
  expect_status 0; expect_out "2.1.0 -> VALU FLOPs"; expect_out "18.12"
  run list architectures
  expect_status 0
  [ "$(grep -c '^gfx9' "$TMP/out")" -eq 7 ] || fail "seven AMD Instinct architectures"
  [ "$(grep -c '^gfx1' "$TMP/out")" -eq 7 ] || fail "seven AMD Radeon architectures"
  grep -Eq '^gfx1150 +amd +- +Radeon 890M/880M \(APU\) +9 +13 +84 +256$' "$TMP/out" || fail "gfx1150 line"
  grep -Eq '^gfx1151 +amd +- +Radeon 8060S \(APU\) +9 +13 +84 +256$' "$TMP/out" || fail "gfx1151 line"
  [ "$(grep -c '^sm_' "$TMP/out")" -eq 7 ] || fail "seven NVIDIA architectures"
  grep -Eq '^sm_90 +nvidia +GH100 +H100, H200' "$TMP/out" || fail "sm_90 line"
  grep -Eq '^sm_80 +nvidia +GA100' "$TMP/out" || fail "sm_80 line"
  grep -Eq '^sm_100 +nvidia +GB100' "$TMP/out" || fail "sm_100 line"
  grep -Eq '^sm_70 +nvidia +GV100 +Tesla V100 ' "$TMP/out" || fail "sm_70 line"
  grep -Eq '^sm_75 +nvidia +TU104 +Tesla T4, GeForce RTX 20 ' "$TMP/out" || fail "sm_75 line"
  grep -Eq '^sm_86 +nvidia +GA102 +A10, A40, GeForce RTX 30 ' "$TMP/out" || fail "sm_86 line"
  grep -Eq '^sm_89 +nvidia +AD102 +L4, L40, GeForce RTX 40 ' "$TMP/out" || fail "sm_89 line"
  run list metrics --arch ga102
  expect_status 0; expect_out "7.2.4 -> FMA Heavy Pipe"
  run list metrics --arch gh100
  expect_status 0; expect_out "2.1.0 -> Compute (SM) Throughput"; expect_out "10.2"
  run list counters --arch sm_100
  expect_status 0; expect_out "dram__bytes_read.sum"
  run list counters --arch gfx90a
  expect_status 0; expect_out "SQ_WAVES"
  run list metrics --arch gfx1
  expect_status 2
  run list metrics -v --arch gfx90a
  expect_out "Achieved"
  ;;
plan_nvidia)
  # Planning for NVIDIA chips on the host: CUPTI's Host API prices the sets.
  run list backends
  if ! grep -Eq '^cupti-host +planning +yes +yes' "$TMP/out"; then
    echo "SKIP: CUPTI Profiler Host API unavailable: $(grep '^cupti-host' "$TMP/out")"
    exit 77
  fi
  # Collection is built with the Host API; on a machine without an NVIDIA
  # GPU it is not usable and says why.
  grep -Eq '^cupti +counters +yes +no +built; not usable: .*(NVIDIA driver|GPU)' "$TMP/out" ||
    grep -Eq '^cupti +counters +yes +yes +range profiler' "$TMP/out" ||
    fail "cupti row: $(grep '^cupti ' "$TMP/out")"
  for arch in gv100 sm_75 sm_86 ad102 ga100 gh100 gb100 sm_90; do
    run profile --plan --arch "$arch"
    expect_status 0
    last=$(tail -1 "$TMP/out")
    echo "$arch: $last"
    echo "$last" | grep -Eq '^sets: [0-9]+, passes: [0-9]+ \(application replay: [0-9]+ runs\)$' ||
      fail "$arch last line: $last"
    total=$(echo "$last" | sed -E 's/.*passes: ([0-9]+).*/\1/')
    sum=$(grep -E '^set [0-9]+: ' "$TMP/out" | sed -E 's/.* ([0-9]+) pass(es)?,.*/\1/' | awk '{s += $1} END {print s}')
    [ "$sum" = "$total" ] || fail "$arch: set passes $sum != total $total"
    one=$(sed -nE 's/^all metrics in one config: ([0-9]+) passes$/\1/p' "$TMP/out")
    [ -n "$one" ] && [ "$total" -le "$one" ] || fail "$arch: plan $total worse than one config $one"
    [ "$total" -ge 2 ] || fail "$arch: a full collection in $total pass"
  done
  expect_out "chip GH100"
  expect_out "sm__throughput.avg.pct_of_peak_sustained_elapsed"
  run profile --plan --arch gh100 --replay kernel
  expect_status 0
  kernel=$(tail -1 "$TMP/out")
  echo "$kernel" | grep -Eq '^sets: 1, passes: [0-9]+ \(kernel replay: one run' || fail "kernel: $kernel"
  run profile --plan --arch gh100 --replay instance -b 2.1
  expect_status 0
  small=$(tail -1 "$TMP/out" | sed -E 's/.*passes: ([0-9]+).*/\1/')
  [ "$small" -lt "$total" ] || fail "-b 2.1 needs $small passes, everything $total"
  expect_out "instance cycling"
  grep -q 'lts__throughput' "$TMP/out" || fail "2.1 plan lacks lts__throughput"
  ! grep -q 'smsp__average_warps_issue_stalled' "$TMP/out" || fail "2.1 plan has stall metrics"
  run profile --plan --arch gh100 --replay sometimes
  expect_status 2
  run profile --plan --arch gfx90a --replay kernel
  expect_status 2
  # Kernel replay goes to the backend, which decides (CUPTI collects with
  # it; rocprofiler-sdk refuses it).
  LUMEN_ROCPROFILER_SDK=$TMP/none.so run profile --replay kernel -n x -w "$TMP/kx" -- /bin/true
  [ "$STATUS" -ne 0 ] || fail "--replay kernel ran /bin/true"
  grep -qF -- "--replay" "$TMP/err" && fail "--replay kernel refused by the command line: $(cat "$TMP/err")"
  ;;
metrics_dir)
  mkdir -p "$TMP/defs"
  printf 'arch: gfx90a\ncounters: [SQ_WAVES]\n' >"$TMP/defs/arch.yaml"
  printf 'normalizations:\n  per_wave: {expr: SQ_WAVES, unit: wave}\nquantities:\n  per_cu: SQ_WAVES / $cu_per_gpu\n' >"$TMP/defs/quantities.yaml"
  cat >"$TMP/defs/02_mine.yaml" <<'EOF'
panel: 2
title: Mine
tables:
- id: '2.1'
  title: Waves
  columns: {Metric: name, Avg: mean, Max: max, Unit: unit}
  rows:
  - metric: Waves per CU
    expr: $per_cu
    unit: waves
EOF
  run analyze -w "$WL/vcopy/MI200" --metrics-dir "$TMP/defs" --format csv -o "$TMP/o"
  expect_status 0
  v=$(grep '^2.1.0' "$TMP/o/2.1.csv" | cut -d, -f3)
  near "$v" "$(awk 'BEGIN { printf "%.17g", 16384 / 104 }')"
  run analyze -w "$WL/vcopy/MI300X_A1" --metrics-dir "$TMP/defs"
  expect_status 1; one_line_err; expect_err "the definitions are for gfx90a but the workload is gfx942"
  sed -i 's|expr: \$per_cu|expr: $per_cu +* 2|' "$TMP/defs/02_mine.yaml"
  run analyze -w "$WL/vcopy/MI200" --metrics-dir "$TMP/defs"
  expect_status 1; one_line_err
  expect_err "02_mine.yaml:9:20: expected a value, found an operator"
  # The shipped definitions through the run-time compiler give the same numbers.
  run analyze -w "$WL/vcopy/MI200" --metrics-dir "$SOURCE/metrics" --format csv -o "$TMP/m1"
  expect_status 0
  run analyze -w "$WL/vcopy/MI200" --format csv -o "$TMP/m2"
  diff -r "$TMP/m1" "$TMP/m2" >/dev/null || fail "run-time and built-in catalogs differ"
  ;;
fail_fast)
  # Mistakes fail at once with a message that helps.
  run analyze -w "$WL/vcopy/MI200" --nrom per_kernel
  expect_status 2; one_line_err; expect_err "did you mean --norm?"
  run analyze -w "$WL/vcopy/MI200" --zzzz
  expect_status 2; ! grep -q "did you mean" "$TMP/err" || fail "a suggestion for --zzzz"
  run help foo
  expect_status 2; one_line_err; expect_err "help foo: no such mode"
  run help analyze
  expect_status 0
  run analyze -w "$WL/vcopy/MI200" -d 99
  expect_status 1; one_line_err; expect_err "(Dispatch_ID values: 0:3)"
  run analyze -w "$WL/_mix/mix2gpu_MI200" -g 3 -d 99
  expect_status 1; expect_err "Dispatch_ID values there: 2:4, 6:9"
  # db list in every format; an unknown one is an error.
  LUMEN_DB="$TMP/s.db" "$LUMEN" db import -w "$WL/vcopy/MI200" -n vc >/dev/null 2>&1 || fail "import"
  LUMEN_DB="$TMP/s.db" run db list --format json
  expect_status 0
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["workloads"][0]["name"] == "vc" and d["workloads"][0]["dispatches"] == 3' "$TMP/out" || fail "db list json"
  LUMEN_DB="$TMP/s.db" run db list --format xml
  expect_status 2; expect_err "--format xml: expected text, csv or json"
  # -w NAME with no such folder: the workload of that name in the store.
  (cd "$TMP" && LUMEN_DB="$TMP/s.db" "$LUMEN" analyze -w vc -b 2.1.1 >"$TMP/out" 2>"$TMP/err")
  STATUS=$?
  expect_status 0; expect_out "427.03"
  (cd "$TMP" && LUMEN_DB="$TMP/s.db" "$LUMEN" analyze -w vc >"$TMP/out" 2>"$TMP/err")
  STATUS=$?
  expect_status 0; expect_out "Summary: 1 kernel"
  (cd "$TMP" && LUMEN_DB="$TMP/s.db" "$LUMEN" analyze -w nothere >"$TMP/out" 2>"$TMP/err")
  STATUS=$?
  expect_status 1; expect_err "no such workload folder"
  ;;
delta)
  # One definition of the change in %: full precision, n/a against a zero
  # base, in text, CSV and JSON; --delta reference gives the reference's.
  copy_wl vcopy/MI200
  python3 "$SOURCE/tests/integration/edit_csv.py" "$TMP/wl/pmc_perf.csv" "SQ_INSTS_VALU_FMA_F32=SQ_WAVES*2" \
    "SQ_INSTS_VALU_ADD_F32=SQ_INSTS_VALU_ADD_F32+1" || fail "edit"
  run analyze -w "$WL/vcopy/MI200" -w "$TMP/wl" -b 2.1.0 -b 2.1.1 --format json
  expect_status 0
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = [t for p in d["panels"] for t in p["tables"] if t["id"] == "2.1"][0]["rows"]
flops = [r for r in rows if r["id"] == "2.1.0"][0]
assert flops["cells"][1] == 0 and flops["compare"][0]["cells"][1] > 0, flops
assert flops["compare"][0]["delta_pct"][1] is None, "a change against 0 must be undefined"
assert flops["compare"][0]["delta_pct"][3] == 0, "the same peak must be a 0 % change"' "$TMP/out" || fail "JSON delta"
  run analyze -w "$WL/vcopy/MI200" -w "$TMP/wl" -b 2.1.0 --width 0
  expect_status 0; expect_out "(n/a)"
  run analyze -w "$WL/vcopy/MI200" -w "$TMP/wl" -b 2.1.0 --format csv -o "$TMP/c"
  expect_status 0
  grep -q '^2.1.0,VALU FLOPs,0.0,[0-9.e+]*,,' "$TMP/c/2.1.csv" || fail "CSV delta against 0 is not blank: $(grep '^2.1.0' "$TMP/c/2.1.csv")"
  run analyze -w "$WL/vcopy/MI200" -w "$TMP/wl" -b 2.1.0 --format json --delta reference
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [t for p in d["panels"] for t in p["tables"] if t["id"] == "2.1"][0]["rows"][0]
assert abs(r["compare"][0]["delta_pct"][1] - round(r["compare"][0]["cells"][1], 2) * 100) < 1e-6, r' "$TMP/out" || fail "--delta reference"
  run analyze -w "$WL/vcopy/MI200" --delta other
  expect_status 2; expect_err "--delta other"
  # A comparison against data without durations says so; one with
  # durations does not.
  run analyze -w "$WL/vcopy/MI300X_A1" -w "$WL/vcopy/MI300X_A1" -b 2.1.0
  expect_status 0; expect_err "End_Timestamp == Start_Timestamp"
  run analyze -w "$WL/vcopy/MI200" -w "$TMP/wl" -b 2.1.0
  expect_status 0
  ! grep -q "Start_Timestamp" "$TMP/err" || fail "warned about durations that are not zero"
  ;;
compat)
  # --compat 3.3: the newer reference's units and default normalization;
  # 3.0 stays the default.
  WL33=$SHARED/workloads-3.3
  run analyze -w "$WL33/vcopy/MI200" --compat 3.3 --format csv -o "$TMP/c33"
  expect_status 0
  grep -q '^2.1.1,VALU IOPs,427.0323563102217,Giop/s,22630.4,' "$TMP/c33/2.1.csv" || fail "3.3 2.1.1 row"
  grep -q ',Instr per kernel,' "$TMP/c33/10.1.csv" || fail "3.3 default normalization"
  run analyze -w "$WL/vcopy/MI200" --format csv -o "$TMP/c30"
  grep -q '^2.1.1,VALU IOPs,427.0323563102217,Giop,' "$TMP/c30/2.1.csv" || fail "3.0 2.1.1 row"
  grep -q ',Instr per wave,' "$TMP/c30/10.1.csv" || fail "3.0 default normalization"
  run analyze -w "$WL33/vcopy/MI200" --compat 3.3 --norm per_wave -b 10.1
  expect_status 0
  expect_out "Instr per wave"
  run analyze -w "$WL/vcopy/MI200" --compat 2.9
  expect_status 2
  expect_err "--compat 2.9: expected 3.0 or 3.3"
  # The same tables through the store.
  run db import --db "$TMP/s.db" -w "$WL33/vcopy/MI200"
  expect_status 0
  run analyze --db "$TMP/s.db" -w vcopy_MI200 --compat 3.3 --format csv -o "$TMP/c33db"
  expect_status 0
  cmp -s "$TMP/c33/2.1.csv" "$TMP/c33db/2.1.csv" || fail "3.3 through the store differs"
  run analyze --db "$TMP/s.db" -w vcopy_MI200 --compat 3.0 --format csv -o "$TMP/c30db"
  grep -q '^2.1.1,VALU IOPs,427.0323563102217,Giop,' "$TMP/c30db/2.1.csv" || fail "3.0 through the store (cache mixed up)"
  # Without --compat, a folder written by 3.3 (num_hbm_channels in its
  # sysinfo.csv) is read in 3.3 semantics, from the folder and the store.
  run analyze -w "$WL33/vcopy/MI200" --format csv -o "$TMP/auto"
  expect_status 0
  for t in 2.1 10.1 17.1; do cmp -s "$TMP/c33/$t.csv" "$TMP/auto/$t.csv" || fail "3.3 folder without --compat: $t differs"; done
  run analyze --db "$TMP/s.db" -w vcopy_MI200 --format csv -o "$TMP/autodb"
  cmp -s "$TMP/c33/2.1.csv" "$TMP/autodb/2.1.csv" || fail "3.3 folder through the store without --compat"
  run analyze -w "$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X" --summary
  expect_status 0
  expect_out "Summary: 2 kernels"
  # A field one layout lacks is derived where the other defines it: the
  # HBM peak of 3.3 from hbm_bw and the memory clock, 3.0's hbm_bw from
  # the channels (1.6 GHz x 32 B x 32 channels = 1638.4 GB/s either way).
  run analyze -w "$WL/vcopy/MI200" --compat 3.3 -b 2.1 --format csv -o "$TMP/derive33"
  expect_status 0
  grep -q '^2.1.22,L2-Fabric Read BW,.*,1638.4,' "$TMP/derive33/2.1.csv" || fail "3.3 peak from hbm_bw"
  run analyze -w "$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X" --compat 3.0 -b 2.1 --format csv -o "$TMP/derive30"
  expect_status 0
  grep -q '^2.1.22,L2-Fabric Read BW,.*,5324.8,' "$TMP/derive30/2.1.csv" || fail "3.0 hbm_bw from channels"
  # Underivable (no memory clock): the error names the semantics that
  # read the folder as it is.
  run analyze -w "$WL33/vcopy/MI300X_A1_rocpd" --compat 3.0 -b 2.1
  expect_status 1
  one_line_err
  expect_err "field 'hbm_bw': missing"
  expect_err "layout of rocprofiler-compute 3.3 and later, read in its own semantics without --compat"
  # A 3.1 profile compared with a 3.3 one: each in its semantics, both
  # normalized like the baseline.
  run analyze -w "$SHARED/formats/rocprofiler-compute/gemm_fp8_3.1.0_MI325X" \
      -w "$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X" -b 2.1 --format json
  expect_status 0
  expect_err "normalized per_wave like the baseline"
  [ "$("$JSON_GET" workloads.1.normalization <"$TMP/out")" = "per_wave" ] || fail "comparison normalization"
  # MI300: the F8 row and the halved BF16 peak (304 CUs at 2100 MHz).
  run analyze -w "$WL33/vcopy/MI300X_A1" --compat 3.3 -b 2.1 --format csv -o "$TMP/c33x"
  grep -q '^2.1.2,MFMA FLOPs (F8),' "$TMP/c33x/2.1.csv" || fail "no F8 row"
  grep -q '^2.1.3,MFMA FLOPs (BF16),.*,1307443.2,' "$TMP/c33x/2.1.csv" || fail "BF16 peak"
  ;;
gfx950)
  WL33=$SHARED/workloads-3.3
  run analyze -w "$WL33/vcopy/MI350" --compat 3.0
  expect_status 1
  expect_err "gfx950 has metric definitions only in the semantics of rocprofiler-compute 3.3"
  run analyze -w "$WL33/vcopy/MI350" -b 2.1
  expect_status 0
  expect_out "Gflop/s"
  # A gfx950 folder in the older layout (no num_hbm_channels): 3.3 all the
  # same, and lumen says so.
  mkdir -p "$TMP/old950" && cp "$WL33/vcopy/MI350/"*.csv "$TMP/old950/"
  python3 - "$TMP/old950/sysinfo.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
i = rows[0].index("num_hbm_channels")
rows = [r[:i] + r[i + 1:] for r in rows]
csv.writer(open(sys.argv[1], "w", newline="")).writerows(rows)
PY
  run analyze -w "$TMP/old950" -b 1
  expect_status 0
  expect_err "gfx950: analyzed in rocprofiler-compute 3.3 semantics"
  run profile --plan --arch gfx950
  expect_status 0
  expect_out "sets:"
  ;;
other_tools)
  # A path holding another tool's output says what it found and what to do.
  F=$SHARED/formats
  for d in rocprofv3/gfx950_ds_read_b128_bank:"give it with --arch" \
           ncu/v100_2020:"give it with --arch"; do
    run analyze -w "$F/${d%%:*}"
    expect_status 1; one_line_err; expect_err "${d#*:}"
  done
  # rocprof (v1) results are read (formats_test.sh checks their numbers),
  # its kernel statistics alone as per-kernel totals.
  run analyze -w "$F/rocprof-v1/mi250x_laplacian_dp_kernel1" -b 1
  expect_status 0; expect_out "gfx90a"
  run analyze -w "$F/rocprof-v1/mi300x_stats"
  expect_status 0; expect_out "Top Kernels"; expect_out "per-kernel totals only"
  # A folder of one Nsight Compute export is read as the file; of two, the
  # file is asked for.
  run analyze -w "$F/ncu/cc86_metrics" -b 0
  expect_status 0; expect_out "Top Kernels"
  mkdir -p "$TMP/two_ncu" && cp "$F/ncu/cc86_metrics/metrics.csv" "$TMP/two_ncu/a.csv" &&
    cp "$F/ncu/cc86_metrics/metrics.csv" "$TMP/two_ncu/b.csv"
  run analyze -w "$TMP/two_ncu"
  expect_status 1; one_line_err; expect_err "Nsight Compute CSV export"; expect_err "given as the file"
  run analyze -w "$F/ncu/cc86_metrics/metrics.csv" -b 0
  expect_status 0; expect_out "Top Kernels"
  : >"$TMP/run1.ncu-rep"
  run analyze -w "$TMP/run1.ncu-rep"
  expect_status 1; one_line_err; expect_err "export it with \`ncu --import run1.ncu-rep --csv --page raw"
  # The folder above a workload: did you mean.
  mkdir -p "$TMP/workloads/bmm1" && cp -r "$WL/vcopy/MI200" "$TMP/workloads/bmm1/MI300X_A1"
  run analyze -w "$TMP/workloads/bmm1"
  expect_status 1; one_line_err; expect_err "did you mean -w $TMP/workloads/bmm1/MI300X_A1"
  run db import --db "$TMP/s.db" -w "$TMP/workloads/bmm1"
  expect_status 1; expect_err "did you mean"
  # A FIFO among the files is passed over, not read (no hang).
  mkfifo "$TMP/workloads/bmm1/pipe.csv"
  run analyze -w "$TMP/workloads/bmm1"
  expect_status 1; expect_err "did you mean"
  # Column names that differ only in case get a hint.
  copy_wl vcopy/MI200
  sed -i '1s/Dispatch_ID/Dispatch_Id/' "$TMP/wl/pmc_perf.csv"
  run analyze -w "$TMP/wl" -b 2
  expect_status 0; expect_err "field 'Dispatch_Id': not the column 'Dispatch_ID'"
  sed -i '1s/Kernel_Name/kernel_name/' "$TMP/wl/pmc_perf.csv"
  run analyze -w "$TMP/wl"
  expect_status 1; expect_err "the file has 'kernel_name': column names are case-sensitive"
  ;;
rocpd_layout)
  # One row per counter (rocpd-based profiler) and the newer sysinfo.csv.
  WL33=$SHARED/workloads-3.3
  run analyze -w "$WL33/vcopy/MI300X_A1_rocpd" --compat 3.3 -b 2.1 --format csv -o "$TMP/r"
  expect_status 0
  [ "$(wc -l <"$TMP/r/0.2.csv")" -eq 4 ] || fail "expected 3 dispatches"
  grep -q '^2,2,"vecCopy(double\*, double\*, double\*, int, int)",0$' "$TMP/r/0.2.csv" || fail "dispatch 2 on GPU 0"
  # this sysinfo.csv has no max_mclk: the HBM peak is blank, as in the reference
  grep -q '^2.1.23,L2-Fabric Read BW,[0-9.]*,Gb/s,,,' "$TMP/r/2.1.csv" || fail "blank HBM peak"
  # Durations from the integer timestamps (beyond 2^53 ns): the median of a
  # dispatch's rows, exactly; accumulated counters (<table>_ACCUM columns)
  # feed the latency metrics.
  run analyze -w "$WL33/vcopy/MI300X_A1_rocpd" --compat 3.3 -b 7.2 -b 11.2 --format csv -o "$TMP/s"
  expect_status 0
  grep -q '^7.2.0,Kernel Time,7357.666666666667,6730.0,8613.0,' "$TMP/s/7.2.csv" || fail "exact kernel time"
  grep -q '^11.2.9,VMEM Latency,1105.29' "$TMP/s/11.2.csv" || fail "VMEM latency from SQ_INST_LEVEL_VMEM_ACCUM"
  # Without --compat: the same tables (the folder's own 3.3 semantics).
  run analyze -w "$WL33/vcopy/MI300X_A1_rocpd" -b 2.1 --format csv -o "$TMP/auto"
  expect_status 0
  cmp -s "$TMP/r/2.1.csv" "$TMP/auto/2.1.csv" || fail "rocpd folder without --compat differs"
  # 3.0 reads a field that the newer layout does not have: named.
  run analyze -w "$WL33/vcopy/MI300X_A1_rocpd" --compat 3.0
  expect_status 1
  expect_err "field 'hbm_bw': missing"
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo PASS
