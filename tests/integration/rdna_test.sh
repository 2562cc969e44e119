#!/usr/bin/env bash
# An AMD Radeon architecture end to end: a rocprofv3 counter collection of
# that chip (rdna_fixture.py) analyzed, its panels non-empty, its summary
# shown, and its speed-of-light, wavefront, LDS and GL2 numbers equal to
# the ones the fixture computes by hand from the counters (on the RDNA 3.5
# APUs also the GL0, GL1, scalar-cache and TD rows and the memory peak).
# Usage: rdna_test.sh LUMEN ARCH
set -u
LUMEN=$1
ARCH=$2
TMP=$(mktemp -d /tmp/lumen-rdna-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
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
