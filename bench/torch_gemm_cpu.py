#!/usr/bin/env python3
"""PyTorch's CPU GEMM on the cases of `ampkit bench gemm` / `bench linear` (the PyTorch peer).

Each case is ampkit's column-major call D (m x n) = epilogue(op(A) op(B)) on the same memory
layouts: a column-major matrix is a row-major tensor of the transposed shape, so PyTorch computes
D^T (n x m) = op(B)^T op(A)^T, with the transposes as strided views (no copies), and the bias
(length m) along D^T's last dim. Epilogues as a PyTorch training step spells them:
  DEFAULT        torch.matmul
  BIAS           torch.addmm
  GELU_AUX_BIAS  torch.addmm, then F.gelu(approximate="tanh") (the pre-activation kept, as autograd does)
  DGELU_BGRAD    torch.matmul, aten.gelu_backward(approximate="tanh"), then the sum over n (fp32)
  BGRADB         torch.matmul, then op(B) summed over k (fp32)
  BGRADA         torch.matmul, then op(A) summed over k (fp32)
dtype f32 or bf16 (PyTorch's oneDNN/MKL path). Median of repetitions after two warm-up calls;
GFLOP/s = 2mnk / median.

Usage:
  python3 bench/torch_gemm_cpu.py --threads 1 --dtypes f32,bf16 --shapes 4096x4096x1024,...   # a table
  python3 bench/torch_gemm_cpu.py --threads 1 --json --cases f32:nn:4096:4096:1024:DEFAULT;...  # JSON lines
"""
import argparse
import json
import os
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--dtypes", default="f32,bf16")
ap.add_argument("--shapes", default="4096x4096x1024,4096x1024x4096,2048x3072x768,512x512x512,128x768x768")
ap.add_argument("--op", default="nn", help="op(A) op(B) for --shapes: nn, tn, nt, tt")
ap.add_argument("--epilogues", default="DEFAULT")
ap.add_argument("--cases", default="", help="dtype:op:m:n:k:EPILOGUE;... (overrides the three above)")
ap.add_argument("--target-s", type=float, default=0.5, help="time per case")
ap.add_argument("--min-samples", type=int, default=5)
ap.add_argument("--json", action="store_true", help="one JSON object per line and case")
args = ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(args.threads)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(args.threads)
torch.manual_seed(0)
DT = {"f32": torch.float32, "bf16": torch.bfloat16}

if args.cases:
    cases = [c.split(":") for c in args.cases.split(";") if c]
else:
    cases = [[d, args.op] + s.split("x") + [e] for d in args.dtypes.split(",") for s in args.shapes.split(",")
             for e in args.epilogues.split(",")]


def make_call(dn, op, m, n, k, epi):
    """The timed call: D^T = op(B)^T op(A)^T plus the epilogue, on buffers allocated once."""
    t = DT[dn]
    # A: column-major m x k (op N) is a row-major [k, m] tensor; k x m (op T) a row-major [m, k].
    a_store = torch.randn(k, m) if op[0] == "n" else torch.randn(m, k)
    b_store = torch.randn(n, k) if op[1] == "n" else torch.randn(k, n)
    a_store, b_store = a_store.to(t), b_store.to(t)
    at = a_store if op[0] == "n" else a_store.t()  # op(A)^T: [k, m]
    bt = b_store if op[1] == "n" else b_store.t()  # op(B)^T: [n, k]
    d = torch.empty(n, m, dtype=t)
    bias = torch.randn(m).to(t)
    aux = (torch.randn(n, m) * 2).to(t)
    if epi == "DEFAULT":
        return lambda: torch.matmul(bt, at, out=d)
    if epi == "BIAS":
        return lambda: torch.addmm(bias, bt, at, out=d)
    if epi == "GELU_AUX_BIAS":
        return lambda: F.gelu(torch.addmm(bias, bt, at, out=aux), approximate="tanh")
    if epi == "DGELU_BGRAD":
        def dgelu_bgrad():
            g = torch.ops.aten.gelu_backward(torch.matmul(bt, at, out=d), aux, approximate="tanh")
            return g.sum(dim=0, dtype=torch.float32)
        return dgelu_bgrad
    if epi == "BGRADB":
        return lambda: (torch.matmul(bt, at, out=d), bt.sum(dim=1, dtype=torch.float32))
    if epi == "BGRADA":
        return lambda: (torch.matmul(bt, at, out=d), at.sum(dim=0, dtype=torch.float32))
    return None


for dn, op, m, n, k, epi in cases:
    m, n, k = int(m), int(n), int(k)
    call = make_call(dn, op, m, n, k, epi) if dn in DT else None
    if call is None:
        if args.json:
            print(json.dumps({"dtype": dn, "ops": op, "m": m, "n": n, "k": k, "epilogue": epi,
                              "threads": args.threads, "skipped": "not measured by this script"}), flush=True)
        continue
    for _ in range(2):
        call()
    t0 = time.perf_counter()
    call()
    once = time.perf_counter() - t0
    ts = []
    for _ in range(max(args.min_samples, min(50, int(args.target_s / max(once, 1e-9))))):
        t0 = time.perf_counter()
        call()
        ts.append(time.perf_counter() - t0)
    t = statistics.median(ts)
    gflops = 2.0 * m * n * k / t / 1e9
    if args.json:
        print(json.dumps({"dtype": dn, "ops": op, "m": m, "n": n, "k": k, "epilogue": epi, "threads": args.threads,
                          "ms": t * 1e3, "gflops": gflops, "version": torch.__version__}), flush=True)
    else:
        print(f"torch {torch.__version__} {dn:4s} {op} {m},{n},{k} {epi} thr {args.threads} {t * 1e3:9.3f} ms "
              f"{gflops:8.1f} GFLOP/s", flush=True)
