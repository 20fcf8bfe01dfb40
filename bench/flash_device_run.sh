#!/usr/bin/env bash
# One GPU-machine call for the flash attention kernels, with binaries built on the development
# machine and carried (nothing compiled there): the CUDA self-test's attention cases, then
# `ampkit bench attention --device cuda` (flash beside the plain kernel, the tensor-core ceiling
# measured in the same run) and PyTorch's scaled_dot_product_attention (bench/torch_attention_peer.py).
# Usage (repository root; carry [DIR] holding gzipped ampkit and ampkit_cuda_selftest, lib/ with
# Open MPI's shared libraries, this script, torch_attention_peer.py and torch_cuda_peer.py):
#   OUT=/tmp/out CARRY=DIR bash DIR/flash_device_run.sh
set -u
OUT=${OUT:-/tmp/ampkit_flash}
D=${CARRY:-build-devcarry-flash}
mkdir -p "$OUT" /tmp/fl
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }
for f in "$D"/*.gz; do gunzip -c "$f" > /tmp/fl/$(basename "$f" .gz); done
chmod +x /tmp/fl/*
[ -d "$D/lib" ] && export LD_LIBRARY_PATH="$(cd "$D/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader > "$OUT/info.txt" 2>&1
timeout ${SELFTEST_S:-120} /tmp/fl/ampkit_cuda_selftest ${FILTER:-Attention} > "$OUT/selftest.txt" 2>&1
stamp "selftest rc=$?: $(grep '^summary' "$OUT/selftest.txt")"
grep -iE "fail|error" "$OUT/selftest.txt" | head -30
timeout ${BENCH_S:-100} /tmp/fl/ampkit bench attention --device cuda ${BENCH_ARGS:-} > "$OUT/bench.txt" 2>&1
stamp "bench rc=$?"
cat "$OUT/bench.txt"
timeout ${TORCH_S:-60} env -u OUT python3 "$D/torch_attention_peer.py" ${TORCH_ARGS:-} > "$OUT/torch.txt" 2>&1
stamp "torch rc=$?"
cat "$OUT/torch.txt" | tail -12
