#!/usr/bin/env bash
# Browser test of the web GUI: installs the Playwright driver (npm, pinned
# by package-lock.json) into the build folder, starts `lumen serve` on a free
# loopback port over six folders (f0 vcopy/MI200, f1 _mix/mix_MI200, f2
# gemm_fp8 with an implausible sysinfo.csv, f3 bmm1 with a roofline, f4 a
# generated gfx1100 collection, named to the test by RDNA_DIR, f5 an
# Nsight Compute export) and a store, and runs gui.test.mjs (or
# the test named by TEST, e.g. views.test.mjs), keeping its screenshots in
# WORK_DIR/screenshots (screenshots-views, ...).
# Usage: run.sh LUMEN SHARED_DIR WORK_DIR [TEST]
set -euo pipefail
LUMEN=$1
SHARED=$2
WORK=$3
TEST=${4:-gui.test.mjs}
SHOTS=screenshots
[ "$TEST" = gui.test.mjs ] || SHOTS=screenshots-${TEST%%.*}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE/$TEST" "$WORK/"
(cd "$WORK" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
TMP=$(mktemp -d /tmp/lumen-bt-XXXXXX)
SERVER=""
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$TMP"' EXIT
"$LUMEN" db import --db "$TMP/store.db" -w "$SHARED/workloads/_mix/mix_MI300X_A1" -n "mi300 mix" >/dev/null
# Three rank.R parts of one recording, rank 1 on another host: the
# workload menu says "3 ranks on 2 hosts".
"$LUMEN" db import --db "$TMP/part.db" -w "$SHARED/workloads/vcopy/MI200" -n part >/dev/null
"$LUMEN" db export --db "$TMP/part.db" part -w "$TMP/part" >/dev/null
for r in 0 1 2; do
  mkdir -p "$TMP/ranked/rank.$r" && cp "$TMP/part/lumen.db" "$TMP/ranked/rank.$r/"
  sqlite3 "$TMP/ranked/rank.$r/lumen.db" "UPDATE dispatch SET rank = $r"
done
sqlite3 "$TMP/ranked/rank.1/lumen.db" "UPDATE sysinfo SET value = 'node-b' WHERE key = 'hostname'"
"$LUMEN" db import --db "$TMP/store.db" -w "$TMP/ranked" -n ranked >/dev/null
# A Radeon (gfx1100) rocprofv3 collection: what the chip cannot measure.
export RDNA_DIR=$TMP/radeon/gfx1100
python3 "$HERE/../integration/rdna_fixture.py" gfx1100 "$RDNA_DIR" >/dev/null
. "$HERE/../../scripts/serve-lib.sh"
start_lumen_serve "$LUMEN" "$TMP" -w "$SHARED/workloads/vcopy/MI200" -w "$SHARED/workloads/_mix/mix_MI200" \
  -w "$SHARED/formats/rocprofiler-compute/gemm_fp8_3.1.0_MI325X" -w "$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X" \
  -w "$RDNA_DIR" -w "$SHARED/formats/ncu/cc86_metrics" --db "$TMP/store.db" || exit 1
rm -rf "${WORK:?}/$SHOTS"
node "$WORK/$TEST" "$URL" "$LUMEN" "$SHARED" "$WORK/$SHOTS"
echo "screenshots: $WORK/$SHOTS"
