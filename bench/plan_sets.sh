#!/usr/bin/env bash
# Counter sets a full collection needs, per architecture: lumen's plan, its
# lower bound, and the passes rocprofiler-compute 3.0 runs (its own
# documentation of the planner: normal + accumulate (+ a timestamps pass
# with rocprof v1/v2)). gfx950 is supported by the reference from 3.3 on,
# with rocprofv3 only: its shared MI350 recording holds 8 pmc_perf_<n>
# passes and 5 accumulate tables.
set -euo pipefail
cd "$(dirname "$0")/.."
LUMEN=${LUMEN:-build/src/cli/lumen}
[ -x "$LUMEN" ] || { cmake -S . -B build -G Ninja >/dev/null && cmake --build build >/dev/null; }
ref_v12() { case $1 in gfx906|gfx908) echo 17;; gfx90a) echo 16;; gfx950) echo -;; *) echo 15;; esac; }
ref_v3() { case $1 in gfx906) echo -;; gfx908) echo 11;; gfx90a) echo 14;; *) echo 13;; esac; }
printf '%-8s %12s %12s %24s %20s\n' arch "lumen sets" "lower bound" "reference (rocprof v1/v2)" "reference (v3)"
for arch in gfx906 gfx908 gfx90a gfx940 gfx941 gfx942 gfx950; do
  last=$("$LUMEN" profile --plan --arch "$arch" | tail -1)
  sets=$(echo "$last" | sed -E 's/sets: ([0-9]+).*/\1/')
  lb=$(echo "$last" | sed -E 's/.*lower bound ([0-9]+).*/\1/')
  printf '%-8s %12s %12s %24s %20s\n' "$arch" "$sets" "$lb" "$(ref_v12 "$arch")" "$(ref_v3 "$arch")"
done

# NVIDIA: CUPTI's pass counts (Profiler Host API, no GPU needed) for a full
# collection: one config with every metric (kernel replay: passes of each
# kernel in one run), and the sets for application replay (runs) and
# instance cycling (kernel instances), with what the greedy packing found.
echo
printf '%-8s %-6s %8s %22s %20s %22s\n' arch chip metrics "kernel replay passes" "app replay runs" "packed sets (passes)"
for arch in sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100; do
  out=$("$LUMEN" profile --plan --arch "$arch" --replay kernel) || { echo "$arch: $out"; continue; }
  chip=$(echo "$out" | sed -nE '1s/.*chip ([A-Z0-9]+),.*/\1/p')
  metrics=$(echo "$out" | sed -nE '1s/.*: ([0-9]+) metrics$/\1/p')
  kernel=$(echo "$out" | tail -1 | sed -E 's/.*passes: ([0-9]+).*/\1/')
  app=$("$LUMEN" profile --plan --arch "$arch" --replay app)
  runs=$(echo "$app" | tail -1 | sed -E 's/.*passes: ([0-9]+).*/\1/')
  packed=$(echo "$app" | sed -nE 's/^packed into ([0-9]+) sets: ([0-9]+) passes.*/\1 (\2)/p')
  printf '%-8s %-6s %8s %22s %20s %22s\n' "$arch" "$chip" "$metrics" "$kernel" "$runs" "$packed"
done
