#!/usr/bin/env bash
# The main job: install what is needed, build lumen and analyze a shared
# workload (extra arguments go to `lumen analyze`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
./build/src/cli/lumen analyze -w ../shared/workloads/vcopy/MI200 "$@"
