#!/usr/bin/env bash
# One call on the GPU machine that checks a change end to end where CI cannot: the CPU suite on
# its Xeon host (AMX engine included) at amx and avx512, the CUDA self-test, and the Xeon figures
# of the GEMM epilogues (1 thread), the decode shapes (beside PyTorch 2.11) and the norms. Builds the CPU
# tests (GoogleTest from the carried Debian source, as bench/xeon_test_device_run.sh) and the
# CUDA tree side by side.
# Usage (repository root; carry ["build-gtest-src"]): OUT=/tmp/out bash bench/device_check_run.sh
# Writes under $OUT: gtest.log, build_cpu.log, build_cuda.log, pins.txt, ctest_<isa>.txt,
# selftest.txt, gemm.txt, norm.txt.
set -u
OUT=${OUT:-/tmp/ampkit_device_check}
GTEST_SRC=${GTEST_SRC:-build-gtest-src}
CPU=$PWD/build-xeon CUDA=$PWD/build-cuda
mkdir -p "$OUT"
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }
(cmake -S "$GTEST_SRC" -B /tmp/ampkit_gtest_build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/ampkit_gtest &&
  cmake --build /tmp/ampkit_gtest_build -j8 && cmake --install /tmp/ampkit_gtest_build) > "$OUT/gtest.log" 2>&1 &&
  cmake -S . -B "$CPU" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/tmp/ampkit_gtest -DAMPKIT_CUDA=OFF \
    -DAMPKIT_BUILD_BENCH=OFF -DAMPKIT_WITH_ONEDNN=OFF -DAMPKIT_WITH_OPENBLAS=OFF > "$OUT/build_cpu.log" 2>&1 &&
  cmake --build "$CPU" -j10 >> "$OUT/build_cpu.log" 2>&1 &
cpu_build=$!
cmake -S . -B "$CUDA" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMPKIT_BUILD_TESTS=OFF -DAMPKIT_BUILD_BENCH=OFF \
  -DAMPKIT_CUDA=ON -DAMPKIT_WITH_ONEDNN=OFF -DAMPKIT_WITH_OPENBLAS=OFF > "$OUT/build_cuda.log" 2>&1 &&
  cmake --build "$CUDA" -j6 --target ampkit_cuda_selftest >> "$OUT/build_cuda.log" 2>&1
stamp "cuda build rc=$?"
timeout 150 "$CUDA/ampkit_cuda_selftest" > "$OUT/selftest.txt" 2>&1
stamp "cuda selftest rc=$?: $(grep '^summary' "$OUT/selftest.txt")"
grep -A4 "^FAIL" "$OUT/selftest.txt" | head -20
wait $cpu_build
stamp "cpu build rc=$?"
git log --oneline -1 > "$OUT/info.txt" 2>&1; "$CPU/ampkit" info >> "$OUT/info.txt" 2>&1
AMPKIT_BIT_PIN_RECORD=1 timeout 120 "$CPU/tests/ampkit_tests" --gtest_filter='BitPins.*' > "$OUT/pins.txt" 2>&1
grep -E "bit pins|FAILED|Failure" "$OUT/pins.txt"
for isa in "" avx512; do
  AMPKIT_ISA=$isa timeout 150 ctest --test-dir "$CPU" -j16 --timeout 120 > "$OUT/ctest_${isa:-best}.txt" 2>&1
  stamp "ctest AMPKIT_ISA=${isa:-best} rc=$?: $(grep 'tests passed' "$OUT/ctest_${isa:-best}.txt")"
  grep -E "\(Failed\)|Timeout" "$OUT/ctest_${isa:-best}.txt" | head -10
done
A="$CPU/ampkit"
timeout 120 "$A" bench gemm --threads 1 --peers none --dtype f32,bf16 --epilogue DEFAULT,GELU_AUX_BIAS,DGELU_BGRAD \
  --shapes 4096x4096x1024,2048x3072x768,512x2048x128 > "$OUT/gemm.txt" 2>&1
stamp "bench gemm (epilogues, 1 thread) rc=$?"
timeout 100 "$A" bench gemm --threads 1,16 --peers torch --dtype f32,bf16 --epilogue DEFAULT \
  --shapes 1x4096x4096,16x4096x4096,4096x16x4096 > "$OUT/gemm_decode.txt" 2>&1
stamp "bench gemm (decode) rc=$?"
timeout 90 "$A" bench norm --no-peer --threads 1,16 --dtype f32,bf16,mixed --shapes 16384x1024,8192x4096 \
  > "$OUT/norm.txt" 2>&1
stamp "bench norm rc=$?"
