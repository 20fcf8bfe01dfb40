#!/usr/bin/env python3
"""PyTorch on the same GPU and shapes as `ampkit bench gemm|norm --device cuda` (issue 11).

GEMM (m x n x k, the Linear forward: D = W X^T with W [m, k], X [n, k]):
  DEFAULT        torch.matmul(x, w.T)
  BIAS           F.linear(x, w, b)
  GELU_AUX_BIAS  pre = F.linear(x, w, b); gelu(pre, approximate='tanh')  (pre kept: the aux)
  DGELU_BGRAD    g = aten.gelu_backward(dy @ w2, pre, 'tanh'); g.sum(0)
  BGRADB         F.linear(x, w) and x.sum(1)
Norms: F.layer_norm / aten.native_layer_norm_backward, F.rms_norm / its autograd backward, for
f32, bf16, f16 and bf16/f16 activations with f32 parameters (recorded as refused when PyTorch
refuses). GB/s counted as ampkit counts them. Device-to-device copy bandwidth measured first.
Timing: CUDA events around a loop of calls after warm-up; median of 5 samples.
Writes one JSON object per line to stdout (and to $OUT/torch_peer.jsonl when OUT is set).
"""
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

DEV = torch.device("cuda")
OUT = os.environ.get("OUT")
SINK = open(os.path.join(OUT, "torch_peer.jsonl"), "w") if OUT else None


def emit(obj):
    line = json.dumps(obj)
    print(line, flush=True)
    if SINK:
        SINK.write(line + "\n")
        SINK.flush()


def time_ms(fn, min_ms=25.0, samples=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    calls = 1
    while True:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        if ms >= min_ms or calls >= 1 << 16:
            break
        calls = max(calls + 1, int(calls * min_ms * 1.2 / max(ms, 1e-3)))
    per = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        per.append(start.elapsed_time(end) / calls)
    return statistics.median(per)


DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def copy_gbps():
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device=DEV).fill_(1)
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src), min_ms=50.0)
    return 2.0 * n / (ms * 1e-3) / 1e9


def bench_gemm(shapes, dtypes):
    for (m, n, k) in shapes:
        for name in dtypes:
            t = DTYPES[name]
            w = torch.randn(m, k, device=DEV, dtype=t)
            x = torch.randn(n, k, device=DEV, dtype=t)
            b = torch.randn(m, device=DEV, dtype=t)
            dy = torch.randn(n, k, device=DEV, dtype=t)
            w2 = torch.randn(k, m, device=DEV, dtype=t)
            pre = torch.randn(n, m, device=DEV, dtype=t)
            cases = {
                "DEFAULT": lambda: torch.matmul(x, w.T),
                "BIAS": lambda: F.linear(x, w, b),
                "GELU_AUX_BIAS": lambda: F.gelu(F.linear(x, w, b), approximate="tanh"),
                "DGELU_BGRAD": lambda: torch.ops.aten.gelu_backward(dy @ w2, pre, approximate="tanh").sum(0),
                "BGRADB": lambda: (F.linear(x, w), x.sum(1)),
            }
            plain = None
            for epi, fn in cases.items():
                try:
                    ms = time_ms(fn)
                except Exception as e:  # noqa: BLE001 - recorded, not fatal
                    emit({"peer": "torch", "bench": "gemm", "m": m, "n": n, "k": k, "dtype": name, "epilogue": epi, "error": str(e)[:200]})
                    continue
                plain = ms if epi == "DEFAULT" else plain
                emit({"peer": "torch", "bench": "gemm", "m": m, "n": n, "k": k, "dtype": name, "epilogue": epi, "ms": ms,
                      "tflops": 2.0 * m * n * k / (ms * 1e-3) / 1e12, "over_plain": (ms / plain - 1.0) if plain else None})
            del w, x, b, dy, w2, pre
            torch.cuda.empty_cache()


MIXES = [("f32", "f32", "f32"), ("bf16", "bf16", "bf16"), ("f16", "f16", "f16"), ("bf16/f32", "bf16", "f32"), ("f16/f32", "f16", "f32")]


def bench_norm(shapes, copy):
    for (rows, n) in shapes:
        for mix, xt, pt in MIXES:
            X, P = DTYPES[xt], DTYPES[pt]
            xs, ps = torch.finfo(X).bits // 8, torch.finfo(P).bits // 8
            x = torch.randn(rows, n, device=DEV, dtype=X)
            dy = torch.randn(rows, n, device=DEV, dtype=X)
            w = torch.randn(n, device=DEV, dtype=P)
            b = torch.randn(n, device=DEV, dtype=P)
            act, par, stat = rows * n * xs, n * ps, rows * 4
            for kind in ("layer", "rms"):
                params = 1 if kind == "rms" else 2
                stats = 1 if kind == "rms" else 2
                fwd_bytes = 2 * act + params * par + stats * stat
                bwd_bytes = 3 * act + (1 + params) * par + stats * stat
                rec = {"peer": "torch", "bench": "norm", "kind": kind, "mix": mix, "rows": rows, "n": n}
                try:
                    if kind == "layer":
                        fwd = lambda: F.layer_norm(x, (n,), w, b, 1e-5)
                        _, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], w, b, 1e-5)
                        bwd = lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean, rstd, w, b, [True, True, True])
                    else:
                        fwd = lambda: F.rms_norm(x, (n,), w, 1e-5)
                        xg = x.detach().requires_grad_(True)
                        wg = w.detach().requires_grad_(True)
                        y = F.rms_norm(xg, (n,), wg, 1e-5)
                        bwd = lambda: torch.autograd.grad(y, (xg, wg), dy, retain_graph=True)
                    for pass_, fn, nbytes in (("fwd", fwd, fwd_bytes), ("bwd", bwd, bwd_bytes)):
                        ms = time_ms(fn)
                        gbps = nbytes / (ms * 1e-3) / 1e9
                        emit(dict(rec, **{"pass": pass_, "ms": ms, "gbps": gbps, "of_copy": gbps / copy}))
                except Exception as e:  # noqa: BLE001 - PyTorch refuses some mixes
                    emit(dict(rec, **{"refused": str(e).splitlines()[0][:200]}))
            del x, dy, w, b
            torch.cuda.empty_cache()


def main():
    quick = "--quick" in sys.argv
    copy = copy_gbps()
    emit({"peer": "torch", "bench": "meta", "torch": torch.__version__, "cuda": torch.version.cuda,
          "device": torch.cuda.get_device_name(0), "copy_gbps": copy})
    gemm_shapes = [(2048, 2048, 2048)] if quick else [(8192, 8192, 8192), (4096, 16384, 1024), (1024, 16384, 4096), (12288, 8192, 3072)]
    norm_shapes = [(16384, 4096)] if quick else [(16384, 4096), (8192, 8192), (32768, 1024), (4096, 12288)]
    bench_gemm(gemm_shapes, ["bf16", "f16"])
    bench_norm(norm_shapes, copy)


if __name__ == "__main__":
    main()
