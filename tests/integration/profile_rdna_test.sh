#!/usr/bin/env bash
# `lumen profile` end to end on the simulated rocprofiler-sdk's RDNA agent
# (test infrastructure that replays a recording; nothing here is a real
# measurement). The recording is a rocprofv3 counter collection in the
# long form (rdna_recording.py): the simulated SDK reads it as lumen reads
# such a folder and describes the agent from its system information.
#   gfx1100, gfx1201: the agent as the recording describes it, the SDK's
#     counters and per-block limits, a profile of three kernels in several
#     passes within the limits, its system information from the agent
#     (the memory bandwidth, which the agent does not give, the typical
#     product's, said once), and the analysis: non-empty RDNA panels,
#     bandwidth peaks and limiters, the summary, and numbers equal to
#     those computed here from the recording's counters.
#   refused: what the RDNA agent does not have (a CDNA-only TCC counter or
#     panel) is refused with a clear error; a tighter SDK limit than the
#     plan's is met by splitting the sets.
# Usage: profile_rdna_test.sh LUMEN SIMAPP DB_QUERY SIMSDK ROCP_CHECK CASE
set -u
LUMEN=$1
APP=$2
Q=$3
export LUMEN_ROCPROFILER_SDK=$4
ROCP_CHECK=$5
NAME=$6
TMP=$(mktemp -d /tmp/lumen-prdna-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
# rdna_recording.py imports rdna_fixture.py: no bytecode in the sources.
export PYTHONDONTWRITEBYTECODE=1
q() { "$Q" "$1/lumen.db" "$2" || fail "query failed: $2"; }
same() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }

# record ARCH: the recording in $TMP/rec (LUMEN_SIM_RECORDING), the
# launches that replay it in LAUNCHES, its collection file in CC.
record() {
  python3 "$SRCDIR/rdna_recording.py" "$1" "$TMP/rec" >"$TMP/launches" || fail "rdna_recording.py $1"
  mapfile -t LAUNCHES <"$TMP/launches"
  export LUMEN_SIM_RECORDING=$TMP/rec
  CC=$(echo "$TMP"/rec/host/*/*_counter_collection.csv)
  AGENT_INFO=$(echo "$TMP"/rec/host/*/*_agent_info.csv)
}

# check_agent ARCH: the simulated SDK's agent against agent_info.csv.
check_agent() {
  "$ROCP_CHECK" --agent >"$TMP/agent" || fail "rocp_check --agent: $(cat "$TMP/agent")"
  python3 - "$AGENT_INFO" "$TMP/agent" "$1" <<'PY' || fail "the simulated agent differs from the recording's"
import csv, re, sys
gpu = next(r for r in csv.DictReader(open(sys.argv[1])) if r["Agent_Type"] == "GPU")
text = open(sys.argv[2]).read()
got = dict(re.findall(r"(\w+)=(\S+)", text))
sysinfo = dict(l.split(" ", 1)[1].split("=", 1) for l in text.splitlines() if l.startswith("sysinfo "))
want = {"gfx_target_version": gpu["Gfx_Target_Version"], "cu": gpu["Cu_Count"], "xcc": gpu["Num_Xcc"],
        "wave_front_size": gpu["Wave_Front_Size"], "simd_per_cu": gpu["Simd_Per_Cu"],
        "simd_count": gpu["Simd_Count"], "array_count": gpu["Array_Count"],
        "simd_arrays_per_engine": gpu["Simd_Arrays_Per_Engine"], "cu_per_simd_array": gpu["Cu_Per_Simd_Array"],
        "num_shader_banks": gpu["Num_Shader_Banks"], "max_waves_per_simd": gpu["Max_Waves_Per_Simd"],
        "lds_size_in_kb": gpu["Lds_Size_In_Kb"]}
bad = [f"{k}: {got.get(k)} != {v}" for k, v in want.items() if got.get(k) != v]
if f"agent 0 {sys.argv[3]} " not in text: bad.append("architecture")
# wave32 and two SIMDs per CU: what RDNA runs by default.
if got.get("wave_front_size") != "32" or got.get("simd_per_cu") != "2": bad.append("not wave32 / 2 SIMDs")
fields = {"gpu_arch": gpu["Name"], "gpu_model": gpu["Product_Name"], "cu_per_gpu": gpu["Cu_Count"],
          "se_per_gpu": str(int(gpu["Array_Count"]) // int(gpu["Simd_Arrays_Per_Engine"])),
          "max_sclk": gpu["Max_Engine_Clk_Fcompute"], "max_waves_per_cu": gpu["Max_Waves_Per_Cu"],
          "workgroup_max_size": gpu["Workgroup_Max_Size"]}
bad += [f"sysinfo {k}: {sysinfo.get(k)} != {v}" for k, v in fields.items() if sysinfo.get(k) != v]
if bad: sys.exit("; ".join(bad))
PY
}

# check_limits ARCH: the SDK's counters and its per-block limits (SQ 8,
# GL2C 4, TA 2; a config over one is refused).
check_limits() {
  local cus
  cus=$(python3 -c "import csv,sys; print(next(r for r in csv.DictReader(open(sys.argv[1])) if r['Agent_Type']=='GPU')['Cu_Count'])" "$AGENT_INFO")
  "$ROCP_CHECK" GL2C_HIT TA_TA_BUSY SQ_WAVES SQC_LDS_BANK_CONFLICT GRBM_GUI_ACTIVE >"$TMP/chk" || fail "rocp_check: $(cat "$TMP/chk")"
  for line in "counter GL2C_HIT block GL2C dimensions XCC x1 INSTANCE x32" \
    "counter TA_TA_BUSY block TA dimensions XCC x1 INSTANCE x$cus" \
    "counter SQ_WAVES block SQ dimensions XCC x1 INSTANCE x1" \
    "counter SQC_LDS_BANK_CONFLICT block SQ dimensions XCC x1 INSTANCE x1" "config of 5: accepted"; do
    grep -qxF "$line" "$TMP/chk" || fail "rocp_check lacks '$line': $(cat "$TMP/chk")"
  done
  local sq="SQ_WAVES SQ_BUSY_CYCLES SQ_WAVE_CYCLES SQ_INSTS_VALU SQ_INSTS_SALU SQ_INSTS_SMEM SQ_INSTS_LDS SQC_LDS_IDX_ACTIVE"
  local gl2="GL2C_HIT GL2C_MISS GL2C_EA_RDREQ_32B GL2C_EA_RDREQ_64B"
  # shellcheck disable=SC2086
  {
    "$ROCP_CHECK" $sq | grep -qx 'config of 8: accepted' || fail "8 SQ counters refused"
    "$ROCP_CHECK" $sq SQ_INSTS_FLAT | grep -qx 'config of 9: exceeds the hardware limit' || fail "9 SQ counters accepted"
    "$ROCP_CHECK" $gl2 | grep -qx 'config of 4: accepted' || fail "4 GL2C counters refused"
    "$ROCP_CHECK" $gl2 GL2C_EA_RDREQ_128B | grep -qx 'config of 5: exceeds the hardware limit' || fail "5 GL2C counters accepted"
    "$ROCP_CHECK" TA_TA_BUSY TA_BUFFER_LOAD_WAVEFRONTS TA_BUFFER_STORE_WAVEFRONTS | grep -qx 'config of 3: exceeds the hardware limit' ||
      fail "3 TA counters accepted"
  }
}

# profile_and_check ARCH: profile the recording's kernels, then check the
# plan, the system information and the analysis.
profile_and_check() {
  local arch=$1 sets
  sets=$("$LUMEN" profile --plan --arch "$arch" | tail -1 | sed 's/^sets: \([0-9]*\).*/\1/')
  [ "$sets" -ge 2 ] 2>/dev/null || fail "the plan for $arch has '$sets' sets, expected several"
  run profile -n rdna -w "$TMP/p" -- "$APP" -g 0 "${LAUNCHES[@]}"
  expect_status 0
  ! grep -q "not supported by agent" "$TMP/err" || fail "counters missing: $(grep -m3 'not supported' "$TMP/err")"
  ! grep -q "split: " "$TMP/err" || fail "a planned set was over the SDK's limits: $(grep -m1 'split: ' "$TMP/err")"
  expect_err "9 dispatches, $sets counter sets, $sets application runs"
  same "$(q p "SELECT COUNT(*) FROM profile_run WHERE status = 'ok'")" "$sets" "runs"
  # Each set within the per-block limits.
  q p "SELECT set_id || ' ' || block || ' ' || COUNT(*) FROM profile_set GROUP BY set_id, block" >"$TMP/blocks"
  python3 - "$TMP/blocks" <<'PY' || fail "a set over a block's limit: $(cat "$TMP/blocks")"
import sys
limits = {"SQ": 8, "GL2C": 4, "TA": 2, "GRBM": 2}
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
assert rows and all(b in limits and int(n) <= limits[b] for _, b, n in rows), rows
PY
  # The system information is the agent's, as the recording describes it.
  q p "SELECT key || '=' || value FROM sysinfo ORDER BY position" >"$TMP/sysinfo"
  python3 - "$AGENT_INFO" "$TMP/sysinfo" <<'PY' || fail "system information"
import csv, sys
gpu = next(r for r in csv.DictReader(open(sys.argv[1])) if r["Agent_Type"] == "GPU")
got = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]) if "=" in l)
want = {"gpu_arch": gpu["Name"], "gpu_model": gpu["Product_Name"], "cu_per_gpu": gpu["Cu_Count"],
        "simd_per_cu": gpu["Simd_Per_Cu"], "wave_size": gpu["Wave_Front_Size"], "max_sclk": gpu["Max_Engine_Clk_Fcompute"],
        "se_per_gpu": str(int(gpu["Array_Count"]) // int(gpu["Simd_Arrays_Per_Engine"])),
        "max_waves_per_cu": gpu["Max_Waves_Per_Cu"], "num_xcd": gpu["Num_Xcc"]}
bad = [f"{k}: {got.get(k)!r} != {v!r}" for k, v in want.items() if got.get(k) != v]
if bad: sys.exit("; ".join(bad))
PY
  # No memory clock or channel count to derive hbm_bw from: the typical
  # product's figure (docs/formats.md's table), said once, and it is the
  # peak of the bandwidth rows.
  [ "$(grep -c "^lumen warn: GPU agent $arch: system information assumed from a typical .*: hbm_bw " "$TMP/err")" -eq 1 ] ||
    fail "the assumed hbm_bw is not said once: $(grep 'assumed' "$TMP/err")"
  local bw
  bw=$(python3 - "$SRCDIR/../../docs/formats.md" "$arch" <<'PY'
import sys
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) > 6 and sys.argv[2] in cells[0].split(", "):
        print(cells[6])
        break
PY
)
  [ -n "$bw" ] || fail "no product of $arch in docs/formats.md"
  grep "^lumen warn: GPU agent $arch:" "$TMP/err" | grep -q "hbm_bw $bw " || fail "the warning does not assume hbm_bw $bw: $(cat "$TMP/err")"
  same "$(q p "SELECT value FROM sysinfo WHERE key = 'hbm_bw'")" "$bw" "hbm_bw"
  run analyze -w "$TMP/p" -b 2 --format csv -o "$TMP/sol"
  expect_status 0
  python3 - "$TMP/sol/2.1.csv" "$bw" <<'PY' || fail "bandwidth peaks: $(grep -i bandwidth "$TMP/sol/2.1.csv")"
import csv, sys
rows = {r["Metric"]: r for r in csv.DictReader(open(sys.argv[1]))}
for m in ("Memory Read Bandwidth", "Memory Write Bandwidth"):
    assert float(rows[m]["Peak"]) == float(sys.argv[2]), (m, rows[m])
    assert abs(float(rows[m]["Pct of Peak"]) - 100 * float(rows[m]["Avg"]) / float(sys.argv[2])) < 1e-9, rows[m]
PY
  run analyze -w "$TMP/p" --summary --format json
  expect_status 0
  python3 - "$TMP/out" "$bw" <<'PY' || fail "no bandwidth limiter at the product's peak: $(head -c 800 "$TMP/out")"
import json, sys
s = json.load(open(sys.argv[1]))
s = s.get("summary", s)
hl = [h for k in s["kernels"] for h in k["highlights"] if h["metric"] == "Memory Read Bandwidth"]
assert hl and all(h["peak"] == float(sys.argv[2]) and h["limits"] == "memory" for h in hl), hl
PY
  run analyze -w "$TMP/p"
  expect_status 0
  expect_out "Summary: 3 kernels"
  expect_out "top limiters:"
  expect_out "SIMULATED"
  expect_out "$arch"
  run analyze -w "$TMP/p" --format csv -o "$TMP/o"
  expect_status 0
  for t in 2.1 7.1 7.2 7.3 10.1 12.1 15.1 17.1; do
    [ "$(wc -l <"$TMP/o/$t.csv" 2>/dev/null || echo 0)" -gt 1 ] || fail "table $t empty or missing"
  done
  run analyze -w "$TMP/p" -k saxpy --format csv -o "$TMP/k"
  expect_status 0
  python3 - "$CC" "$AGENT_INFO" "$TMP/o" "$TMP/k" "$arch" <<'PY' || fail "values differ from the recording's"
import csv, sys
from collections import defaultdict
cc, info, out, only, arch = sys.argv[1:]
gpu = next(r for r in csv.DictReader(open(info)) if r["Agent_Type"] == "GPU")
cus = float(gpu["Cu_Count"])
# The recording's dispatches: counters and duration (ns) per dispatch.
d = defaultdict(dict)
for r in csv.DictReader(open(cc)):
    x = d[int(r["Dispatch_Id"])]
    x[r["Counter_Name"]] = float(r["Counter_Value"])
    x["kernel"], x["ns"] = r["Kernel_Name"], float(r["End_Timestamp"]) - float(r["Start_Timestamp"])
rows = list(d.values())
def stats(f, kernel=None):
    v = [f(x) for x in rows if kernel is None or x["kernel"].startswith(kernel)]
    v = [y for y in v if y is not None]  # no value: left out of the mean
    return sum(v) / len(v), min(v), max(v)
sized = [("GL2C_EA_RDREQ_32B", 32), ("GL2C_EA_RDREQ_64B", 64), ("GL2C_EA_RDREQ_96B", 96), ("GL2C_EA_RDREQ_128B", 128)]
hit = lambda x: 100 * x["GL2C_HIT"] / (x["GL2C_HIT"] + x["GL2C_MISS"])
checks = [
    ("2.1", "GL2 Hit Rate", hit), ("17.1", "Hit Rate", hit),
    ("2.1", "Wave Occupancy", lambda x: x["SQ_WAVE_CYCLES"] / (x["GRBM_GUI_ACTIVE"] * cus)),
    ("2.1", "VALU Instruction Rate", lambda x: x["SQ_INSTS_VALU"] / (x["GRBM_GUI_ACTIVE"] * cus)),
    ("2.1", "TA Busy", lambda x: 100 * x["TA_TA_BUSY"] / (x["GRBM_GUI_ACTIVE"] * cus)),
    ("2.1", "Memory Read Bandwidth", lambda x: sum(x.get(n, 0) * b for n, b in sized) / x["ns"]),
    ("2.1", "Wavefronts", lambda x: x["SQ_WAVES"]), ("2.1", "Duration", lambda x: x["ns"] / 1000),
    ("10.1", "VALU", lambda x: x["SQ_INSTS_VALU"] / x["SQ_WAVES"]),
    ("7.2", "Wave32 Share", lambda x: 100 * x["SQ_WAVE32_INSTS"] / (x["SQ_WAVE32_INSTS"] + x["SQ_WAVE64_INSTS"])),
    ("12.1", "Bank Conflict Rate",
     lambda x: 100 * x["SQC_LDS_BANK_CONFLICT"] / x["SQC_LDS_IDX_ACTIVE"] if x["SQC_LDS_IDX_ACTIVE"] else None),
]
def table(folder, t):
    return {r["Metric"]: r for r in csv.DictReader(open(f"{folder}/{t}.csv"))}
bad, n = [], 0
for folder, kernel in ((out, None), (only, "saxpy")):
    for t, name, f in checks:
        if t != "2.1" and kernel: continue
        r = table(folder, t).get(name)
        if r is None: bad.append(f"{t} {name}: no row"); continue
        for col, want in zip(("Avg", "Min", "Max"), stats(f, kernel)):
            got = float(r[col]) if r[col] else float("nan")
            n += 1
            if not abs(got - want) <= 1e-9 * max(1.0, abs(want)):
                bad.append(f"{t} {name} {col}{' (' + kernel + ')' if kernel else ''}: {got}, expected {want}")
# The dispatches differ: the hit rate is not the same everywhere.
lo, hi = stats(hit)[1:]
if not hi > lo: bad.append("every dispatch has the same GL2 hit rate")
if bad: sys.exit("\n".join(bad))
print(f"{arch}: {n} values equal to the recording's")
PY
}

case $NAME in
rdna_gfx1100 | rdna_gfx1201)
  ARCH=${NAME#rdna_}
  record "$ARCH"
  check_agent "$ARCH"
  check_limits "$ARCH"
  profile_and_check "$ARCH"
  ;;
rdna_refused)
  record gfx1100
  # The SDK defines no TCC counter for an RDNA agent (its L2 is GL2C).
  "$ROCP_CHECK" TCC_HIT SQ_WAVES >"$TMP/chk"
  grep -qx 'counter TCC_HIT not supported by agent 0' "$TMP/chk" || fail "TCC_HIT on gfx1100: $(cat "$TMP/chk")"
  # Asked of lumen profile by counter or by a CDNA panel (16: vL1D), it
  # is an error naming the agent's definitions, before anything runs.
  for item in TCC_HIT 16; do
    run profile -n l -w "$TMP/b" -b "$item" -- "$APP" -g 0 "${LAUNCHES[@]}"
    expect_status 2
    expect_err "lumen profile: -b $item: no panel, table, metric or hardware block of that name in the gfx1100 definitions"
    [ "$(grep -vc '^lumen warn: ' "$TMP/err")" -eq 1 ] || fail "-b $item: more than one error line: $(cat "$TMP/err")"
    ! grep -q "simapp:" "$TMP/out" "$TMP/err" || fail "-b $item ran the application"
    [ ! -e "$TMP/b" ] || fail "-b $item created $TMP/b"
  done
  # An SDK that takes fewer GL2C counters than the plan puts in a set:
  # lumen splits the set, and the GL2 panel still has its values.
  LUMEN_SIMSDK_LIMITS=GL2C=2 run profile -n s -w "$TMP/s" -b 17 -- "$APP" -g 0 "${LAUNCHES[@]}"
  expect_status 0
  expect_err "split: "
  ! grep -q "not supported by agent" "$TMP/err" || fail "counters missing: $(grep -m1 'not supported' "$TMP/err")"
  q s "SELECT set_id || ' ' || COUNT(*) FROM profile_set WHERE block = 'GL2C' GROUP BY set_id" >"$TMP/gl2"
  awk '$2 > 2 { bad = 1 } END { exit bad }' "$TMP/gl2" || fail "a set over GL2C=2: $(cat "$TMP/gl2")"
  run analyze -w "$TMP/s" -b 17 --format csv -o "$TMP/o"
  expect_status 0
  python3 - "$TMP/o/17.1.csv" <<'PY' || fail "GL2 panel after the split: $(cat "$TMP/o/17.1.csv")"
import csv, sys
rows = {r["Metric"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert all(rows[m]["Avg"] for m in ("Hit Rate", "Memory Read Bandwidth", "Memory Write Bandwidth")), rows
PY
  ;;
*)
  fail "unknown case $NAME"
  ;;
esac
echo "PASS $NAME"
