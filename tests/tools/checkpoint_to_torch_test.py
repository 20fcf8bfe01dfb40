#!/usr/bin/python3
"""CTest checkpoint_to_torch: tools/checkpoint_to_torch.py gives the logits ampkit computes.

Trains a small fp32 GPT briefly with the built `ampkit` (argv[1]) on a generated one-document
text, loads the checkpoint with the converter, recomputes the final validation loss from the
documented recipe (docs/TRAIN.md: the last tenth of a one-document text; windows evenly spread)
and compares it with the loss ampkit recorded (`run:validation_loss`). Then the greedy sampling
of `ampkit sample --temperature 0` against the module's logits, and bad input. Exit 77 (skip,
saying why) without torch.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("SKIP: torch is not installed (Debian: python3-torch)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import checkpoint_to_torch as c2t  # noqa: E402

AMPKIT = sys.argv[1]
WIDTH, HEADS, DEPTH, CONTEXT, BATCH = 32, 2, 2, 32, 8


def text():
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away", "from", "home"]
    state, out = 12345, []
    for i in range(4000):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append(words[(state >> 33) % len(words)])
        if i % 11 == 10:
            out.append(".\n")
    return " ".join(out)


def validation_windows(ids, rows, context, max_tokens=32768):
    # src/train/corpus.cpp validation_batches: count batches of rows windows, evenly spread.
    count = max(1, max_tokens // (rows * context))
    windows = rows * count
    last_start = len(ids) - context - 1
    return [0 if windows == 1 else w * last_start // (windows - 1) for w in range(windows)]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        data, ck = os.path.join(tmp, "data.txt"), os.path.join(tmp, "run.safetensors")
        body = text()
        with open(data, "w") as f:
            f.write(body)
        subprocess.run([AMPKIT, "train", "--data", data, "--precision", "fp32", "--width", str(WIDTH), "--heads",
                        str(HEADS), "--depth", str(DEPTH), "--context", str(CONTEXT), "--batch", str(BATCH),
                        "--steps", "60", "--threads", "2", "--sample-tokens", "0", "--checkpoint", ck],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        model, vocab = c2t.to_torch(ck)
        tensors, meta = c2t.read_safetensors(ck)
        recorded = float(tensors["run:validation_loss"][-1, 1])

        # The data fingerprint recipe of docs/TRAIN.md: FNV-1a 64 over path, NUL, bytes.
        h = 0xcbf29ce484222325
        for byte in data.encode() + b"\0" + body.encode():
            h = ((h ^ byte) * 0x100000001b3) % 2**64
        if meta["data_fingerprint"] != f"{h:016x}":
            failures.append(f"data_fingerprint {meta['data_fingerprint']}, the documented recipe gives {h:016x}")

        # One document: the last tenth of the text (in code points) is validation text.
        held_out = len(body) // 10
        ids = vocab.encode(body[len(body) - held_out:])
        starts = validation_windows(ids, BATCH, CONTEXT)
        x = torch.tensor([ids[s:s + CONTEXT] for s in starts])
        y = torch.tensor([ids[s + 1:s + 1 + CONTEXT] for s in starts])
        with torch.no_grad():
            logits = model(x)
            loss = float(torch.nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1)))
        # Derived tolerance: the logits go through 2 + 4 * depth reductions of at most 4 * width
        # terms in fp32 (unit roundoff 2^-24), each error growing at most linearly with the terms
        # (in practice like their square root); the loss is a mean of log-softmaxes, Lipschitz 2
        # in the logits. A wrong layout (q/k/v order, head split, transposed weight) moves it by > 0.1.
        tol = 2 * (2 + 4 * DEPTH) * (4 * WIDTH) * 2.0**-24 * max(1.0, float(logits.abs().max()))
        print(f"validation loss: ampkit {recorded:.6f}, torch {loss:.6f}, |diff| {abs(recorded - loss):.2e}, "
              f"tolerance {tol:.2e}")
        if not abs(recorded - loss) <= tol:
            failures.append("validation loss differs beyond the tolerance")

        # Greedy sampling: every token ampkit chose is the module's argmax, up to the tolerance.
        out = subprocess.run([AMPKIT, "sample", "--checkpoint", ck, "--prompt", "the cat", "--temperature", "0",
                              "--tokens", "40"], check=True, capture_output=True, text=True).stdout
        continuation = out.split("\n")[0][len("the cat"):] if out.startswith("the cat") else None
        if continuation is None:
            failures.append(f"ampkit sample printed {out!r}")
        else:
            seq = [vocab.ids["\n"]] + vocab.encode("the cat")
            with torch.no_grad():
                for ch in continuation:
                    row = model(torch.tensor([seq[-CONTEXT:]]))[0, -1]
                    chosen = vocab.ids[ch]
                    if float(row.max() - row[chosen]) > tol:
                        failures.append(f"sample chose {ch!r}, the module's logit for it is "
                                        f"{float(row.max() - row[chosen]):.3g} below the best")
                        break
                    seq.append(chosen)
            print(f"greedy continuation {continuation!r}: each token the module's argmax")

        # Bad input: clear errors naming the file.
        bad = os.path.join(tmp, "bad.safetensors")
        for content, want in [(b"\x01", "too short"), (b"\xff" * 8 + b"{}", "runs past the end"),
                              (b"\x02\0\0\0\0\0\0\0[]", "not a JSON object"),
                              (b"\x02\0\0\0\0\0\0\0{}", "format is None")]:
            with open(bad, "wb") as f:
                f.write(content)
            try:
                c2t.to_torch(bad)
                failures.append(f"{content!r}: accepted")
            except c2t.CheckpointError as e:
                if want not in str(e) or bad not in str(e):
                    failures.append(f"{content!r}: message {e}")
        r = subprocess.run([sys.executable, c2t.__file__, bad], capture_output=True, text=True)
        if r.returncode != 1 or "checkpoint_to_torch: error:" not in r.stderr:
            failures.append(f"the command on a bad file: exit {r.returncode}, {r.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
