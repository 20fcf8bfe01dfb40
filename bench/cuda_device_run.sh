#!/usr/bin/env bash
# One call on the GPU machine (docs/CUDA.md): build the CUDA backend without GoogleTest, run the
# CUDA self-test, `ampkit bench gemm|norm --device cuda` and the PyTorch peer on the same GPU.
# Usage (repository root): OUT=/tmp/out bash bench/cuda_device_run.sh [quick]
# Writes under $OUT: build.log, smi.txt, selftest.txt, bench_gemm.jsonl, bench_norm.jsonl,
# torch_peer.jsonl; prints the summaries last.
set -u
OUT=${OUT:-/tmp/ampkit_cuda_out}
BUILD=${BUILD:-/tmp/ampkit_cuda_build}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
quick=${1:-}
{ nvidia-smi; nvcc --version; cmake --version; } > "$OUT/smi.txt" 2>&1
start=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMPKIT_BUILD_TESTS=OFF -DAMPKIT_BUILD_BENCH=OFF \
  -DAMPKIT_CUDA=ON > "$OUT/build.log" 2>&1 && cmake --build "$BUILD" -j16 >> "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s" | tee -a "$OUT/build.log"
[ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
timeout 240 "$BUILD/ampkit_cuda_selftest" > "$OUT/selftest.txt" 2>&1
echo "selftest rc=$?" >> "$OUT/selftest.txt"
if [ "$quick" = quick ]; then gq=--quick; else gq=; fi
timeout 200 "$BUILD/ampkit" bench gemm --device cuda $gq > "$OUT/bench_gemm.txt" 2>&1
timeout 120 "$BUILD/ampkit" bench norm --device cuda $gq > "$OUT/bench_norm.txt" 2>&1
timeout 150 python3 bench/torch_cuda_peer.py $gq > /dev/null 2> "$OUT/torch_peer.err"
grep -E "^(FAIL|summary)" "$OUT/selftest.txt"; tail -1 "$OUT/selftest.txt"
cat "$OUT/bench_gemm.txt" "$OUT/bench_norm.txt"
tail -3 "$OUT/torch_peer.err"
