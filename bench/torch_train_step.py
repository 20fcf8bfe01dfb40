#!/usr/bin/env python3
"""The PyTorch peer of `ampkit bench train`: one training step of the same GPT on the CPU or a GPU.

The model is ampkit train's default unless told otherwise (tools/ampkit/bench/train.cpp,
src/graph/modules.cpp): vocabulary 113, context 64, width 128, 4 heads, 2 pre-norm blocks (LayerNorm -> causal
self-attention on a packed QKV Linear -> projection -> residual; LayerNorm -> Linear(4 width) ->
GELU (tanh) -> Linear -> residual), final LayerNorm, an untied head without bias, mean softmax
cross-entropy; batch 32; AdamW (lr 1e-3, weight decay 0.1 on matrices), gradient clipping at 1.
Precision as ampkit's: fp32, or bf16/fp16 autocast over fp32 master weights (fp16 with a
GradScaler). One step = zero_grad, forward, backward, clip, optimizer step, and the loss read
back to the host (on cuda that waits for the step's kernels).

Two modes: eager (the model as written) and compile, the way a PyTorch user trains for speed:
torch.compile of the model, F.scaled_dot_product_attention, torch.optim.AdamW(fused=True) and
the same autocast (PyTorch 2.x; on a version without them the script exits with the reason).

Prints one JSON object: {"peer": "pytorch", "version", "mode", "precision", "threads", "device",
"step_ms" (the median over the timed steps), "tokens_per_s", "steps", and on cuda
"peak_memory_bytes" (torch.cuda.max_memory_allocated over the run)}. Usage:
    python3 bench/torch_train_step.py --precision bf16 --threads 2 --steps 20 [--device cuda]
        [--mode eager|compile] [--vocab 113 --width 128 --depth 2 --heads 4 --context 64 --batch 32]
`ampkit bench train --peer pytorch` runs it when `import torch` works.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CONTEXT, WIDTH, HEADS, DEPTH, BATCH = 113, 64, 128, 4, 2, 32


def attention(q, k, v):
    """Causal attention: PyTorch's fused kernel where it has one (2.0 and later), else by hand."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores.float(), dim=-1).to(v.dtype) @ v


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(WIDTH, eps=1e-5)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.ln2 = nn.LayerNorm(WIDTH, eps=1e-5)
        self.fc1 = nn.Linear(WIDTH, 4 * WIDTH)
        self.fc2 = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        heads = lambda y: y.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        a = attention(heads(q), heads(k), heads(v))
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Embedding(CONTEXT, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(DEPTH))
        self.ln_f = nn.LayerNorm(WIDTH, eps=1e-5)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, tokens, targets):
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))


class NoScaler:
    """GradScaler's interface without scaling (fp32 and bf16, and PyTorch versions without
    torch.amp.GradScaler)."""

    def scale(self, loss):
        return loss

    def unscale_(self, opt):
        pass

    def step(self, opt):
        opt.step()

    def update(self):
        pass


def main():
    global VOCAB, WIDTH, DEPTH, HEADS, CONTEXT, BATCH  # the model's sizes, from the options
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="bf16")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--mode", choices=["eager", "compile"], default="eager")
    ap.add_argument("--vocab", type=int, default=VOCAB)
    ap.add_argument("--width", type=int, default=WIDTH)
    ap.add_argument("--depth", type=int, default=DEPTH)
    ap.add_argument("--heads", type=int, default=HEADS)
    ap.add_argument("--context", type=int, default=CONTEXT)
    ap.add_argument("--batch", type=int, default=BATCH)
    args = ap.parse_args()
    VOCAB, WIDTH, DEPTH, HEADS, CONTEXT, BATCH = args.vocab, args.width, args.depth, args.heads, args.context, args.batch
    compiled = args.mode == "compile"
    if compiled and not (hasattr(torch, "compile") and hasattr(F, "scaled_dot_product_attention")):
        raise SystemExit(f"--mode compile needs torch.compile and scaled_dot_product_attention (PyTorch 2.0 or "
                         f"later), not {torch.__version__}")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch.cuda.is_available() is False")
    dev = torch.device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    model = Gpt().to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=1e-3, fused=True) if compiled else torch.optim.AdamW(groups, lr=1e-3)
    if compiled:
        model = torch.compile(model)
    dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.precision]
    if args.precision == "fp16" and not hasattr(torch.amp, "GradScaler"):
        raise SystemExit(f"fp16 autocast with a GradScaler needs PyTorch 2.3 or later, not {torch.__version__}")
    scaler = torch.amp.GradScaler(args.device, enabled=True) if args.precision == "fp16" else NoScaler()
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (BATCH, CONTEXT), generator=g).to(dev)
    targets = torch.randint(0, VOCAB, (BATCH, CONTEXT), generator=g).to(dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(args.device, dtype=dtype, enabled=dtype is not None):
            loss = model(tokens, targets)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        return loss.item()

    for _ in range(3):  # warm-up (compile mode: the compilation happens here)
        first = step()
    assert math.isfinite(first)
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    step_s = statistics.median(times)
    result = {"peer": "pytorch", "version": torch.__version__, "mode": args.mode, "precision": args.precision,
              "threads": args.threads, "device": args.device, "step_ms": 1e3 * step_s,
              "tokens_per_s": BATCH * CONTEXT / step_s, "steps": args.steps}
    if args.device == "cuda":
        result["peak_memory_bytes"] = torch.cuda.max_memory_allocated()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
