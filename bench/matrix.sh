#!/usr/bin/env bash
# The whole generated matrix of `lumen analyze` and `lumen export` cases
# (tests/integration/matrix.py): every case of the pairwise covering of the
# option families on every shared workload folder, each checked against the
# independent model of the selection. CI runs a bounded sample of it
# (integration/matrix); this runs all of it and prints a table of the
# outcome per folder family.
#
# Usage: bench/matrix.sh [LUMEN_BINARY]   (default build/src/cli/lumen)
set -euo pipefail
cd "$(dirname "$0")/.."
LUMEN=${1:-build/src/cli/lumen}
SHARED=${LUMEN_SHARED:-../shared}
out=$(mktemp "${TMPDIR:-/tmp}/lumen-matrix-XXXXXX")
trap 'rm -f "$out"' EXIT
start=$(date +%s)
status=0
python3 tests/integration/matrix.py "$LUMEN" "$SHARED" --full --api >"$out" || status=$?
end=$(date +%s)
printf '%-28s %8s\n' "cases" "$(tail -n 1 "$out")"
printf '%-28s %8s\n' "through the API" "$(grep -o '^[0-9]* cases also asked' "$out" | cut -d' ' -f1)"
printf '%-28s %8s s\n' "wall time" "$((end - start))"
printf '%-28s %8s\n' "failures by kind" ""
grep -A1 '^FAIL' "$out" | grep '^    ' | sed -E 's/[0-9]+/N/g; s/^ +//' | cut -c1-70 | sort | uniq -c | sort -rn | head -20
[ "$status" -eq 0 ] || grep -A3 '^FAIL' "$out" | head -40
exit "$status"
