#!/usr/bin/env bash
# Guided analysis end to end: the rules of metrics/rules fire on workloads
# built from a real folder by editing single counters, each case firing
# exactly its rule; the summary in text fits the terminal width and agrees
# with JSON; user rules and rule errors.
# Usage: rules_test.sh LUMEN SHARED_DIR SOURCE_DIR TEST_NAME
set -u
LUMEN=$1
SHARED=$2
SOURCE=$3
NAME=$4
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-rules-XXXXXX)
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
EDIT="python3 $SRCDIR/edit_csv.py"

# fired DIR: the rule ids that fire on the top kernel of DIR, sorted, one line.
fired() {
  "$LUMEN" analyze -w "$1" --summary --format json >"$TMP/s.json" 2>"$TMP/s.err" || fail "analyze $1: $(cat "$TMP/s.err")"
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(f["rule"] for f in d["summary"]["kernels"][0]["findings"])))' "$TMP/s.json"
}
# clean NAME [SRC]: a copy of SRC (vcopy/MI200) on which no rule fires: the
# L2 hit rate raised to 95 %.
clean() {
  cp -r "$WL/${2:-vcopy/MI200}" "$TMP/$1"
  chmod -R u+w "$TMP/$1"
  $EDIT "$TMP/$1/pmc_perf.csv" "TCC_HIT_sum=TCC_MISS_sum*19" || fail "edit"
}
expect_fired() { # DIR "ids"
  local got
  got=$(fired "$1")
  [ "$got" = "$2" ] || fail "$(basename "$1"): rules fired: '$got', expected '$2'"
}

# nv NAME [COL=VALUE ...]: an NVIDIA workload (sm_90 unless NV_ARCH says)
# built from a healthy kernel on which no rule fires, with columns set.
nv() {
  local name=$1
  shift
  python3 "$SRCDIR/nv_fixture.py" "$SOURCE/metrics/${NV_ARCH:-sm_90}" "$TMP/$name" "$@" || fail "nv_fixture $name"
}

# rdna NAME ARCH [VGPR=N] [COUNTER=VALUE ...]: a Radeon workload
# (rdna_fixture.py) on which no rule fires, with counters set.
rdna() {
  local name=$1 arch=$2
  shift 2
  python3 "$SRCDIR/rdna_fixture.py" "$arch" "$TMP/$name" "$@" >/dev/null || fail "rdna_fixture $name"
}

case $NAME in
rdna)
  # The Radeon rules: none on the healthy kernel of every architecture,
  # each alone on a gfx1100 kernel changed in one place (counts of the
  # first dispatch, for 96 CUs and 100000 busy cycles).
  for a in gfx1100 gfx1101 gfx1102 gfx1150 gfx1151 gfx1200 gfx1201; do
    rdna base_$a $a
    expect_fired "$TMP/base_$a" ""
  done
  # 256 VGPRs in wave32: granules of 24 give 264, 1536 / 264 = 5 waves.
  rdna vgpr gfx1100 VGPR=256
  expect_fired "$TMP/vgpr" "vgpr-limited"
  # 128 VGPRs: 10 waves in wave32 (no finding), 5 in wave64 (768 / 132).
  rdna vgpr32 gfx1100 VGPR=128
  expect_fired "$TMP/vgpr32" ""
  rdna vgpr64 gfx1100 VGPR=128 SQ_WAVE64_INSTS=2000000
  expect_fired "$TMP/vgpr64" "vgpr-limited"
  grep -q "wave64 allow 5 waves per SIMD" "$TMP/s.json" || fail "wave64 verdict: $(head -c 600 "$TMP/s.json")"
  # gfx1102 has 1024 VGPRs: 256 in wave32 allow 4 waves (granule 16).
  rdna vgpr1102 gfx1102 VGPR=256
  expect_fired "$TMP/vgpr1102" "vgpr-limited"
  grep -q "allow 4 waves per SIMD" "$TMP/s.json" || fail "gfx1102 verdict"
  # The RDNA 3.5 APUs: gfx1150 has 1024 VGPRs (4 waves at 256, granule 16),
  # gfx1151 the 1.5x file of 1536 (5 waves at 256, granule 24).
  rdna vgpr1150 gfx1150 VGPR=256
  expect_fired "$TMP/vgpr1150" "vgpr-limited"
  grep -q "allow 4 waves per SIMD" "$TMP/s.json" || fail "gfx1150 verdict"
  rdna vgpr1151 gfx1151 VGPR=256
  expect_fired "$TMP/vgpr1151" "vgpr-limited"
  grep -q "allow 5 waves per SIMD" "$TMP/s.json" || fail "gfx1151 verdict"
  # A third of gfx1150's lookups hit; its 57 GB/s of reads and 56 of writes
  # are 94 % of the 120 GB/s of shared memory.
  rdna gl2apu gfx1150 GL2C_HIT=50000
  expect_fired "$TMP/gl2apu" "gl2-miss-to-memory"
  grep -q "memory traffic 94 % of the DRAM peak" "$TMP/s.json" || fail "gfx1150 memory verdict"
  # A third of lookups hit; 150000 128-byte reads more: 532 GB/s of 960.
  rdna gl2 gfx1100 GL2C_HIT=50000 GL2C_EA_RDREQ_128B=150000
  expect_fired "$TMP/gl2" "gl2-miss-to-memory"
  rdna conflicts gfx1100 SQC_LDS_BANK_CONFLICT=20000
  expect_fired "$TMP/conflicts" "lds-bank-conflicts"
  # 0.3 LDS instructions per CU per cycle, 40 % of wave cycles waiting to issue.
  rdna lds gfx1100 SQ_INSTS_LDS=2880000 SQ_WAIT_INST_ANY=5760000
  expect_fired "$TMP/lds" "lds-bound"
  # 2 % of the VALU peak, 30 % of the bandwidth peak at most.
  rdna valu gfx1100 SQ_INSTS_VALU=400000
  expect_fired "$TMP/valu" "low-valu"
  ;;
nvidia)
  # The NVIDIA rules: each fires alone on a kernel changed in one place.
  for NV_ARCH in sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100; do
    nv base_$NV_ARCH
    expect_fired "$TMP/base_$NV_ARCH" ""
  done
  NV_ARCH=sm_90
  nv dram gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed=92
  expect_fired "$TMP/dram" "dram-bound"
  nv sm sm__throughput.avg.pct_of_peak_sustained_elapsed=91
  expect_fired "$TMP/sm" "compute-bound"
  nv l2 lts__t_sector_hit_rate.pct=30
  expect_fired "$TMP/l2" "l2-hit-low"
  nv l1 l1tex__t_sector_hit_rate.pct=5
  expect_fired "$TMP/l1" "l1-hit-low"
  nv coal l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum=32e6
  expect_fired "$TMP/coal" "uncoalesced-global"
  nv bank l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum=6e4
  expect_fired "$TMP/bank" "shared-bank-conflicts"
  nv regs Arch_VGPR=128
  expect_fired "$TMP/regs" "occupancy-registers"
  nv smem LDS_Per_Workgroup=100000
  expect_fired "$TMP/smem" "occupancy-shared-memory"
  # 32-thread blocks: 32 blocks per SM hold half the warps; as many blocks
  # (two full waves) as before.
  nv block Workgroup_Size=32 Grid_Size=$((132 * 32 * 2 * 32))
  expect_fired "$TMP/block" "occupancy-block-size"
  nv ls smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio=6
  expect_fired "$TMP/ls" "stall-long-scoreboard"
  nv bar smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio=5.5
  expect_fired "$TMP/bar" "stall-barrier"
  nv grid Grid_Size=$((100 * 256))
  expect_fired "$TMP/grid" "small-grid"
  nv tail Grid_Size=$((132 * 8 * 5 / 4 * 256))
  expect_fired "$TMP/tail" "tail-effect"
  NV_FIXTURE_DISPATCHES=12 nv short gpu__time_duration.sum=4000
  expect_fired "$TMP/short" "short-kernel"
  nv var
  python3 "$SRCDIR/edit_csv.py" "$TMP/var/pmc_perf.csv" "2:End_Timestamp=Start_Timestamp+300000" || fail "edit"
  expect_fired "$TMP/var" "instances-differ"
  # The verdict in text and in JSON.
  "$LUMEN" analyze -w "$TMP/regs" --summary --width 200 >"$TMP/t.txt" 2>&1 || fail "analyze text: $(cat "$TMP/t.txt")"
  grep -q "!  occupancy limited by registers: 128 registers per thread allow 2 blocks per SM, 25 % theoretical occupancy \[occupancy-registers\]" "$TMP/t.txt" ||
    fail "regs verdict: $(cat "$TMP/t.txt")"
  "$LUMEN" analyze -w "$TMP/coal" --summary --format json >"$TMP/t.json" || fail "analyze json"
  python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["summary"]["kernels"][0]["findings"][0]
assert f["rule"] == "uncoalesced-global", f
assert "32.0 sectors per load request" in f["verdict"], f["verdict"]
assert abs(f["gain"] - 0.875) < 1e-9, f
assert "Best Practices" in f["source"], f' "$TMP/t.json" || fail "uncoalesced JSON finding"
  # sets-disagree: a profile's rows combine one launch per set, and every
  # set holds the GPU duration. The healthy kernel as a lumen workload
  # (through a store), given two sets whose launches agree within 2 %, and
  # two whose second launch took 30 % longer.
  "$LUMEN" db import -w "$TMP/base_sm_90" -n nvsets --db "$TMP/store.db" >/dev/null || fail "db import"
  "$LUMEN" db export nvsets -w "$TMP/sets_agree" --db "$TMP/store.db" >/dev/null || fail "db export"
  cp -r "$TMP/sets_agree" "$TMP/sets_differ"
  python3 "$SRCDIR/nv_sets.py" "$TMP/sets_agree" 1.02 || fail "nv_sets agree"
  python3 "$SRCDIR/nv_sets.py" "$TMP/sets_differ" 1.3 || fail "nv_sets differ"
  expect_fired "$TMP/sets_agree" ""
  expect_fired "$TMP/sets_differ" "sets-disagree"
  "$LUMEN" analyze -w "$TMP/sets_differ" --summary --width 200 >"$TMP/t.txt" 2>&1 || fail "analyze sets: $(cat "$TMP/t.txt")"
  grep -q "what every counter set measured spreads by up to 26 % (over 3 rows) \[sets-disagree\]" "$TMP/t.txt" ||
    fail "sets-disagree verdict: $(cat "$TMP/t.txt")"
  # Board power per dispatch (NVML samples composed into Measured_Power_W)
  # in the speed-of-light table: mean, least and most over the dispatches;
  # a workload without power samples shows the row empty, never 0.
  NV_FIXTURE_POWER=250,300,410 nv power
  "$LUMEN" analyze -w "$TMP/power" -b 2 --width 200 >"$TMP/p.txt" 2>&1 || fail "analyze power: $(cat "$TMP/p.txt")"
  grep -Eq "Board Power +│ +320\.00 │ +250\.00 │ +410\.00 │ W " "$TMP/p.txt" || fail "board power: $(grep Power "$TMP/p.txt")"
  "$LUMEN" analyze -w "$TMP/base_sm_90" -b 2 --width 200 >"$TMP/p.txt" 2>&1 || fail "analyze base: $(cat "$TMP/p.txt")"
  grep -Eq "Board Power +│ +│ +│ +│ W " "$TMP/p.txt" || fail "board power without samples: $(grep Power "$TMP/p.txt")"
  # The NVIDIA rules are listed for the NVIDIA architectures only.
  "$LUMEN" list rules --arch sm_100 >"$TMP/r.txt" || fail "list rules"
  grep -q "^== sm_100 (B200): 16 rules" "$TMP/r.txt" || fail "sm_100 rules: $(head -1 "$TMP/r.txt")"
  "$LUMEN" list rules --arch sm_86 >"$TMP/r.txt" || fail "list rules sm_86"
  grep -q "^== sm_86 (A10, A40, GeForce RTX 30): 16 rules" "$TMP/r.txt" || fail "sm_86 rules: $(head -1 "$TMP/r.txt")"
  "$LUMEN" list rules --arch gfx90a | grep -q "tail-effect" && fail "an NVIDIA rule listed for gfx90a"
  ;;
nvidia_archs)
  # The older and consumer architectures (V100, T4, A40 and L4 in the
  # fixture): speed of light and roofline filled, the compute ceilings equal
  # to the per-SM rates of quantities.yaml times SMs and clock (computed by
  # hand below), and the register rule against each SM's warp limit.
  # arch, FP64, FP32 and FP16 tensor peaks (GFLOP/s), warps per SM
  while read -r arch fp64 fp32 tensor warps; do
    NV_ARCH=$arch nv roof_$arch
    "$LUMEN" analyze -w "$TMP/roof_$arch" -b 2 -b 4 -b 6 --format json >"$TMP/a.json" 2>"$TMP/a.err" ||
      fail "analyze $arch: $(cat "$TMP/a.err")"
    python3 - "$TMP/a.json" "$arch" "$fp64" "$fp32" "$tensor" "$warps" <<'PY' || fail "$arch panels"
import json, sys
path, arch = sys.argv[1], sys.argv[2]
fp64, fp32, tensor, warps = map(float, sys.argv[3:])
d = json.load(open(path))
assert d["workloads"][0]["arch"] == arch, d["workloads"]
rows = {r["id"]: r["cells"] for p in d["panels"] for t in p["tables"] for r in t["rows"]}
assert rows["2.1.0"][0] == "Compute (SM) Throughput" and rows["2.1.0"][1] == 50, rows["2.1.0"]
assert rows["2.1.4"][0] == "DRAM Throughput" and rows["2.1.4"][1] == 50, rows["2.1.4"]
got = {c[0]: c[1] for k, c in rows.items() if k.startswith("4.3.")}
for name, value in {"FP64 Peak": fp64, "FP32 Peak": fp32, "FP16 Tensor Peak": tensor}.items():
    assert abs(got[name] - value) < 1e-6 * value, (arch, name, got[name], value)
assert "FP64 Tensor Peak" not in got, got
assert rows["4.1.1"][0] == "FP32 FLOPs" and abs(rows["4.1.1"][5] - fp32) < 1e-6 * fp32, rows["4.1.1"]
assert rows["6.1.0"][1] == 100 and rows["6.1.1"][5] == warps, (rows["6.1.0"], rows["6.1.1"])
PY
  done <<'ARCHS'
sm_70 7833.6 15667.2 125337.6 64
sm_75 254.4 8140.8 65126.4 32
sm_86 584.64 37416.96 149667.84 48
sm_89 473.28 30289.92 121159.68 48
ARCHS
  # Registers per thread that leave one or two 8-warp blocks per SM: 128
  # registers are 4096 per warp, 16 warps, 2 blocks; 168 are 5376 per warp,
  # 12 warps, 1 block. Occupancy against 64, 32, 48 and 48 warps.
  while read -r arch regs blocks pct; do
    NV_ARCH=$arch nv regs_$arch Arch_VGPR="$regs"
    expect_fired "$TMP/regs_$arch" "occupancy-registers"
    "$LUMEN" analyze -w "$TMP/regs_$arch" --summary --width 200 >"$TMP/t.txt" 2>&1 || fail "analyze $arch"
    grep -q "occupancy limited by registers: $regs registers per thread allow $blocks blocks per SM, $pct % theoretical occupancy" "$TMP/t.txt" ||
      fail "$arch regs verdict: $(grep -i occupancy "$TMP/t.txt")"
  done <<'ARCHS'
sm_70 128 2 25
sm_75 168 1 25
sm_86 128 2 33
sm_89 128 2 33
ARCHS
  ;;
fire)
  expect_fired "$WL/vcopy/MI200" "l2-hit-low"
  clean base
  expect_fired "$TMP/base" ""
  clean small; $EDIT "$TMP/small/pmc_perf.csv" "Grid_Size=256*50"
  expect_fired "$TMP/small" "small-grid"
  clean vgpr; $EDIT "$TMP/vgpr/pmc_perf.csv" "Arch_VGPR=256"
  $EDIT "$TMP/vgpr/SQ_LEVEL_WAVES.csv" "SQ_ACCUM_PREV_HIRES=SQ_ACCUM_PREV_HIRES*0.5"
  expect_fired "$TMP/vgpr" "vgpr-limited"
  clean occ; $EDIT "$TMP/occ/SQ_LEVEL_WAVES.csv" "SQ_ACCUM_PREV_HIRES=SQ_ACCUM_PREV_HIRES*0.3"
  expect_fired "$TMP/occ" "low-occupancy"
  clean lds; $EDIT "$TMP/lds/pmc_perf.csv" "SQ_LDS_IDX_ACTIVE=100000" "SQ_LDS_BANK_CONFLICT=60000"
  expect_fired "$TMP/lds" "lds-bank-conflicts"
  clean var; $EDIT "$TMP/var/pmc_perf.csv" "2:End_Timestamp=Start_Timestamp+(End_Timestamp-Start_Timestamp)*3"
  expect_fired "$TMP/var" "instances-differ"
  clean hbm; $EDIT "$TMP/hbm/pmc_perf.csv" "TCC_EA_RDREQ_sum=TCC_EA_RDREQ_sum*2.5" "TCC_EA_RDREQ_32B_sum=TCC_EA_RDREQ_32B_sum*2.5"
  expect_fired "$TMP/hbm" "hbm-bound"
  clean valu; $EDIT "$TMP/valu/pmc_perf.csv" "SQ_ACTIVE_INST_VALU=SQ_ACTIVE_INST_VALU*30" "SQ_THREAD_CYCLES_VALU=SQ_THREAD_CYCLES_VALU*30"
  expect_fired "$TMP/valu" "valu-bound"
  clean div; $EDIT "$TMP/div/pmc_perf.csv" "SQ_ACTIVE_INST_VALU=SQ_ACTIVE_INST_VALU*4"
  expect_fired "$TMP/div" "divergence"
  # Short kernels: 1,000 calls of 5 us, the traffic scaled to keep the rates.
  clean short _synthetic/vcopy_MI200_x1000
  $EDIT "$TMP/short/pmc_perf.csv" "TCC_EA_RDREQ_sum=TCC_EA_RDREQ_sum/4" "TCC_EA_RDREQ_32B_sum=TCC_EA_RDREQ_32B_sum/4" \
    "TCC_EA_WRREQ_sum=TCC_EA_WRREQ_sum/4" "TCC_EA_WRREQ_64B_sum=TCC_EA_WRREQ_64B_sum/4" "End_Timestamp=Start_Timestamp+5000"
  expect_fired "$TMP/short" "short-kernel"
  ;;
verdicts)
  # A verdict carries the numbers of the kernel; text and JSON agree.
  clean small; $EDIT "$TMP/small/pmc_perf.csv" "Grid_Size=256*50"
  run analyze -w "$TMP/small" --summary --width 200
  expect_status 0
  expect_out "too small to fill the GPU: 50 workgroups for 104 compute units (up to 52 % of its time) [small-grid]"
  run analyze -w "$TMP/small" --summary --format json
  expect_status 0
  python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["summary"]["kernels"][0]
f = k["findings"][0]
assert f["rule"] == "small-grid" and f["severity"] == "warning", f
assert f["verdict"] == "too small to fill the GPU: 50 workgroups for 104 compute units", f["verdict"]
assert abs(f["gain"] - (1 - 50 / 104)) < 1e-12, f["gain"]
assert f["source"] and f["explain"] and f["uses"] == ["Active CUs"], f
assert k["calls"] == 3 and abs(k["share"] - 1) < 1e-12, k' "$TMP/out" || fail "JSON summary"
  ;;
width)
  # At 80 columns no line of the summary (and of its names) is longer, the
  # two rocprim reductions stay distinguishable, and the default text report
  # starts with the summary.
  for w in 80 60 40; do
    run analyze -w "$WL/_mix/mix_MI200" --summary --width $w
    expect_status 0
    longest=$(wc -L <"$TMP/out")
    [ "$longest" -le $w ] || fail "a line of $longest characters at --width $w: $(awk -v w=$w 'length($0) > w' "$TMP/out" | head -2)"
    plus=$(grep -c 'plus' "$TMP/out")
    maxi=$(grep -c 'maximum\|ximum' "$TMP/out")
    [ "$plus" -ge 1 ] && [ "$maxi" -ge 1 ] || fail "--width $w: the two reductions look alike: $(grep rocprim "$TMP/out")"
  done
  COLUMNS=72 "$LUMEN" analyze -w "$WL/_mix/mix_MI200" >"$TMP/out" 2>&1 || fail "analyze"
  head -1 "$TMP/out" | grep -q "^Summary: 5 kernels" || fail "the report does not open with the summary: $(head -2 "$TMP/out")"
  expect_out "0.1 Top Kernels"
  # The summary part (up to the first panel rule) is laid out for $COLUMNS.
  sed '/^────/,$d' "$TMP/out" >"$TMP/first"
  [ "$(wc -L <"$TMP/first")" -le 72 ] || fail "the first screen is wider than COLUMNS=72"
  # The whole report at 80 columns (the default off a terminal): tables too
  # wide become blocks per row; descriptions and formulas wrap.
  for args in "-w $WL/_mix/mix_MI200" "-w $WL/vcopy/MI300X_A1" "-w $WL/vcopy/MI100 -vv" \
    "-w $WL/_mix/mix_MI200 -w $WL/_mix/mixB_MI200" "-w $WL/vcopy/MI200 --list-stats"; do
    # shellcheck disable=SC2086
    "$LUMEN" analyze $args >"$TMP/out" 2>/dev/null || fail "analyze $args"
    longest=$(wc -L <"$TMP/out")
    [ "$longest" -le 80 ] || fail "analyze $args: a line of $longest characters"
  done
  "$LUMEN" analyze -w "$WL/vcopy/MI200" --full >"$TMP/out" 2>&1
  expect_out "2.1.1  VALU IOPs"
  expect_out "Avg 427.03 Giop · Peak 22630.40 Giop · Pct of Peak 1.89"
  # --width 0: every table a box, as wide as it needs.
  run analyze -w "$WL/vcopy/MI200" --full --width 0
  [ "$(wc -L <"$TMP/out")" -gt 120 ] || fail "--width 0 did not keep the wide tables"
  run analyze -w "$WL/_mix/mix_MI200" --full
  expect_status 0
  ! grep -q "^Summary:" "$TMP/out" || fail "--full shows the summary"
  run analyze -w "$WL/_mix/mix_MI200" -b 2.1
  ! grep -q "^Summary:" "$TMP/out" || fail "-b shows the summary"
  ;;
user_rules)
  # --rules-dir adds rules; a rule naming a metric the GPU lacks, or with a
  # bad field, is an error naming the file and line.
  mkdir -p "$TMP/rules"
  cat >"$TMP/rules/mine.yaml" <<'YAML'
family: mine
archs: [gfx90a]
rules:
- id: any-vmem
  severity: critical
  when: value('VMEM Utilization') > 0 and $calls == 3
  verdict: 'VMEM busy {value("VMEM Utilization"):.3f} %'
  source: a test
YAML
  run analyze -w "$WL/vcopy/MI200" --summary --rules-dir "$TMP/rules"
  expect_status 0
  expect_out "!! VMEM busy"
  expect_out "[any-vmem]"
  run list rules --arch gfx90a --rules-dir "$TMP/rules"
  expect_status 0
  expect_out "any-vmem"
  expect_out "== gfx90a (MI210, MI250, MI250X): 12 rules"
  sed -i "s/VMEM Utilization') > 0/VMEM Utilisation') > 0/" "$TMP/rules/mine.yaml"
  run analyze -w "$WL/vcopy/MI200" --summary --rules-dir "$TMP/rules"
  expect_status 1; one_line_err
  expect_err "mine.yaml:6:"
  expect_err "value('VMEM Utilisation'): gfx90a has no such metric"
  sed -i "s/VMEM Utilisation/VMEM Utilization/; s/severity: critical/severity: fatal/" "$TMP/rules/mine.yaml"
  run list rules --arch gfx90a --rules-dir "$TMP/rules"
  expect_status 1; one_line_err
  expect_err "'fatal': expected info, warning or critical"
  # Another architecture's files are skipped.
  run analyze -w "$WL/vcopy/MI100" --summary --rules-dir "$TMP/rules"
  expect_status 0
  ;;
serve)
  # The server's summary is the CLI's, for the same selection.
  . "$SRCDIR/../../scripts/serve-lib.sh"
  start_lumen_serve "$LUMEN" "$TMP" -w "$WL/_mix/mix_MI200" 2>"$TMP/start.err" || fail "$(cat "$TMP/start.err")"
  trap 'kill $SERVER 2>/dev/null; chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
  for q in "" "&norm=per_kernel" "&k=rocprim"; do
    code=$(curl -s -o "$TMP/api.json" -w '%{http_code}' "${URL}api/summary?w=f0$q")
    [ "$code" = 200 ] || fail "api/summary$q: HTTP $code $(head -c 300 "$TMP/api.json")"
    args=""
    [ "$q" = "&norm=per_kernel" ] && args="--norm per_kernel"
    [ "$q" = "&k=rocprim" ] && args="-k rocprim"
    # shellcheck disable=SC2086
    "$LUMEN" analyze -w "$WL/_mix/mix_MI200" --summary --format json $args >"$TMP/cli.json" || fail "cli"
    python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["summary"]
b = json.load(open(sys.argv[2]))["summary"]
assert a == b, "the API and the CLI summaries differ"
assert a["kernels"], "no kernels"' "$TMP/api.json" "$TMP/cli.json" || fail "api/summary$q differs from the CLI"
  done
  # compat= picks the reference version's definitions, as for the panels
  # (3.3's HBM peak derived from this 3.0 folder's hbm_bw); the folder's
  # own, 3.0, is the default.
  code=$(curl -s -o "$TMP/api33.json" -w '%{http_code}' "${URL}api/summary?w=f0&compat=3.3")
  [ "$code" = 200 ] || fail "api/summary&compat=3.3: HTTP $code $(head -c 300 "$TMP/api33.json")"
  code=$(curl -s -o "$TMP/api30.json" -w '%{http_code}' "${URL}api/summary?w=f0&compat=3.0")
  [ "$code" = 200 ] || fail "api/summary&compat=3.0: HTTP $code"
  "$LUMEN" analyze -w "$WL/_mix/mix_MI200" --summary --format json >"$TMP/cli.json" || fail "cli"
  "$LUMEN" analyze -w "$WL/_mix/mix_MI200" --compat 3.3 --summary --format json >"$TMP/cli33.json" || fail "cli 3.3"
  python3 -c '
import json, sys
s33, s30, cli, cli33 = (json.load(open(p))["summary"] for p in sys.argv[1:5])
assert s30 == cli, "compat=3.0 differs from the default"
assert s33 == cli33, "compat=3.3 differs from --compat 3.3"' \
    "$TMP/api33.json" "$TMP/api30.json" "$TMP/cli.json" "$TMP/cli33.json" || fail "api/summary does not follow compat="
  ;;
terminal)
  # On a terminal: colours (not with NO_COLOR, not into a pipe), the pager
  # for long output, the terminal's width.
  command -v script >/dev/null || { echo "skipped: no script(1) to make a terminal"; exit 77; }
  on_tty() { script -qec "stty rows $1 cols $2; $3" /dev/null; }
  on_tty 500 100 "'$LUMEN' analyze -w '$WL/_mix/mix_MI200' --no-pager" >"$TMP/tty.out" 2>&1
  grep -q $'\033\[' "$TMP/tty.out" || fail "no colours on a terminal"
  grep -q $'\033\[33m! ' "$TMP/tty.out" || fail "warnings are not coloured: $(grep -m1 'l2-hit-low' "$TMP/tty.out")"
  sed 's/\x1b\[[0-9;]*m//g; s/\r$//' "$TMP/tty.out" >"$TMP/plain.out"
  [ "$(wc -L <"$TMP/plain.out")" -le 100 ] || fail "wider than the terminal's 100 columns"
  grep -q "^Summary" "$TMP/plain.out" || fail "no summary"
  on_tty 500 100 "NO_COLOR=1 '$LUMEN' analyze -w '$WL/_mix/mix_MI200' --no-pager" >"$TMP/tty.out" 2>&1
  ! grep -q $'\033\[' "$TMP/tty.out" || fail "colours with NO_COLOR set"
  "$LUMEN" analyze -w "$WL/_mix/mix_MI200" >"$TMP/pipe.out" 2>&1
  ! grep -q $'\033\[' "$TMP/pipe.out" || fail "colours into a pipe"
  "$LUMEN" analyze -w "$WL/_mix/mix_MI200" --color always >"$TMP/pipe.out" 2>&1
  grep -q $'\033\[' "$TMP/pipe.out" || fail "--color always without colours"
  run analyze -w "$WL/_mix/mix_MI200" --color sometimes
  expect_status 2; expect_err "--color sometimes"
  # Long output on a 20-row terminal goes to the pager; --no-pager and
  # short output do not.
  on_tty 20 80 "LUMEN_PAGER='cat > $TMP/paged' '$LUMEN' analyze -w '$WL/_mix/mix_MI200'" >/dev/null 2>&1
  [ -s "$TMP/paged" ] || fail "the pager got nothing"
  grep -q "0.1 Top Kernels" "$TMP/paged" || fail "the pager did not get the report"
  rm -f "$TMP/paged"
  on_tty 20 80 "LUMEN_PAGER='cat > $TMP/paged' '$LUMEN' analyze -w '$WL/_mix/mix_MI200' --no-pager" >/dev/null 2>&1
  [ ! -e "$TMP/paged" ] || fail "--no-pager paged"
  on_tty 500 80 "LUMEN_PAGER='cat > $TMP/paged' '$LUMEN' analyze -w '$WL/vcopy/MI200' -b 2.1.1" >/dev/null 2>&1
  [ ! -e "$TMP/paged" ] || fail "output shorter than the terminal was paged"
  ;;
roofline)
  # A kernel with floating-point work is placed on the roofline, with the
  # ceilings of roofline.csv, or the theoretical peaks where the folder has
  # none (MI300), and drawn as a text plot.
  clean flop; $EDIT "$TMP/flop/pmc_perf.csv" "SQ_INSTS_VALU_FMA_F32=SQ_WAVES*20"
  run analyze -w "$TMP/flop" --summary
  expect_status 0
  expect_out "roofline (roofline.csv): mostly VALU FP32 work"
  expect_out "roofline at HBM (roofline.csv): GFLOP/s over FLOP/byte"
  grep -q '^ *[0-9.e+]* *|.*1' "$TMP/out" || fail "the kernel is not on the plot"
  [ "$(wc -L <"$TMP/out")" -le 80 ] || fail "the plot is wider than 80 columns"
  run analyze -w "$TMP/flop" --summary --format json
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["summary"]["kernels"][0]["roofline"]
assert r["source"] == "roofline.csv" and r["bound"] in ("memory", "compute"), r
assert r["type"] == "VALU FP32", r
assert r["limit"] in ("HBM", "L2", "L1", "LDS", "VALU FP32"), r
# FP32 vector work: its ceiling is the FP32 one; the attainable is at most
# the lower of it and the HBM roof.
att = min(r["intensity"] * r["ceiling_hbm_gbs"], r["ceiling_gflops"])
assert r["attainable_gflops"] <= att * (1 + 1e-9), r
assert abs(r["gflops"] / r["attainable_gflops"] * 100 - r["pct_of_attainable"]) < 1e-9, r' "$TMP/out" || fail "roofline JSON"
  cp -r "$WL/vcopy/MI300X_A1" "$TMP/flop3"; chmod -R u+w "$TMP/flop3"
  $EDIT "$TMP/flop3/pmc_perf.csv" "SQ_INSTS_VALU_FMA_F32=SQ_WAVES*20" "End_Timestamp=Start_Timestamp+20000"
  run analyze -w "$TMP/flop3" --summary
  expect_status 0
  expect_out "roofline (theoretical peaks):"
  ;;
roofline_types)
  # Each kernel against the ceiling of the type and unit doing its work: a
  # BF16 matrix kernel on MI300X against roofline.csv's BF16 matrix peak
  # (memory-bound there), not the FP32 vector one.
  run analyze -w "$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X" --summary --format json
  expect_status 0
  python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["summary"]["kernels"][0]
r = k["roofline"]
assert "batched_matrix_multiplication" in k["name"], k["name"]
assert r["type"] == "MFMA BF16", r
assert abs(r["ceiling_gflops"] - 516455.44) < 1e-6, r      # MFMABF16Flops of roofline.csv
assert r["bound"] == "memory" and r["limit"] in ("HBM", "L2", "L1", "LDS"), r
assert 0 < r["pct_of_attainable"] <= 100, r' "$TMP/out" || fail "BF16 kernel not against the BF16 ceiling"
  run analyze -w "$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X" --summary
  expect_out "mostly MFMA BF16 work"
  expect_out "memory-bound at"
  # Vector F64 work against the FP64 ceiling.
  clean f64; $EDIT "$TMP/f64/pmc_perf.csv" "SQ_INSTS_VALU_FMA_F64=SQ_WAVES*4000"
  run analyze -w "$TMP/f64" --summary --format json
  expect_status 0
  [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["kernels"][0]["roofline"]["type"])' "$TMP/out")" = "VALU FP64" ] ||
    fail "F64 kernel: $(head -c 400 "$TMP/out")"
  # Counters that were not collected are said to be, not "no floating-point work".
  clean nocount
  python3 - "$TMP/nocount/pmc_perf.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
keep = [i for i, c in enumerate(rows[0]) if not c.startswith("SQ_INSTS_VALU_")]
csv.writer(open(sys.argv[1], "w", newline="")).writerows([[r[i] for i in keep] for r in rows])
PY
  run analyze -w "$TMP/nocount" --summary
  expect_status 0
  expect_out "not collected"
  grep -q "no floating-point work" "$TMP/out" && fail "missing counters called no floating-point work"
  ;;
plausibility)
  # A sysinfo.csv that cannot be right for the GPU (an MI325X with 304 CUs
  # recorded as one XCD, 16 L2 channels, 768 GB/s): warned once per field
  # with the value the facts give, and nothing above 100 % of a peak is
  # ranked or given a bound in the summary.
  F=$SHARED/formats/rocprofiler-compute/gemm_fp8_3.1.0_MI325X
  run analyze -w "$F" --summary
  expect_status 0
  expect_err "field 'num_xcd' is 1 (the facts give 8)"
  expect_err "field 'total_l2_chan' is 16 (the facts give 128)"
  expect_err "field 'hbm_bw' is 768.0 (the facts give 6144)"
  [ "$(grep -c "field 'num_xcd'" "$TMP/err")" -eq 1 ] || fail "num_xcd warned more than once"
  expect_out "IMPLAUSIBLE: sysinfo.csv says num_xcd 1"
  grep -E "top limiters:.*[0-9]{3,} %" "$TMP/out" && fail "a limiter above 100 % is ranked"
  run analyze -w "$F" --summary --format json
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
bad = {b["field"]: b["expected"] for b in s["implausible_sysinfo"]}
assert bad == {"num_xcd": 8, "total_l2_chan": 128, "hbm_bw": 6144}, bad
for k in s["kernels"]:
    assert all(h["pct"] <= 100.5 for h in k["highlights"]), k["highlights"]
    r = k["roofline"]
    if r.get("pct_of_attainable") and r["pct_of_attainable"] > 100.5:
        assert r.get("above_attainable") and "bound" not in r, r
k = s["kernels"][0]
assert any(h["metric"] == "L2-Fabric Read BW" and h["pct"] > 700 for h in k["above_peak"]), k["above_peak"]
assert any(f["rule"] == "hbm-bound" and f["above_peak_metric"] == "L2-Fabric Read BW" for f in k["findings"]), k["findings"]' \
    "$TMP/out" || fail "implausible figures in the summary JSON"
  # A 0 MHz engine clock (MI350 folders): said, and no "inf %".
  run analyze -w "$SHARED/workloads-3.3/vcopy/MI350" --summary
  expect_status 0
  expect_err "field 'max_sclk' is 0"
  grep -q "inf %" "$TMP/out" && fail "inf % in the summary"
  # A plausible folder: no warning.
  run analyze -w "$WL/vcopy/MI300X_A1" --summary
  grep -q "sysinfo.csv field" "$TMP/err" && fail "vcopy/MI300X_A1 warned: $(cat "$TMP/err")"
  # The limiters bound throughput: never Active CUs or IPC.
  run analyze -w "$WL/_mix/mix_MI200" --summary --format json
  python3 -c '
import json, sys
for k in json.load(open(sys.argv[1]))["summary"]["kernels"]:
    for h in k["highlights"]:
        assert h["limits"] in ("memory", "issue", "occupancy"), h
        assert h["metric"] not in ("Active CUs", "IPC"), h
    for f in k["findings"]:
        if f["rule"] == "l2-hit-low":
            assert [e["metric"] for e in f["evidence"]] == ["L2 Cache Hit Rate", "L2 Cache BW", "L2-Fabric Read BW"], f
            assert f["evidence"][0]["value"] < 50, f' "$TMP/out" || fail "limiters and evidence"
  # Each finding says what triggered it and what to do.
  run analyze -w "$WL/_mix/mix_MI200" --summary
  expect_out "from: L2 Cache Hit Rate"
  expect_out "→ Fewer than half of the requests that reach L2"
  ;;
zero_durations)
  # MI300 test folders have End == Start: the summary says so and shows no
  # infinite percentages.
  run analyze -w "$WL/vcopy/MI300X_A1" --summary
  expect_status 0
  expect_out "no durations"
  ! grep -q "inf %" "$TMP/out" || fail "infinite percentages: $(grep 'inf %' "$TMP/out")"
  ;;
*)
  fail "unknown case $NAME"
  ;;
esac
exit 0
