#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch's ZO step against MeZO's and against the two forwards it needs, in one run.

    python3 bench/zo_step.py [--device cpu|cuda] [--model minilm|roberta-base|roberta-large|
                              opt-1.3b] [--dtype float32|bfloat16|float16] [--batch 64]
                              [--seq 128] [--reps 5] [--json FILE]

Random-initialised transformers of each size (transformers' BertModel / RobertaModel /
OPTModel from a config, no hub), a fixed batch of random tokens, a sequence-classification
style loss (mean-pooled hidden state, a linear head, cross-entropy per example). Three
timings, each the median of --reps after one warm-up, the repetitions interleaved, in one
process:

  forwards  two forward passes under torch.no_grad (the floor of any ZO step);
  dpzo      ZOOptimizer(algorithm="mezo").step: out-of-place perturbation layer by layer,
            dpzo's kernels, one update pass;
  mezo      MeZO's step as its repository writes it (princeton-nlp/MeZO,
            large_models/trainer.py: reseed torch's generator, then per parameter tensor
            z = torch.normal(...) in the parameter's dtype and param.data = param.data +
            s eps z, for s = +1, -2, +1 around the two forwards, then the update
            regenerating z: four passes), re-implemented here from that description.

Prints each as seconds and as a ratio to the two forwards, the peak memory over the model's
own (CUDA: torch.cuda.max_memory_allocated; CPU: not measured), and the machine (lscpu model
and flags, or the GPU and driver).
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

import torch

import dpzo.torch as dt

SIZES = {  # name: (family, config keywords)
    "minilm": ("bert", dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6,
                            num_attention_heads=12, intermediate_size=1536)),
    "roberta-base": ("roberta", dict(vocab_size=50265, hidden_size=768, num_hidden_layers=12,
                                     num_attention_heads=12, intermediate_size=3072,
                                     max_position_embeddings=514)),
    "roberta-large": ("roberta", dict(vocab_size=50265, hidden_size=1024,
                                      num_hidden_layers=24, num_attention_heads=16,
                                      intermediate_size=4096, max_position_embeddings=514)),
    "opt-1.3b": ("opt", dict(vocab_size=50272, hidden_size=2048, num_hidden_layers=24,
                             ffn_dim=8192, num_attention_heads=32,
                             max_position_embeddings=2048)),
}


class Classifier(torch.nn.Module):
    def __init__(self, body: torch.nn.Module, hidden: int, classes: int = 2) -> None:
        super().__init__()
        self.body = body
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.body(input_ids=ids).last_hidden_state
        return self.head(h.mean(1))


def build(name: str, dtype: torch.dtype, device: str) -> Classifier:
    import transformers
    family, kw = SIZES[name]
    if family == "bert":
        body = transformers.BertModel(transformers.BertConfig(**kw), add_pooling_layer=False)
    elif family == "roberta":
        body = transformers.RobertaModel(transformers.RobertaConfig(**kw),
                                         add_pooling_layer=False)
    else:
        body = transformers.OPTModel(transformers.OPTConfig(**kw))
    model = Classifier(body, kw["hidden_size"]).to(device=device, dtype=dtype).eval()
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def per_example(model: Classifier, ids: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(model(ids).float(), y, reduction="none")


def mezo_step(model: Classifier, ids: torch.Tensor, y: torch.Tensor, eps: float, lr: float,
              seed: int) -> float:
    params = [p for p in model.parameters() if p.requires_grad]

    def perturb(scale: float) -> None:
        torch.manual_seed(seed)
        for p in params:
            z = torch.normal(mean=0, std=1, size=p.data.size(), device=p.data.device,
                             dtype=p.data.dtype)
            p.data = p.data + scale * z * eps

    with torch.no_grad():
        perturb(1)
        l1 = per_example(model, ids, y).mean()
        perturb(-2)
        l2 = per_example(model, ids, y).mean()
        g = ((l1 - l2) / (2 * eps)).item()
        perturb(1)
        torch.manual_seed(seed)
        for p in params:
            z = torch.normal(mean=0, std=1, size=p.data.size(), device=p.data.device,
                             dtype=p.data.dtype)
            p.data = p.data - lr * g * z
    return g


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def timed(fns, device: str, reps: int):
    """Median seconds of each function, the repetitions interleaved (f, d, m, f, d, m, ...)
    so that a shared machine's changing load touches all of them alike; one warm-up each."""
    out = [[] for _ in fns]
    for fn in fns:
        fn()
    sync(device)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            sync(device)
            out[i].append(time.perf_counter() - t0)
    return [statistics.median(x) for x in out]


def machine(device: str) -> str:
    if device == "cuda":
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
        return f"{torch.cuda.get_device_name()} (driver {drv}, CUDA {torch.version.cuda})"
    try:
        info = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next(ln.split(":", 1)[1].strip() for ln in info.splitlines()
                     if ln.startswith("Model name"))
        flags = next(ln.split(":", 1)[1].split() for ln in info.splitlines()
                     if ln.startswith("Flags"))
        simd = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
        return f"{model}, {torch.get_num_threads()} threads, {' '.join(simd)}"
    except (OSError, StopIteration):
        return platform.processor()


def peak(fn, device: str) -> float:
    if device != "cuda":
        return float("nan")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--model", default="minilm", choices=sorted(SIZES))
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(0)
    model = build(a.model, dtype, a.device)
    n_params = sum(p.numel() for p in model.parameters())
    largest = max(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    vocab = SIZES[a.model][1]["vocab_size"]
    ids = torch.randint(4, vocab, (a.batch, a.seq), device=a.device)
    y = torch.randint(0, 2, (a.batch,), device=a.device)
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=1e-7, steps=10**6,
                         batch_size=a.batch, dataset_size=10**6, perturbation=1e-3, seed=1)

    def forwards() -> None:
        with torch.no_grad():
            per_example(model, ids, y)
            per_example(model, ids, y)

    def dpzo_step() -> None:
        opt.step(lambda: per_example(model, ids, y))

    def mezo() -> None:
        mezo_step(model, ids, y, 1e-3, 1e-7, 1)

    res = {"model": a.model, "params": n_params, "dtype": a.dtype, "batch": a.batch,
           "seq": a.seq, "device": a.device, "machine": machine(a.device), "reps": a.reps}
    res["peak_mib"] = {"forwards": peak(forwards, a.device), "dpzo": peak(dpzo_step, a.device),
                       "mezo": peak(mezo, a.device)}
    res["largest_tensor_mib"] = largest
    f, d, m = timed([forwards, dpzo_step, mezo], a.device, a.reps)
    res["seconds"] = {"forwards": f, "dpzo": d, "mezo": m}
    res["ratio_to_forwards"] = {"dpzo": d / f, "mezo": m / f}
    print(f"{a.model} ({n_params / 1e6:.1f}M, {a.dtype}), batch {a.batch} x {a.seq}, "
          f"{res['machine']}")
    print(f"  two forwards {f * 1e3:9.1f} ms")
    print(f"  dpzo step    {d * 1e3:9.1f} ms  {d / f:5.2f}x the forwards")
    print(f"  MeZO step    {m * 1e3:9.1f} ms  {m / f:5.2f}x the forwards  "
          f"(dpzo {m / d:.2f}x faster)")
    if a.device == "cuda":
        pk = res["peak_mib"]
        print(f"  peak over the model: forwards {pk['forwards']:.0f} MiB, dpzo {pk['dpzo']:.0f} "
              f"MiB, MeZO {pk['mezo']:.0f} MiB (largest tensor {largest:.0f} MiB)")
    if a.json:
        with open(a.json, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
