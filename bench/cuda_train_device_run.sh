#!/usr/bin/env bash
# One call on the GPU machine for the training graph on CUDA (docs/CUDA.md, issue 11 item 7):
# build the CUDA backend without GoogleTest, run the CUDA self-test, then `ampkit train` on the
# same text and seed on the cpu and with --device cuda, and print both loss curves side by side.
# Usage (repository root): OUT=/tmp/out bash bench/cuda_train_device_run.sh
# Writes under $OUT: build.log, selftest.txt, train_cpu.txt/.jsonl, train_cuda.txt/.jsonl.
set -u
OUT=${OUT:-/tmp/ampkit_cuda_out}
BUILD=${BUILD:-/tmp/ampkit_cuda_build}
mkdir -p "$OUT"
start=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMPKIT_BUILD_TESTS=OFF -DAMPKIT_BUILD_BENCH=OFF \
  -DAMPKIT_CUDA=ON -DAMPKIT_WITH_ONEDNN=OFF -DAMPKIT_WITH_OPENBLAS=OFF > "$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" -j16 >> "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s" | tee -a "$OUT/build.log"
[ $rc -eq 0 ] || { grep -E "error|FAILED" "$OUT/build.log" | head -30; exit 1; }
# FILTERS="CudaGraphOps CudaTrainer": only the cases whose names hold one of these (default: all).
: > "$OUT/selftest.txt"
for f in ${FILTERS:-all}; do
  [ "$f" = all ] && f=
  timeout 300 "$BUILD/ampkit_cuda_selftest" $f >> "$OUT/selftest.txt" 2>&1
  echo "selftest $f rc=$?" >> "$OUT/selftest.txt"
done
grep -E "^(FAIL|summary)" "$OUT/selftest.txt"
grep -B1 -A4 "^FAIL" "$OUT/selftest.txt" | head -60
tail -2 "$OUT/selftest.txt"
# The repository's documentation as training text (the GPU machine has no fortunes package).
cat docs/*.md README.md > /tmp/ampkit_train_text.txt
args=(--data /tmp/ampkit_train_text.txt --steps ${STEPS:-60} --width 64 --depth 2 --heads 4 --context 64 --batch 16
  --precision ${PRECISION:-bf16} --eval-every 20 --sample-tokens 40 --seed 3)
for dev in cpu cuda; do
  s=$(date +%s)
  timeout 240 "$BUILD/ampkit" train "${args[@]}" --device $dev --log "$OUT/train_$dev.jsonl" > "$OUT/train_$dev.txt" 2>&1
  echo "train --device $dev rc=$? in $(( $(date +%s) - s )) s" | tee -a "$OUT/train_$dev.txt"
done
tail -6 "$OUT/train_cuda.txt"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
def losses(dev):
    rows = []
    for line in open(f"{out}/train_{dev}.jsonl"):
        r = json.loads(line)
        if "loss" in r and "step" in r: rows.append((r["step"], r["loss"]))
    return rows
cpu, cuda = losses("cpu"), losses("cuda")
worst = 0.0
for (s, a), (_, b) in zip(cpu, cuda):
    worst = max(worst, abs(a - b) / abs(a))
    if s % 10 == 0 or s == 1: print(f"step {s}: cpu {a:.6f} cuda {b:.6f} rel {abs(a - b) / abs(a):.2e}")
print(f"{len(cpu)} steps, worst relative loss difference {worst:.3e}")
PY
