#!/usr/bin/env python3
"""PyTorch's causal attention on the GPU, the peer of `ampkit bench attention --device cuda`.

torch.nn.functional.scaled_dot_product_attention(is_causal=True) on q, k, v of shape
[B, H, T, d] taken as views of one packed [B, T, 3, H, d] buffer (as the training graph's QKV
projection gives them), bf16. Forward and forward+backward timed with CUDA events (torch_cuda_peer.time_ms:
the median of 5 samples, each enough calls for >= 25 ms), for PyTorch's default
choice and each of its flash (FlashAttention-2) and cuDNN backends forced; backward = (forward + backward) - forward. FLOPs counted
as ampkit's bench counts them: forward 4 B H T^2 d / 2, backward 2.5 times that.
Usage: python3 bench/torch_attention_peer.py [--seq 256,1024,2048,4096] [--tokens 16384]
       [--heads 12] [--head-dim 64]
"""
import argparse
import contextlib
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_cuda_peer import time_ms  # noqa: E402  (the peers' one timing loop)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seq", default="256,1024,2048,4096")
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--head-dim", type=int, default=64)
    a = p.parse_args()
    h, d = a.heads, a.head_dim
    print(json.dumps({"bench": "attention_torch", "torch": torch.__version__,
                      "device": torch.cuda.get_device_name(0)}))
    for t in (int(s) for s in a.seq.split(",")):
        b = max(1, a.tokens // t)
        qkv = torch.randn(b, t, 3, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        grad = torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16)
        fwd = 4.0 * b * h * t * t * d / 2.0

        def forward():
            with torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=True)

        def both():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            torch.autograd.grad(o, qkv, grad)

        for name in ("default", "FLASH_ATTENTION", "CUDNN_ATTENTION"):
            try:
                ctx = contextlib.nullcontext() if name == "default" else sdpa_kernel([getattr(SDPBackend, name)])
                with ctx:
                    f_ms = time_ms(forward)
                    fb_ms = time_ms(both)
            except Exception as e:  # a backend this build or GPU lacks
                print(json.dumps({"bench": "attention_torch", "seq": t, "backend": name, "error": str(e)[:200]}))
                continue
            b_ms = fb_ms - f_ms
            for pas, ms, fl in (("fwd", f_ms, fwd), ("bwd", b_ms, 2.5 * fwd)):
                print(json.dumps({"bench": "attention_torch", "backend": name, "seq": t, "batch": b, "heads": h,
                                  "head_dim": d, "pass": pas, "ms": round(ms, 4),
                                  "tflops": round(fl / (ms * 1e-3) / 1e12, 1)}), flush=True)


if __name__ == "__main__":
    main()
