# lib.sh - what every benchmark does first: the build dependencies, a
# release build in build-bench/ and the measuring helpers. Source it from
# the repository root; sets LUMEN and SHARED.
scripts/deps.sh
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build-bench -j "$(nproc)" >/dev/null
cc -O2 -o build-bench/scale_workload bench/scale_workload.c
cc -O2 -o build-bench/measure bench/measure.c
cc -O2 -I src -o build-bench/load bench/load.c build-bench/src/csv/liblm_csv.a build-bench/src/model/liblm_model.a \
  build-bench/src/base/liblm_base.a $(pkg-config --libs sqlite3 libpq 2>/dev/null || pkg-config --libs sqlite3) -lpthread -lm
LUMEN=build-bench/src/cli/lumen
SHARED=${LUMEN_SHARED_DIR:-../shared}
