#!/usr/bin/env bash
# An AMD Radeon architecture end to end: a rocprofv3 counter collection of
# that chip (rdna_fixture.py) analyzed, its panels non-empty, its summary
# shown, and its speed-of-light, wavefront, LDS and GL2 numbers equal to
# the ones the fixture computes by hand from the counters (on the RDNA 3.5
# APUs also the GL0, GL1, scalar-cache and TD rows and the memory peak).
# What the chip cannot measure (arch.yaml's not_measurable) is said once in
# text, in the JSON and in the server's answer; the summary says the FLOPs
# cannot be measured; the --pmc lists that would complete a panel name only
# counters of the chip.
# Usage: rdna_test.sh LUMEN ARCH
set -u
LUMEN=$1
ARCH=$2
TMP=$(mktemp -d /tmp/lumen-rdna-XXXXXX)
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"

python3 "$SRCDIR/rdna_fixture.py" "$ARCH" "$TMP/w" >"$TMP/want" || fail "fixture"
run analyze -w "$TMP/w"
expect_status 0
expect_out "Summary: 1 kernel"
expect_out "top limiters:"
expect_out "$ARCH"
expect_err "system information assumed"
run analyze -w "$TMP/w" --format csv -o "$TMP/o"
expect_status 0
for t in 2.1 3.1 7.1 7.2 7.3 10.1 12.1 15.1 17.1 17.2; do
  [ -s "$TMP/o/$t.csv" ] || fail "table $t missing"
  [ "$(wc -l <"$TMP/o/$t.csv")" -gt 1 ] || fail "table $t empty"
done
python3 - "$TMP/o" "$TMP/want" <<'PY' || fail "values differ from the hand-computed ones"
import csv, sys
out, want = sys.argv[1], dict(l.strip().split("=", 1) for l in open(sys.argv[2]))
def cell(table, name, col="Avg"):
    for r in csv.DictReader(open(f"{out}/{table}.csv")):
        if r["Metric"] == name:
            return float(r[col])
    raise SystemExit(f"{table}: no row {name}")
checks = [("2.1", "VALU Instruction Rate", "valu_rate"), ("2.1", "Wave Occupancy", "occupancy"),
          ("2.1", "GL2 Hit Rate", "l2_hit"), ("2.1", "Memory Read Bandwidth", "read_bw"),
          ("2.1", "Memory Write Bandwidth", "write_bw"), ("2.1", "TA Busy", "ta_busy"),
          ("10.1", "VALU", "valu_per_wave"), ("7.2", "Wave32 Share", "wave32_share"),
          ("12.1", "Bank Conflict Rate", "bank_conflict"), ("17.1", "Hit Rate", "l2_hit")]
# The RDNA 3.5 APUs' GL0, GL1, scalar-cache and TD rows and their VGPR file.
checks += [(t, n, k) for t, n, k in [("2.1", "GL0 Hit Rate", "l0_hit"), ("2.1", "GL1 Hit Rate", "gl1_hit"),
                                     ("2.1", "Scalar Cache Hit Rate", "sqc_hit"), ("15.1", "TD Busy", "td_busy"),
                                     ("15.1", "Address Stalled by L0", "tc_stall"),
                                     ("7.1", "VGPR-Limited Waves", "vgpr_waves")] if k in want]
bad = 0
for table, name, key in checks:
    got, exp = cell(table, name), float(want[key])
    if abs(got - exp) > 1e-9 * max(1.0, abs(exp)):
        print(f"{table} {name}: {got}, expected {exp}"); bad = 1
# The peaks: two SIMDs per CU, 32 waves per CU, the product's bandwidth.
if cell("2.1", "VALU Instruction Rate", "Peak") != 2 or cell("2.1", "Wave Occupancy", "Peak") != 32:
    print("peaks"); bad = 1
# An APU's memory peak is the shared system memory's bandwidth.
if "mem_peak" in want and cell("2.1", "Memory Read Bandwidth", "Peak") != float(want["mem_peak"]):
    print("memory peak", cell("2.1", "Memory Read Bandwidth", "Peak")); bad = 1
sys.exit(bad)
PY

# What the chip cannot measure: one block, before the summary, whatever
# the output shows (the summary and the panels, --full, the summary alone).
FLOPS="FLOP counts and WMMA operations"
for args in "" "--full" "--summary" "-b 2"; do
  # shellcheck disable=SC2086
  run analyze -w "$TMP/w" $args
  expect_status 0
  [ "$(grep -c "^Not measurable with the counters of $ARCH" "$TMP/out")" -eq 1 ] ||
    fail "the not-measurable block is not there once ($args): $(head -c 600 "$TMP/out")"
  [ "$(grep -c "^  - $FLOPS: " "$TMP/out")" -eq 1 ] || fail "the FLOP statement is not there once ($args)"
  grep -q "^  - LDS latency: " "$TMP/out" || fail "the LDS latency statement is missing ($args)"
done
run analyze -w "$TMP/w"
# The summary: FLOPs cannot be measured (not "not collected"), and the VALU
# instruction rate against its peak is an issue limiter, as CDNA's VALU rows.
tr '\n' ' ' <"$TMP/out" | tr -s ' ' | grep -qF "roofline: not placed ($FLOPS cannot be measured on $ARCH)" ||
  fail "the summary does not say the FLOPs cannot be measured: $(head -c 1200 "$TMP/out")"
grep -q "not collected (no FLOP" "$TMP/out" && fail "the summary says the FLOPs were not collected"
tr '\n' ' ' <"$TMP/out" | tr -s ' ' | grep -qF "VALU Instruction Rate 40 % of peak (issue)" ||
  fail "the VALU instruction rate is not a limiter: $(head -c 1200 "$TMP/out")"
run analyze -w "$TMP/w" --format json --summary
expect_status 0
python3 - "$TMP/out" "$ARCH" <<'PY' || fail "JSON: not_measurable"
import json, sys
d, arch = json.load(open(sys.argv[1])), sys.argv[2]
nm = d["workloads"][0]["not_measurable"]
assert [x["what"] for x in nm].count("FLOP counts and WMMA operations") == 1, nm
assert all(x["why"] for x in nm), nm
r = d["summary"]["kernels"][0]["roofline"]
assert r["not_measurable"] == "FLOP counts and WMMA operations", r
assert r["not_placed"] == f"FLOP counts and WMMA operations cannot be measured on {arch}", r
PY

# A collection that lacks some counters: the --pmc lists name only those,
# all counters of the chip and none that a statement says it lacks.
cp -r "$TMP/w" "$TMP/p"
f="$TMP/p/host/7/7_counter_collection.csv"
grep -v '"SQ_INSTS_SALU"\|"GL2C_HIT"\|"TA_TA_BUSY"' "$f" >"$f.new" && mv "$f.new" "$f"
run analyze -w "$TMP/p"
expect_status 0
expect_err "rocprofv3 --pmc"
"$LUMEN" list counters --arch "$ARCH" >"$TMP/counters" || fail "list counters"
python3 - "$TMP/err" "$TMP/counters" "$SRCDIR/../../metrics/$ARCH/arch.yaml" <<'PY' || fail "--pmc lists"
import fnmatch, re, sys, yaml
line = next(l for l in open(sys.argv[1]) if "rocprofv3 --pmc" in l)
asked = re.search(r"rocprofv3 (--pmc .*) -- APP", line).group(1).replace("--pmc", "").split()
chip = set(open(sys.argv[2]).read().split())
lacks = [p for s in yaml.safe_load(open(sys.argv[3]))["not_measurable"] for p in s.get("counters", [])]
assert sorted(asked) == ["GL2C_HIT", "SQ_INSTS_SALU", "TA_TA_BUSY"], asked
assert all(c in chip for c in asked), asked
assert not any(fnmatch.fnmatchcase(c, p) for c in asked for p in lacks), asked
PY

# The server's analysis (what the GUI reads) carries the same list.
. "$SRCDIR/../../scripts/serve-lib.sh"
start_server -w "$TMP/w"
get "api/analysis?w=f0"
expect_code 200 "api/analysis"
python3 - "$TMP/body" "$TMP/w" "$LUMEN" <<'PY' || fail "api/analysis: not_measurable"
import json, subprocess, sys
api = json.load(open(sys.argv[1]))["workloads"][0]["not_measurable"]
cli = json.loads(subprocess.run([sys.argv[3], "analyze", "-w", sys.argv[2], "--format", "json"],
                                capture_output=True, check=True).stdout)["workloads"][0]["not_measurable"]
assert api == cli and api, (api, cli)
PY
get "api/summary?w=f0"
expect_code 200 "api/summary"
grep -qF "cannot be measured on $ARCH" "$TMP/body" || fail "api/summary: $(head -c 600 "$TMP/body")"
exit 0
