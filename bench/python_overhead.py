#!/usr/bin/env python3
"""Per-call overhead of ampkit from Python (docs/PYTHON.md, "Overhead"): layer_norm_forward on a
tiny tensor (1 x 8 f32), timed as (a) the C++ call in a C++ loop over views built once, (b) the
binding ampkit._ampkit.layer_norm_forward with every output given (DLPack import of six operands
per call), (c) the package's ampkit.layer_norm_forward with out= and the statistics given, for
torch tensors and numpy arrays. Prints microseconds per call and the overhead over (a).

    PYTHONPATH=build/python python3 bench/python_overhead.py
"""
import timeit

import ampkit
from ampkit import _ampkit as _C


def per_call_us(fn, number):
    best = min(timeit.repeat(fn, number=number, repeat=5))
    return best / number * 1e6


def run(name, x, y, gamma, beta, mean, rstd, number=20000):
    cpp = min(_C._time_layer_norm_forward_cpp(x, y, gamma, beta, mean, rstd, number) for _ in range(5)) / 1e3
    binding = per_call_us(lambda: _C.layer_norm_forward(x, y, gamma=gamma, beta=beta, mean=mean, rstd=rstd), number)
    package = per_call_us(lambda: ampkit.layer_norm_forward(x, gamma, beta, out=y, mean=mean, rstd=rstd), number)
    print(f"{name:6s} C++ call {cpp:6.2f} us | binding {binding:6.2f} us (+{binding - cpp:5.2f}) | "
          f"package {package:6.2f} us (+{package - cpp:5.2f})")


def main():
    try:
        import torch
        torch.set_num_threads(1)
        x = torch.randn(1, 8)
        run("torch", x, torch.empty_like(x), torch.ones(8), torch.zeros(8), torch.empty(1), torch.empty(1))
    except ImportError:
        print("torch: not installed")
    try:
        import numpy as np
        x = np.random.default_rng(0).standard_normal((1, 8)).astype(np.float32)
        f32 = np.float32
        run("numpy", x, np.empty_like(x), np.ones(8, f32), np.zeros(8, f32), np.empty(1, f32), np.empty(1, f32))
    except ImportError:
        print("numpy: not installed")


if __name__ == "__main__":
    main()
