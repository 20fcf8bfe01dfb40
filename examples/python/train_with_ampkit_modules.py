#!/usr/bin/env python3
"""A PyTorch training loop with ampkit's LayerNorm and Linear swapped in (docs/PYTHON.md).

Trains the same small model twice from the same initial weights, once with torch.nn's modules
and once with ampkit.torch's (fused bias/GELU GEMMs, bf16-capable norms, the backward under the
fp16 policy's guard), and prints both loss curves; exits non-zero if ampkit's does not follow.

    PYTHONPATH=build/python python3 examples/python/train_with_ampkit_modules.py
"""
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("SKIP: torch is not installed (Debian: python3-torch)")
    sys.exit(77)

import ampkit.torch as at


class Block(torch.nn.Module):
    """x + fc2(gelu(fc1(norm(x)))): a transformer's MLP half."""

    def __init__(self, nn, width, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x)), approximate="tanh"))


class Model(torch.nn.Module):
    def __init__(self, nn, inputs=16, width=64, hidden=128, classes=4, blocks=2):
        super().__init__()
        self.embed = nn.Linear(inputs, width)
        self.blocks = torch.nn.Sequential(*[Block(nn, width, hidden) for _ in range(blocks)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.norm(self.blocks(self.embed(x))))


def train(model, data, steps):
    x, y = data
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    losses = []
    for step in range(steps):
        batch = slice((step * 64) % 1024, (step * 64) % 1024 + 64)
        opt.zero_grad()
        loss = F.cross_entropy(model(x[batch]), y[batch])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    x = torch.randn(1024, 16)
    y = (x[:, :4].argmax(1) + (x[:, 4] > 1).long()) % 4
    ours = Model(at)
    theirs = Model(torch.nn)
    theirs.load_state_dict(ours.state_dict())
    a = train(ours, (x, y), 60)
    b = train(theirs, (x, y), 60)
    worst = 0.0
    for step, (la, lb) in enumerate(zip(a, b)):
        worst = max(worst, abs(la - lb))
        if step % 10 == 0 or step == len(a) - 1:
            print(f"step {step:3d}  loss ampkit {la:.5f}  torch {lb:.5f}")
    print(f"largest difference {worst:.2e}; loss {a[0]:.3f} -> {a[-1]:.3f}")
    return 0 if worst < 1e-3 and a[-1] < 0.7 * a[0] else 1


if __name__ == "__main__":
    sys.exit(main())
