#!/usr/bin/env bash
# The whole CPU test suite on the GPU machine's host CPU (a 16-core Xeon with AMX), where the AMX
# engine's tests run instead of skipping. That machine has no GoogleTest, so it is built there
# from a copy of Debian's source package (/usr/src/googletest of libgtest-dev), carried in an
# ignored folder:  cp -r /usr/src/googletest build-gtest-src   (then carry ["build-gtest-src"]).
# Also prints the bit pins of that machine (AMPKIT_BIT_PIN_RECORD) for tests/ops/bit_pins.txt.
# Usage (repository root): OUT=/tmp/out bash bench/xeon_test_device_run.sh
# Writes under $OUT: gtest.log, build.log, info.txt, pins.txt, ctest_<isa>.txt.
set -u
OUT=${OUT:-/tmp/ampkit_xeon_test_out}
BUILD=${BUILD:-$PWD/build-xeon}
GTEST_SRC=${GTEST_SRC:-build-gtest-src}
mkdir -p "$OUT"
start=$(date +%s)
[ -d "$GTEST_SRC" ] || { echo "no GoogleTest source at $GTEST_SRC (see the header of $0)"; exit 1; }
(cmake -S "$GTEST_SRC" -B /tmp/ampkit_gtest_build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/ampkit_gtest &&
  cmake --build /tmp/ampkit_gtest_build -j"$(nproc)" && cmake --install /tmp/ampkit_gtest_build) > "$OUT/gtest.log" 2>&1 ||
  { tail -20 "$OUT/gtest.log"; exit 1; }
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/tmp/ampkit_gtest -DAMPKIT_CUDA=OFF \
  -DAMPKIT_BUILD_BENCH=OFF -DAMPKIT_WITH_ONEDNN=OFF -DAMPKIT_WITH_OPENBLAS=OFF > "$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" -j"$(nproc)" >> "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s"
[ $rc -eq 0 ] || { grep -E "error|FAILED" "$OUT/build.log" | head -30; exit 1; }
{ git log --oneline -1 2>/dev/null; "$BUILD/ampkit" info; } > "$OUT/info.txt" 2>&1
AMPKIT_BIT_PIN_RECORD=1 timeout 120 "$BUILD/tests/ampkit_tests" --gtest_filter='BitPins.*' > "$OUT/pins.txt" 2>&1
grep -E "^(ref|avx|amx) |bit pins|FAILED" "$OUT/pins.txt"
# The best ISA (amx there), then capped: every engine the machine has.
for isa in "" avx512 avx2; do
  AMPKIT_ISA=$isa timeout 200 ctest --test-dir "$BUILD" -j"$(nproc)" --timeout 150 > "$OUT/ctest_${isa:-best}.txt" 2>&1
  echo "AMPKIT_ISA=${isa:-best}: rc=$? $(grep -E 'tests passed' "$OUT/ctest_${isa:-best}.txt")"
  grep -E "\(Failed\)|Timeout" "$OUT/ctest_${isa:-best}.txt" | head -20
done
echo "ran in $(( $(date +%s) - start )) s"
