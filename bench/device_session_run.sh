#!/usr/bin/env bash
# One GPU-machine call for the device-resident step and the flash kernels (carry ["build-devcarry"],
# holding session/{ampkit,ampkit_cuda_selftest}.gz = the tree under test, base/ampkit.gz = the
# tree before, lib/ = Open MPI's shared libraries, text.txt = training text; built here, nothing
# compiled there). Usage (repository root): OUT=/tmp/out bash bench/device_session_run.sh
# self-test (flash, device optimizer, trainer), train cuda base vs new, bench train / attention,
# PyTorch peers (eager, compile; SDPA). The log is stdout; files under $OUT.
set -u
D=build-devcarry; S=$D/session
mkdir -p "$OUT" /tmp/s/new /tmp/s/base
start=$(date +%s); stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }
for f in $S/*.gz; do gunzip -c "$f" > /tmp/s/new/$(basename "$f" .gz); done
gunzip -c $D/base/ampkit.gz > /tmp/s/base/ampkit; chmod +x /tmp/s/new/* /tmp/s/base/*
export LD_LIBRARY_PATH="$(cd $D/lib && pwd)"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
timeout 150 /tmp/s/new/ampkit_cuda_selftest > "$OUT/selftest.txt" 2>&1
stamp "selftest rc=$?: $(grep '^summary' "$OUT/selftest.txt")"
grep -E "^FAIL" -A8 "$OUT/selftest.txt" | head -60
for prec in bf16 fp16; do for t in base new; do
  timeout 40 /tmp/s/$t/ampkit train --device cuda --data $D/text.txt --steps 40 --seed 7 --precision $prec --log /tmp/s/tr_${prec}_$t.jsonl --checkpoint /tmp/s/ck_${prec}_$t.safetensors > /tmp/s/tr_${prec}_$t.txt 2>&1
  stamp "train $prec $t rc=$?"; tail -2 /tmp/s/tr_${prec}_$t.txt
done
python3 - /tmp/s/tr_${prec}_base.jsonl /tmp/s/tr_${prec}_new.jsonl <<'PY'
import json,sys
def load(p): return [json.loads(l) for l in open(p) if l.strip()]
a,b=load(sys.argv[1]),load(sys.argv[2]); keys=('step','loss','grad_norm','loss_scale','skipped','validation_loss')
d=[(x.get('step'),k,x.get(k),y.get(k)) for x,y in zip(a,b) for k in keys if x.get(k)!=y.get(k)]
print(len(a),len(b),'lines;',len(d),'differing fields',d[:6])
PY
cmp /tmp/s/ck_${prec}_base.safetensors /tmp/s/ck_${prec}_new.safetensors && echo "checkpoints $prec identical"
done
for t in base new new base; do
  timeout 25 /tmp/s/$t/ampkit bench train --device cuda --peer none --steps 30 --json >> "$OUT/bench_train_$t.jsonl" 2>&1
  timeout 40 /tmp/s/$t/ampkit bench train --device cuda --peer none --steps 20 --width 384 --context 256 --depth 6 --heads 6 --batch 64 --json >> "$OUT/bench_train_$t.jsonl" 2>&1
  [ $t = new ] && timeout 60 /tmp/s/$t/ampkit bench train --device cuda --peer none --steps 10 --width 768 --context 1024 --depth 12 --heads 12 --batch 8 --json >> "$OUT/bench_train_$t.jsonl" 2>&1
  stamp "bench train $t rc=$?"
done
grep -h '"graph":"fused"' "$OUT"/bench_train_*.jsonl | grep -v node_kind | cut -c1-400
timeout 60 /tmp/s/new/ampkit bench attention --device cuda > "$OUT/bench_attention.txt" 2>&1; stamp "bench attention rc=$?"
cat "$OUT/bench_attention.txt" | head -40
timeout 60 env -u OUT python3 bench/torch_attention_peer.py > "$OUT/torch_attention.txt" 2>&1; stamp "torch attention rc=$?"
tail -14 "$OUT/torch_attention.txt"
for mode in eager compile; do
  timeout 120 python3 bench/torch_train_step.py --device cuda --mode $mode --precision bf16 --steps 20 --vocab 113 --width 384 --context 256 --depth 6 --heads 6 --batch 64 2>&1 | tail -1
  stamp "torch train $mode rc=$?"
  timeout 60 python3 bench/torch_train_step.py --device cuda --mode $mode --precision bf16 --steps 30 2>&1 | tail -1
  stamp "torch train default $mode rc=$?"
done
