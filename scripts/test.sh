#!/usr/bin/env bash
# Everything CI checks, from a fresh Debian 12 machine: install the build
# dependencies, start a throwaway PostgreSQL server on loopback (the store's
# tests run on SQLite and on it), build with warnings as errors, run every
# test, then build again with AddressSanitizer + UndefinedBehaviorSanitizer
# and run the unit, golden and integration tests there, and run the fuzzers
# for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/lumen-pg-XXXXXX")
trap 'scripts/pg-server.sh stop "$pg_dir/pg"; rm -rf "$pg_dir"' EXIT
LUMEN_TEST_PG=$(scripts/pg-server.sh start "$pg_dir/pg")
export LUMEN_TEST_PG

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

# The default generator (Makefiles) builds from a fresh folder too.
rm -rf build-make
cmake -S . -B build-make -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-make -j "$jobs" >/dev/null
echo "build with the default generator: ok"

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLUMEN_SANITIZE=ON
cmake --build build-asan -j "$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j "$jobs" -L 'unit|golden|integration')

# ThreadSanitizer: analyses evaluated on several threads at once.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLUMEN_TSAN=ON >/dev/null
cmake --build build-tsan -j "$jobs" --target test_sort_race test_table_race
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R '^unit/test_(sort|table)_race$')

CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
   -DLUMEN_FUZZ=ON -DLUMEN_SANITIZE=ON
cmake --build build-fuzz -j "$jobs"
(cd build-fuzz && ctest --output-on-failure -L fuzz)
