#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""DPZero fine-tuning of a user's own PyTorch model with dpzo.torch (docs/plugin.md).

The model, the data set and the DataLoader are plain PyTorch; dpzo supplies the noise
profile, the Poisson batches, the zeroth-order step and the ledger. Data: Fashion-MNIST
from Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).

    python3 examples/plugin_fmnist.py --epsilon 3 --steps 3000
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch

import dpzo
import dpzo.torch as dt

FMNIST = "/usr/share/datasets/fashion-mnist"


def load(split):
    prefix = "train" if split == "train" else "t10k"
    with gzip.open(os.path.join(FMNIST, f"{prefix}-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(FMNIST, f"{prefix}-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    return torch.utils.data.TensorDataset(torch.from_numpy(x.astype(np.float32) / 255),
                                          torch.from_numpy(y.astype(np.int64)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--clip", type=float, default=20.0)
    ap.add_argument("--checkpoint", default="")
    args = ap.parse_args()
    torch.manual_seed(0)
    train, test = load("train"), load("test")
    n, B, T = len(train), args.batch_size, args.steps

    # 1. the noise profile for the plan: Poisson rate B/n, T steps, the clip C
    profile = dpzo.gaussian_profile(epsilon=args.epsilon, delta=1 / n, sampling_rate=B / n,
                                    steps=T, clip=args.clip)
    profile.save("plugin-profile.json")

    # 2. the user's model, unchanged
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))

    # 3. the optimizer: dpzo's step, directions, privacy object and ledger
    opt = dt.ZOOptimizer(model, algorithm="dpzero", profile="plugin-profile.json",
                         clip=args.clip, lr=args.lr, perturbation=1e-3, steps=T,
                         batch_size=B, dataset_size=n, seed=0)
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        print(f"resumed at step {opt.steps_done}, epsilon spent {opt.epsilon_spent():.4f}")

    # 4. Poisson batches through the usual DataLoader
    loader = torch.utils.data.DataLoader(train, batch_sampler=opt.batch_sampler())
    start = time.time()
    for x, y in loader:
        loss = opt.step(lambda: torch.nn.functional.cross_entropy(model(x), y,
                                                                  reduction="none"))
        if opt.steps_done % 1000 == 0 or opt.steps_done == T:
            print(f"step {opt.steps_done:5d}  loss {loss:.4f}  "
                  f"epsilon {opt.epsilon_spent():.4f} of {opt.budget():.4f}")
            if args.checkpoint:
                torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()},
                           args.checkpoint)
    with torch.no_grad():
        acc = (model(test.tensors[0]).argmax(1) == test.tensors[1]).float().mean().item()
    print(f"test accuracy {acc:.4f}; epsilon {opt.epsilon_spent():.4f} at delta "
          f"{opt.delta():.3g}; {time.time() - start:.1f} s for {T} steps")


if __name__ == "__main__":
    main()
