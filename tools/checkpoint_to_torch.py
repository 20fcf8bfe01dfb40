#!/usr/bin/python3
"""An `ampkit train` checkpoint as a PyTorch nn.Module (docs/TRAIN.md, "Into PyTorch").

Needs only torch and numpy (Debian's python3-torch, python3-numpy): the safetensors file is
parsed here (8-byte little-endian header length, a JSON header, the tensors' bytes), so the
`safetensors` package is not needed.

    import checkpoint_to_torch as c2t             # tools/ on sys.path
    model, vocab = c2t.to_torch("run.safetensors")  # model.eval(); vocab: Vocabulary
    logits = model(torch.tensor([vocab.encode("\\nThe ")]))   # [batch, seq, vocab]

or from the shell:

    /usr/bin/python3 tools/checkpoint_to_torch.py run.safetensors --out run.pt --prompt "The "

The module computes what ampkit's graph computes in fp32 (src/train/models.cpp): for the GPT,
token + position embeddings, `depth` pre-norm blocks (LayerNorm eps 1e-5, causal attention on a
packed q|k|v projection, heads splitting each of q, k, v into contiguous slices, scale
1/sqrt(head dim); MLP 4*width with tanh GELU), a final LayerNorm and an untied, bias-free head;
for the token MLP, embedding -> `depth` x (Linear + tanh GELU) -> Linear.
"""

import argparse
import json
import math
import struct
import sys

import numpy as np

_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
}


class CheckpointError(ValueError):
    """A file that is not a readable ampkit checkpoint (the message names the file and why)."""


def read_safetensors(path):
    """Returns (tensors: name -> numpy array, metadata: dict of str) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise CheckpointError(f"{path}: {len(data)} bytes, too short for a safetensors file (8-byte header length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise CheckpointError(f"{path}: header length {n} runs past the end of the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: the safetensors header is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: the safetensors header is not a JSON object")
    meta = header.pop("__metadata__", {}) or {}
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, t in header.items():
        try:
            dtype = _DTYPES[t["dtype"]]
            shape = [int(s) for s in t["shape"]]
            begin, end = (int(o) for o in t["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"{path}: tensor '{name}': unknown dtype or malformed entry {t}") from None
        count = math.prod(shape)
        if not 0 <= begin <= end <= len(body) or end - begin != count * np.dtype(dtype).itemsize:
            raise CheckpointError(f"{path}: tensor '{name}': byte range [{begin}, {end}) does not hold "
                                  f"{t['dtype']} {shape} inside the {len(body)}-byte data section")
        tensors[name] = np.frombuffer(body[begin:end], dtype=dtype).reshape(shape).copy()
    return tensors, meta


class Vocabulary:
    """ampkit's character vocabulary: token id i is the i-th character of the metadata string."""

    def __init__(self, chars):
        self.chars = chars
        self.ids = {c: i for i, c in enumerate(chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        missing = sorted({c for c in text if c not in self.ids})
        if missing:
            raise ValueError(f"encode: characters {missing!r} are not in the model's vocabulary of {len(self)}")
        return [self.ids[c] for c in text]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


def _modules():
    import torch
    from torch import nn
    import torch.nn.functional as F

    def gelu(x):
        return F.gelu(x, approximate="tanh")

    class Block(nn.Module):
        def __init__(self, width, heads, hidden):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(width, eps=1e-5)
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.ln2 = nn.LayerNorm(width, eps=1e-5)
            self.fc1 = nn.Linear(width, hidden)
            self.fc2 = nn.Linear(hidden, width)

        def forward(self, x):
            b, t, d = x.shape
            hd = d // self.heads
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
            s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1) @ v
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        """ampkit's GPT (`--model gpt`); forward(tokens [B, T] int64, T <= context) -> logits."""

        def __init__(self, vocab, context, width, heads, depth):
            super().__init__()
            self.context = context
            self.tok_emb = nn.Embedding(vocab, width)
            self.pos_emb = nn.Embedding(context, width)
            self.h = nn.ModuleList(Block(width, heads, 4 * width) for _ in range(depth))
            self.ln_f = nn.LayerNorm(width, eps=1e-5)
            self.head = nn.Linear(width, vocab, bias=False)

        def forward(self, tokens):
            t = tokens.shape[1]
            if t > self.context:
                raise ValueError(f"GPT.forward: {t} tokens, more than the context of {self.context}")
            x = self.tok_emb(tokens) + self.pos_emb(torch.arange(t, device=tokens.device))
            for block in self.h:
                x = block(x)
            return self.head(self.ln_f(x))

    class TokenMLP(nn.Module):
        """ampkit's token MLP (`--model mlp`): no mixing across positions."""

        def __init__(self, vocab, width, hidden, depth):
            super().__init__()
            self.tok_emb = nn.Embedding(vocab, width)
            self.l = nn.ModuleList(nn.Linear(width if i == 0 else hidden, hidden) for i in range(depth))
            self.head = nn.Linear(hidden, vocab)

        def forward(self, tokens):
            x = self.tok_emb(tokens)
            for layer in self.l:
                x = gelu(layer(x))
            return self.head(x)

    return torch, GPT, TokenMLP


def torch_name(name):
    """The nn.Module parameter name of an ampkit tensor name ("h0.attn.qkv.w" -> "h.0.qkv.weight")."""
    parts = name.split(".")
    out = []
    for p in parts:
        if p in ("attn", "mlp"):
            continue
        if len(p) > 1 and p[0] in "hl" and p[1:].isdigit():
            out += [p[0], p[1:]]
        else:
            out.append({"w": "weight", "b": "bias", "g": "weight"}.get(p, p))
    if out[-1] not in ("weight", "bias"):  # tok_emb, pos_emb: embedding tables
        out.append("weight")
    return ".".join(out)


def to_torch(path):
    """Loads an `ampkit train` checkpoint: returns (model in eval mode, Vocabulary)."""
    tensors, meta = read_safetensors(path)
    if meta.get("format") != "ampkit-train-1":
        raise CheckpointError(f"{path}: metadata format is {meta.get('format')!r}, expected 'ampkit-train-1' "
                              "(an `ampkit train` checkpoint)")
    try:
        config = json.loads(meta["config"])
        vocab = Vocabulary(meta["vocabulary"])
    except (KeyError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: metadata 'config' or 'vocabulary' missing or malformed: {e}") from None
    torch, GPT, TokenMLP = _modules()
    kind = config.get("model")
    if kind == "gpt":
        model = GPT(len(vocab), config["context"], config["width"], config["heads"], config["depth"])
    elif kind == "mlp":
        hidden = tensors["l0.w"].shape[0] if "l0.w" in tensors else config["width"]
        model = TokenMLP(len(vocab), config["width"], hidden, config["depth"])
    else:
        raise CheckpointError(f"{path}: config model is {kind!r}, expected 'gpt' or 'mlp'")
    weights = {torch_name(k): torch.from_numpy(v) for k, v in tensors.items() if ":" not in k}
    expected = model.state_dict()
    missing = sorted(set(expected) - set(weights))
    extra = sorted(set(weights) - set(expected))
    if missing or extra:
        raise CheckpointError(f"{path}: tensors do not match the {kind} of its config: missing {missing}, extra {extra}")
    for k, v in weights.items():
        if tuple(v.shape) != tuple(expected[k].shape):
            raise CheckpointError(f"{path}: tensor for '{k}' has shape {list(v.shape)}, the model "
                                  f"expects {list(expected[k].shape)}")
    model.load_state_dict(weights)
    return model.eval(), vocab


def main(argv=None):
    p = argparse.ArgumentParser(description="Load an ampkit train checkpoint as a PyTorch nn.Module.")
    p.add_argument("checkpoint")
    p.add_argument("--out", help="save the module's state_dict (torch.save) to this file")
    p.add_argument("--prompt", help="print the greedy continuation (100 characters) of this prompt")
    args = p.parse_args(argv)
    try:
        model, vocab = to_torch(args.checkpoint)
    except (CheckpointError, OSError) as e:
        print(f"checkpoint_to_torch: error: {e}", file=sys.stderr)
        return 1
    import torch
    print(f"{type(model).__name__}: {sum(p.numel() for p in model.parameters())} parameters, "
          f"vocabulary of {len(vocab)} characters")
    if args.out:
        torch.save(model.state_dict(), args.out)
    if args.prompt is not None:
        # ampkit's sampling context starts with a newline (token 0 where the text has none).
        ids = [vocab.ids.get("\n", 0)] + vocab.encode(args.prompt)
        with torch.no_grad():
            for _ in range(100):
                window = ids[-getattr(model, "context", len(ids)):]
                ids.append(int(model(torch.tensor([window]))[0, -1].argmax()))
        print(vocab.decode(ids[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
