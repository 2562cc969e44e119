#!/usr/bin/env bash
# Everything CI checks, from a fresh Debian 12 machine: install the build
# dependencies, build with warnings as errors, run every test, then build
# again with AddressSanitizer + UndefinedBehaviorSanitizer and run the unit,
# golden and integration tests there, and run the fuzzers for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLUMEN_SANITIZE=ON
cmake --build build-asan -j "$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j "$jobs" -L 'unit|golden|integration')

CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
   -DLUMEN_FUZZ=ON -DLUMEN_SANITIZE=ON
cmake --build build-fuzz -j "$jobs"
(cd build-fuzz && ctest --output-on-failure -L fuzz)
