#!/usr/bin/env bash
# Counter sets a full collection needs, per architecture: lumen's plan, its
# lower bound, and the passes rocprofiler-compute 3.0 runs (its own
# documentation of the planner: normal + accumulate (+ a timestamps pass
# with rocprof v1/v2)).
set -euo pipefail
cd "$(dirname "$0")/.."
LUMEN=${LUMEN:-build/src/cli/lumen}
[ -x "$LUMEN" ] || { cmake -S . -B build -G Ninja >/dev/null && cmake --build build >/dev/null; }
ref_v12() { case $1 in gfx906|gfx908) echo 17;; gfx90a) echo 16;; *) echo 15;; esac; }
ref_v3() { case $1 in gfx906) echo -;; gfx908) echo 11;; gfx90a) echo 14;; *) echo 13;; esac; }
printf '%-8s %12s %12s %24s %20s\n' arch "lumen sets" "lower bound" "reference (rocprof v1/v2)" "reference (v3)"
for arch in gfx906 gfx908 gfx90a gfx940 gfx941 gfx942; do
  last=$("$LUMEN" profile --plan --arch "$arch" | tail -1)
  sets=$(echo "$last" | sed -E 's/sets: ([0-9]+).*/\1/')
  lb=$(echo "$last" | sed -E 's/.*lower bound ([0-9]+).*/\1/')
  printf '%-8s %12s %12s %24s %20s\n' "$arch" "$sets" "$lb" "$(ref_v12 "$arch")" "$(ref_v3 "$arch")"
done
