#!/usr/bin/env bash
# Load test of `lumen serve` on loopback with wrk: the panel endpoint
# (/api/analysis) for a few fixed selections, a fixed duration each.
# Prints requests per second, latency percentiles and the error count
# (non-2xx answers and socket errors), which must be zero.
#
# Usage: bench/serve_load.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-10}
CONNS=${2:-16}
. bench/lib.sh
. scripts/serve-lib.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench-serve-XXXXXX")
SERVER=""
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

"$LUMEN" db import --db "$WORK/store.db" -w "$SHARED/workloads/_mix/mix_MI300X_A1" -n mix300 >/dev/null
start_lumen_serve "$LUMEN" "$WORK" -w "$SHARED/workloads/vcopy/MI200" -w "$SHARED/workloads/_mix/mix_MI200" \
  --db "$WORK/store.db" || exit 1

# wrk reports non-2xx answers through this script.
cat >"$WORK/report.lua" <<'EOF'
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.status + summary.errors.timeout
  io.write(string.format("RESULT %.1f %.3f %.3f %.3f %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, errors, summary.requests))
end
EOF

printf '%-52s %10s %10s %10s %10s %8s\n' "endpoint (${SECONDS_EACH} s, ${CONNS} connections)" "req/s" "p50 ms" "p99 ms" "max ms" errors
total_errors=0
for path in "api/analysis?w=f1" "api/analysis?w=f1&k=vec&norm=per_kernel" "api/analysis?w=f1&base=f0&b=2" \
  "api/analysis?w=db:mix300&norm=per_cycle" "api/workloads"; do
  curl -s -o /dev/null "$URL$path" # the first answer evaluates; the load measures serving
  line=$(wrk -t2 -c"$CONNS" -d"${SECONDS_EACH}s" --latency -s "$WORK/report.lua" "$URL$path" | grep '^RESULT')
  read -r _ rps p50 p99 max errors n <<<"$line"
  total_errors=$((total_errors + errors))
  printf '%-52s %10s %10s %10s %10s %8s\n' "/$path" "$rps" "$p50" "$p99" "$max" "$errors"
done
kill "$SERVER"
SERVER=""
[ "$total_errors" -eq 0 ] || { echo "errors under load: $total_errors"; exit 1; }
echo "no errors"
