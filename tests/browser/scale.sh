#!/usr/bin/env bash
# Browser test of the web GUI on a large workload: makes a 100,000-dispatch
# copy of vcopy/MI200 (scale_workload), serves it, waits until the server
# has prepared its opening view (/api/health "warm"), and runs
# scale.test.mjs: the first view's time measured in the browser, paging and
# sorting the dispatch list, and a bounded number of table rows in the page.
# Usage: scale.sh LUMEN SCALE_WORKLOAD SHARED_DIR WORK_DIR [DISPATCHES]
set -euo pipefail
LUMEN=$1
SCALE=$2
SHARED=$3
WORK=$4
N=${5:-100000}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE/scale.test.mjs" "$WORK/"
(cd "$WORK" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
TMP=$(mktemp -d /tmp/lumen-bs-XXXXXX)
SERVER=""
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$TMP"' EXIT
"$SCALE" "$SHARED/workloads/vcopy/MI200" "$N" "$TMP/big"
. "$HERE/../../scripts/serve-lib.sh"
start_lumen_serve "$LUMEN" "$TMP" -w "$TMP/big" || exit 1
warm=""
for _ in $(seq 1 600); do
  warm=$(curl -s "${URL}api/health" || true)
  case $warm in *'"warm":true'*) break ;; esac
  sleep 0.2
done
case $warm in *'"warm":true'*) ;; *) echo "FAIL the server did not prepare the opening view: $warm"; exit 1 ;; esac
rm -rf "$WORK/screenshots-scale"
node "$WORK/scale.test.mjs" "$URL" "$LUMEN" "$TMP/big" "$N" "$WORK/screenshots-scale"
echo "rss of the server: $(($(ps -o rss= -p "$SERVER") / 1024)) MiB"
echo "screenshots: $WORK/screenshots-scale"
