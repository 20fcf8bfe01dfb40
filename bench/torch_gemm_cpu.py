#!/usr/bin/env python3
"""PyTorch's CPU GEMM on the shapes of `ampkit bench gemm` (the peer on machines without oneDNN).

  torch.matmul(a, b, out=c), a: m x k, b: k x n, fp32 or bf16 (PyTorch's oneDNN/MKL path), DEFAULT
epilogue only. Median of repetitions after two warm-up calls; GFLOP/s = 2mnk / median.
Usage: python3 bench/torch_gemm_cpu.py --threads 1 --dtypes f32,bf16 --shapes 4096x4096x1024,...
Prints one line per case: dtype m,n,k threads ms GFLOP/s.
"""
import argparse
import os
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--dtypes", default="f32,bf16")
ap.add_argument("--shapes", default="4096x4096x1024,4096x1024x4096,2048x3072x768,512x512x512,128x768x768")
ap.add_argument("--target-s", type=float, default=0.5, help="time per case")
args = ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(args.threads)
import torch  # noqa: E402

torch.set_num_threads(args.threads)
DT = {"f32": torch.float32, "bf16": torch.bfloat16}
for dn in args.dtypes.split(","):
    for s in args.shapes.split(","):
        m, n, k = (int(v) for v in s.split("x"))
        a, b = torch.randn(m, k).to(DT[dn]), torch.randn(k, n).to(DT[dn])
        c = torch.empty(m, n, dtype=DT[dn])
        for _ in range(2):
            torch.matmul(a, b, out=c)
        t0 = time.perf_counter()
        torch.matmul(a, b, out=c)
        once = time.perf_counter() - t0
        ts = []
        for _ in range(max(5, min(50, int(args.target_s / max(once, 1e-9))))):
            t0 = time.perf_counter()
            torch.matmul(a, b, out=c)
            ts.append(time.perf_counter() - t0)
        t = statistics.median(ts)
        print(f"torch {torch.__version__} {dn:4s} {m},{n},{k} thr {args.threads} {t * 1e3:9.3f} ms "
              f"{2.0 * m * n * k / t / 1e9:8.1f} GFLOP/s", flush=True)
