#!/usr/bin/env bash
# One call on the GPU machine's host CPU (a 16-core Xeon with AMX; no oneDNN, no OpenBLAS, PyTorch
# 2.11): build the CPU part only, then `ampkit bench gemm` and `ampkit bench norm` at 1 and all
# threads with their PyTorch columns, and the norms' streaming-store A/B (the threshold is the
# L3's size; AMPKIT_CACHES=l3=16M lowers it). docs/PERFORMANCE.md quotes these runs.
# Usage (repository root): OUT=/tmp/out bash bench/xeon_cpu_run.sh [gemm|norm|all]
# Writes under $OUT: build.log, info.txt, gemm.txt, norm.txt, norm_stream_ab.txt.
set -u
OUT=${OUT:-/tmp/ampkit_xeon_out}
BUILD=${BUILD:-/tmp/ampkit_cpu_build}
what=${1:-all}
mkdir -p "$OUT"
start=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMPKIT_BUILD_TESTS=OFF -DAMPKIT_BUILD_BENCH=OFF \
  -DAMPKIT_CUDA=OFF -DAMPKIT_WITH_ONEDNN=OFF -DAMPKIT_WITH_OPENBLAS=OFF > "$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" --target ampkit_cli -j"$(nproc)" >> "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s" | tee -a "$OUT/build.log"
[ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
A="$BUILD/ampkit"
{ git log --oneline -1 2>/dev/null; "$A" info; uptime; } > "$OUT/info.txt" 2>&1
if [ "$what" = gemm ] || [ "$what" = all ]; then
  timeout 300 "$A" bench gemm --threads all --peers torch --dtype f32,bf16 --epilogue DEFAULT \
    --shapes 4096x4096x1024,2048x3072x768,512x2048x128,128x2048x512,1x4096x4096,16x4096x4096,4096x16x4096 \
    > "$OUT/gemm.txt" 2>&1
fi
if [ "$what" = norm ] || [ "$what" = all ]; then
  timeout 300 "$A" bench norm --threads all --dtype f32,bf16,mixed --shapes 64x128x56x56,16384x1024,8192x4096 \
    > "$OUT/norm.txt" 2>&1
  for c in "" "l3=16M"; do
    echo "AMPKIT_CACHES=$c"
    AMPKIT_CACHES=$c timeout 100 "$A" bench norm --no-peer --threads all --dtype bf16 --shapes 8192x4096,4096x12288
  done > "$OUT/norm_stream_ab.txt" 2>&1
fi
echo "ran in $(( $(date +%s) - start )) s"
