#!/usr/bin/env python3
"""PyTorch's CPU LayerNorm / RMSNorm on the cases of `ampkit bench norm` (the PyTorch peer).

Each case: x [rows, n] normalized over n, gamma (and beta for LayerNorm) [n], eps 1e-5, in the
case's dtypes (x, and the parameters: the same or f32, the "mixed" cases autocast produces).
  forward   F.layer_norm / F.rms_norm (torch >= 2.4; before, x * rsqrt(mean(x^2) + eps) * gamma
            in fp32, cast back)
  backward  torch.autograd.grad of that output for (x, gamma[, beta]) with dy, the graph kept
            (what a training step runs; the forward is not timed)
Median of repetitions after two warm-up calls. A case PyTorch refuses (mixed dtypes on some
versions) prints "skipped" with the error.

Usage:
  python3 bench/torch_norm_cpu.py --threads 1 --json --cases layer_norm:forward:bf16:f32:16384:1024;...
"""
import argparse
import json
import os
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--cases", required=True, help="op:pass:x_dtype:param_dtype:rows:n;...")
ap.add_argument("--target-s", type=float, default=0.3, help="time per case")
ap.add_argument("--min-samples", type=int, default=5)
ap.add_argument("--json", action="store_true", help="one JSON object per line and case")
args = ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(args.threads)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(args.threads)
torch.manual_seed(0)
DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
EPS = 1e-5


def rms_norm(x, gamma):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), gamma, EPS)
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * gamma.float()).to(x.dtype)


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 1 << 62


def make_call(op, pas, xd, pd, rows, n):
    # x, y, dy, dx and PyTorch's fp32 temporaries: about eight fp32 tensors of the case at most.
    if 8 * 4 * rows * n > 0.8 * mem_available():
        raise MemoryError(f"needs about {8 * 4 * rows * n >> 20} MiB, more than 80% of MemAvailable")
    x = (torch.randn(rows, n) + 1.5).to(DT[xd]).requires_grad_(pas == "backward")
    gamma = (1 + 0.25 * torch.randn(n)).to(DT[pd]).requires_grad_(pas == "backward")
    beta = (0.25 * torch.randn(n)).to(DT[pd]).requires_grad_(pas == "backward")
    if op == "layer_norm":
        fwd = lambda: F.layer_norm(x, (n,), gamma, beta, EPS)  # noqa: E731
        params = (x, gamma, beta)
    else:
        fwd = lambda: rms_norm(x, gamma)  # noqa: E731
        params = (x, gamma)
    if pas == "forward":
        with torch.no_grad():
            fwd()  # raises here if PyTorch refuses the dtype mix
        def forward():
            with torch.no_grad():
                return fwd()
        return forward
    y = fwd()
    dy = torch.randn(rows, n).to(DT[xd])
    return lambda: torch.autograd.grad(y, params, dy, retain_graph=True)


for case in [c.split(":") for c in args.cases.split(";") if c]:
    op, pas, xd, pd, rows, n = case
    rows, n = int(rows), int(n)
    record = {"op": op, "pass": pas, "x": xd, "param": pd, "rows": rows, "n": n, "threads": args.threads}
    try:
        call = make_call(op, pas, xd, pd, rows, n)
        for _ in range(2):
            call()
    except Exception as e:  # noqa: BLE001 -- report PyTorch's refusal, go on
        record["skipped"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}".replace('"', "'")
        print(json.dumps(record) if args.json else f"{case}: skipped: {record['skipped']}", flush=True)
        continue
    t0 = time.perf_counter()
    call()
    once = time.perf_counter() - t0
    ts = []
    for _ in range(max(args.min_samples, min(50, int(args.target_s / max(once, 1e-9))))):
        t0 = time.perf_counter()
        call()
        ts.append(time.perf_counter() - t0)
    record["ms"] = statistics.median(ts) * 1e3
    record["version"] = torch.__version__
    print(json.dumps(record) if args.json else f"{case}: {record['ms']:.3f} ms", flush=True)
