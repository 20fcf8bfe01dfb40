#!/usr/bin/env bash
# One GPU-machine call that checks a refactor against the tree before it, with binaries built on
# the development machine and carried (nothing compiled here): the CUDA self-test, the CPU suite's
# bit pins and kernel tests on the Xeon host (amx, avx512), `ampkit train --device cuda` of both
# trees (same losses?), and `ampkit bench train|gemm|norm` of both trees alternated in one run.
# Usage (repository root; carry ["build-devcarry"], holding gzipped new/{ampkit,ampkit_cuda_selftest,
# ampkit_tests} and base/ampkit): OUT=/tmp/out bash bench/device_ab_run.sh
set -u
OUT=${OUT:-/tmp/ampkit_device_ab}
D=${CARRY:-build-devcarry}
mkdir -p "$OUT" /tmp/ab/new /tmp/ab/base
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }
for f in "$D"/new/*.gz; do gunzip -c "$f" > /tmp/ab/new/$(basename "$f" .gz); done
gunzip -c "$D/base/ampkit.gz" > /tmp/ab/base/ampkit
chmod +x /tmp/ab/new/* /tmp/ab/base/*
NEW=/tmp/ab/new BASE=/tmp/ab/base
# Shared libraries the GPU machine may lack (Open MPI's, when the binaries were built with the MPI
# communicator), carried beside the binaries.
[ -d "$D/lib" ] && export LD_LIBRARY_PATH="$(cd "$D/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$OUT/info.txt" 2>&1
lscpu | grep -E 'Model name|^CPU\(s\)' >> "$OUT/info.txt"
timeout 150 "$NEW/ampkit_cuda_selftest" > "$OUT/selftest.txt" 2>&1
stamp "cuda selftest rc=$?: $(grep '^summary' "$OUT/selftest.txt")"
grep -A4 "^FAIL" "$OUT/selftest.txt" | head -20
F='BitPin*:GemmAmx*:*Kernel*:*Descriptor*:Graph*:Trainer*:Models*:Gpt*:AdamW*:Gelu*:Linear*:Workspace*:GemmViews*'
for isa in amx avx512; do
  AMPKIT_ISA=$isa timeout 120 "$NEW/ampkit_tests" --gtest_brief=1 --gtest_filter="$F" > "$OUT/tests_$isa.txt" 2>&1
  stamp "cpu tests $isa rc=$?: $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' "$OUT/tests_$isa.txt" | tr '\n' ' ')"
done
for t in base new; do
  B=$BASE; [ $t = new ] && B=$NEW
  timeout 90 "$B/ampkit" train --device cuda --data "$D/text.txt" --steps 60 --seed 7 --log "$OUT/train_cuda_$t.jsonl" --checkpoint /tmp/ab/ck_$t.safetensors > /tmp/ab/train_$t.txt 2>&1
  stamp "train cuda $t rc=$?"
done
python3 - "$OUT/train_cuda_base.jsonl" "$OUT/train_cuda_new.jsonl" > "$OUT/train_cuda_compare.txt" 2>&1 <<'PY'
import json,sys
def load(p): return [json.loads(l) for l in open(p) if l.strip()]
a,b=load(sys.argv[1]),load(sys.argv[2]); keys=('step','loss','grad_norm','loss_scale','validation_loss')
diff=[(x.get('step'),k,x.get(k),y.get(k)) for x,y in zip(a,b) for k in keys if x.get(k)!=y.get(k)]
print(len(a),len(b),'lines;',len(diff),'differing fields'); print(diff[:10])
PY
cmp /tmp/ab/ck_base.safetensors /tmp/ab/ck_new.safetensors >> "$OUT/train_cuda_compare.txt" 2>&1 && echo "checkpoints identical" >> "$OUT/train_cuda_compare.txt"
cat "$OUT/train_cuda_compare.txt"
for round in 1 2; do for t in base new; do
  B=$BASE; [ $t = new ] && B=$NEW
  timeout 60 "$B/ampkit" bench train --device cuda --peer none --steps 30 >> "$OUT/bench_train_cuda_$t.txt" 2>&1
  timeout 60 "$B/ampkit" bench train --device cuda --peer none --steps 20 --width 384 --context 256 --depth 4 --heads 6 >> "$OUT/bench_train_cuda_$t.txt" 2>&1
  timeout 60 "$B/ampkit" bench train --threads 16 --peer none --steps 20 >> "$OUT/bench_train_cpu_$t.txt" 2>&1
  timeout 60 "$B/ampkit" bench gemm --threads 16 --peers none --dtype f32,bf16 --epilogue DEFAULT,GELU_AUX_BIAS \
    --shapes 2048x3072x768,512x2048x128 >> "$OUT/bench_gemm_$t.txt" 2>&1
  timeout 40 "$B/ampkit" bench norm --no-peer --threads 16 --dtype bf16,mixed --shapes 16384x1024 >> "$OUT/bench_norm_$t.txt" 2>&1
  stamp "bench round $round $t"
done; done
