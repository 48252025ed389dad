# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch.hf.ZOTrainer: Hugging Face's Trainer with the DP zeroth-order step.

A tiny randomly initialised BertForSequenceClassification (vocabulary 100, hidden 16, 2
layers, 2 heads; no hub) on a synthetic token data set. The trainer must run the
optimizer's steps on the optimizer's batches (the same parameters bit for bit as the
optimizer driven by hand), log the ledger's epsilon, keep the ledger across a checkpoint
and a resume, stop at the end of the plan, and refuse what it cannot do.
"""
from __future__ import annotations

import copy
import math
import os
import re
import shutil

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate", reason="transformers.Trainer needs accelerate "
                    "(python/requirements-test.txt)")

import dpzo  # noqa: E402
import dpzo.torch as dt  # noqa: E402
from dpzo.torch.hf import ZOTrainer, per_example_loss  # noqa: E402

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()

N, L = 48, 8
SAMPLING_SEED = 1234567


class Tokens(torch.utils.data.Dataset):
    """N rows of L random token ids; the label is the first token's parity."""

    def __init__(self, n: int = N) -> None:
        g = torch.Generator().manual_seed(7)
        self.ids = torch.randint(1, 100, (n, L), generator=g)
        self.labels = self.ids[:, 0] % 2

    def __len__(self) -> int:
        return self.ids.shape[0]

    def __getitem__(self, i: int):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(L, dtype=torch.long),
                "labels": self.labels[i]}


def bert(seed: int = 0):
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=32,
                                  max_position_embeddings=32, num_labels=2)
    return transformers.BertForSequenceClassification(cfg)


def targs(tmp_path, **kw):
    base = dict(output_dir=str(tmp_path / "out"), max_steps=5, per_device_train_batch_size=6,
                learning_rate=1e-3, lr_scheduler_type="constant", logging_steps=1,
                report_to="none", save_strategy="no", use_cpu=True, seed=3,
                disable_tqdm=True)
    base.update(kw)
    return transformers.TrainingArguments(**base)


def fix_sampling_seed(opt, seed=SAMPLING_SEED):
    """The same batches every run: the optimizer's (secret) sampling seed set to a known one."""
    s = opt.state_dict()
    s["dpzo"]["sampling_seed"] = seed
    opt.load_state_dict(s)


def make_profile(tmp_path, steps, q, clip=1.0):
    p = dpzo.gaussian_profile(epsilon=2.0, delta=1e-5, sampling_rate=q, steps=steps, clip=clip,
                              created="2026-11-27T00:00:00Z")
    path = tmp_path / "profile.json"
    p.save(str(path))
    return str(path), p


def params(model):
    return [p.detach().clone() for p in model.parameters()]


def test_mezo_runs_the_zo_step_and_logs_the_loss(tmp_path):
    model = bert()
    before = params(model)
    tr = ZOTrainer(model=model, args=targs(tmp_path), train_dataset=Tokens(),
                   dpzo_algorithm="mezo", perturbation=1e-3)
    # the known seed's batches: with the secret one a batch is empty with probability
    # (1 - 6/48)^48 = 0.16% a step, its loss NaN, which the Trainer's logging_nan_inf_filter
    # logs as 0 (one run in about 120 failed the range below that way)
    fix_sampling_seed(tr.zo_optimizer)
    out = tr.train()
    assert tr.zo_optimizer.steps_done == 5 and out.global_step == 5
    changed = [not torch.equal(a, b) for a, b in zip(before, model.parameters())]
    assert all(changed)  # every tuned tensor moved (a Gaussian direction touches all)
    steps = [r for r in tr.state.log_history if "loss" in r]
    assert [r["step"] for r in steps] == [1, 2, 3, 4, 5]
    assert all(math.isfinite(r["loss"]) and 0.3 < r["loss"] < 1.5 for r in steps)
    assert all("grad_norm" not in r and "epsilon" not in r for r in tr.state.log_history)
    assert all(r["learning_rate"] == 1e-3 for r in steps)


def known_noise(t, q):
    """Tests only (ZOOptimizer._noise_override): a fixed noise sequence instead of the
    CSPRNG's, so that a private run can be compared bit for bit."""
    return [0.05 * math.sin(1.0 + 7 * t + k) for k in range(q)]


@pytest.mark.parametrize("algorithm,schedule,queries,B", [
    ("mezo", "constant", 1, 6), ("mezo", "linear", 2, 16), ("dpzero", "cosine", 2, 6)])
def test_same_parameters_as_the_optimizer_by_hand(tmp_path, algorithm, schedule, queries, B):
    """ZOTrainer = ZOOptimizer driven by hand with the same seeds, batches and closure,
    bit for bit (dpzero: with a known noise sequence in both). With B = 16 of 48 rows the 6
    steps are 2 epochs of the Trainer (the sampler starts again from the ledger's step)."""
    ds = Tokens()
    kw = dict(perturbation=1e-3, queries=queries)
    if algorithm == "dpzero":
        prof_path, _ = make_profile(tmp_path, steps=6, q=B / N, clip=0.5)
        kw.update(profile=prof_path, clip=0.5)
    m_tr, m_hand = bert(), bert()
    for a, b in zip(m_tr.parameters(), m_hand.parameters()):
        assert torch.equal(a, b)
    tr = ZOTrainer(model=m_tr, args=targs(tmp_path, lr_scheduler_type=schedule, max_steps=6,
                                          per_device_train_batch_size=B),
                   train_dataset=ds, dpzo_algorithm=algorithm, **kw)
    fix_sampling_seed(tr.zo_optimizer)
    if algorithm == "dpzero":
        tr.zo_optimizer._noise_override = known_noise
    tr.train()

    opt = dt.ZOOptimizer(m_hand, algorithm=algorithm, lr=1e-3, steps=6, batch_size=B,
                         dataset_size=N, seed=3, lr_schedule=schedule, **kw)
    fix_sampling_seed(opt)
    if algorithm == "dpzero":
        opt._noise_override = known_noise
    assert opt.state_dict()["dpzo"]["config"] == tr.zo_optimizer.state_dict()["dpzo"]["config"]
    m_hand.eval()
    losses = []
    sizes = []
    for rows in opt.batch_sampler():
        sizes.append(len(rows))
        batch = transformers.default_data_collator([ds[i] for i in rows])

        def closure():
            logits = m_hand(input_ids=batch["input_ids"],
                            attention_mask=batch["attention_mask"]).logits
            return torch.nn.functional.cross_entropy(logits, batch["labels"], reduction="none")
        losses.append(opt.step(closure))
    assert opt.steps_done == 6 and len(set(sizes)) > 1  # Poisson: the sizes vary
    for a, b in zip(m_tr.parameters(), m_hand.parameters()):
        assert torch.equal(a, b)
    logged = [r["loss"] for r in tr.state.log_history if "loss" in r]
    assert logged == [float(torch.tensor(x, dtype=torch.float32)) for x in losses]
    epochs = [r["epoch"] for r in tr.state.log_history if "loss" in r]
    assert epochs == pytest.approx([(t + 1) / round(N / B) for t in range(6)])  # data passes
    lrs = [r["learning_rate"] for r in tr.state.log_history if "loss" in r]
    closed = {"constant": lambda t: 1e-3, "linear": lambda t: 1e-3 * (1 - t / 6),
              "cosine": lambda t: 1e-3 * (1 + math.cos(math.pi * t / 6)) / 2}[schedule]
    assert lrs == pytest.approx([closed(t) for t in range(6)], rel=1e-12)  # dpzo's schedule
    assert lrs == pytest.approx([opt.lr_at(t) for t in range(6)], rel=1e-15)  # the C step's
    if algorithm == "dpzero":
        eps = [r["epsilon"] for r in tr.state.log_history if "loss" in r]
        assert eps[-1] == opt.epsilon_spent() == tr.zo_optimizer.epsilon_spent()


def test_dpzero_logs_the_ledgers_epsilon(tmp_path):
    B, T = 6, 5
    prof_path, prof = make_profile(tmp_path, steps=T, q=B / N)
    tr = ZOTrainer(model=bert(), args=targs(tmp_path, max_steps=T), train_dataset=Tokens(),
                   dpzo_algorithm="dpzero", profile=prof_path, clip=1.0, perturbation=1e-3)
    tr.train()
    opt = tr.zo_optimizer
    eps = [r["epsilon"] for r in tr.state.log_history if "loss" in r]
    assert len(eps) == T
    assert all(a < b for a, b in zip(eps, eps[1:]))  # the ledger grows every step
    assert eps[-1] == opt.epsilon_spent()
    assert tr.state.log_history[-1]["epsilon"] == opt.epsilon_spent()  # the final record too
    assert 0 < eps[-1] <= opt.budget() <= prof.epsilon + 1e-12
    assert all(r["delta"] == prof.delta for r in tr.state.log_history)
    assert opt.noise_draws() > 0


@pytest.mark.parametrize("algorithm", ["mezo", "dpzero"])
def test_resume_continues_the_ledger(tmp_path, algorithm):
    """6 steps of B = 16 of 48 rows (3 a Trainer epoch), a checkpoint every 2; a new trainer
    resumes from step 4 (mid-epoch) and must end where the uninterrupted run ended."""
    B, T = 16, 6
    kw = dict(dpzo_algorithm=algorithm, perturbation=1e-3)
    if algorithm == "dpzero":
        prof_path, _ = make_profile(tmp_path, steps=T, q=B / N)
        kw.update(profile=prof_path, clip=1.0)
    args = targs(tmp_path, max_steps=T, per_device_train_batch_size=B, save_strategy="steps",
                 save_steps=2, lr_scheduler_type="linear")
    whole = ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), **kw)
    fix_sampling_seed(whole.zo_optimizer)
    whole.train()
    ckpt = tmp_path / "out" / "checkpoint-4"
    assert (ckpt / "optimizer.pt").is_file()
    saved = torch.load(ckpt / "optimizer.pt", weights_only=True)
    assert saved["dpzo"]["steps_done"] == 4 and saved["dpzo"]["sampling_seed"] == SAMPLING_SEED

    resumed_model = bert(seed=99)  # other weights: the checkpoint's must replace them
    resumed = ZOTrainer(model=resumed_model, args=args, train_dataset=Tokens(), **kw)
    assert resumed.zo_optimizer.steps_done == 0
    resumed.train(resume_from_checkpoint=str(ckpt))
    assert resumed.zo_optimizer.steps_done == T
    assert resumed.state.global_step == T
    logged = [r for r in resumed.state.log_history if "loss" in r]
    assert [r["step"] for r in logged][-2:] == [5, 6]
    assert [r["epoch"] for r in logged][-2:] == [5 / 3, 6 / 3]  # passes over the data, t B / n
    # the resumed scheduler goes on with the library's rates (steps 5, 6 run at t = 4, 5)
    assert [r["learning_rate"] for r in logged][-2:] == pytest.approx(
        [resumed.zo_optimizer.lr_at(4), resumed.zo_optimizer.lr_at(5)], rel=1e-15)
    assert resumed.zo_optimizer.lr_at(5) == pytest.approx(1e-3 / 6, rel=1e-12)
    loss_whole = {r["step"]: r["loss"] for r in whole.state.log_history if "loss" in r}
    if algorithm == "mezo":  # no noise: the interrupted run is the whole run, bit for bit
        for a, b in zip(whole.model.parameters(), resumed_model.parameters()):
            assert torch.equal(a, b)
        assert [r["loss"] for r in logged][-2:] == [loss_whole[5], loss_whole[6]]
    else:  # the ledger goes on from step 4: the same epsilon at each step as the whole run
        eps_whole = {r["step"]: r["epsilon"] for r in whole.state.log_history if "loss" in r}
        eps_res = {r["step"]: r["epsilon"] for r in logged}
        assert eps_res[5] > eps_whole[4]
        assert [eps_res[s] for s in (5, 6)] == [eps_whole[s] for s in (5, 6)]
        assert resumed.zo_optimizer.epsilon_spent() == whole.zo_optimizer.epsilon_spent()


def test_resume_without_the_ledger_is_refused(tmp_path):
    args = targs(tmp_path, max_steps=4, save_strategy="steps", save_steps=2)
    ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), dpzo_algorithm="mezo").train()
    ckpt = tmp_path / "out" / "checkpoint-2"
    os.remove(ckpt / "optimizer.pt")
    tr = ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), dpzo_algorithm="mezo")
    with pytest.raises(dpzo.Error, match="ledger at step 0"):
        tr.train(resume_from_checkpoint=str(ckpt))
    assert tr.zo_optimizer.steps_done == 0


def test_a_finished_plan_stops(tmp_path):
    B, T = 6, 3
    prof_path, _ = make_profile(tmp_path, steps=T, q=B / N)
    args = targs(tmp_path, max_steps=T, save_strategy="steps", save_steps=3)
    tr = ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), dpzo_algorithm="dpzero",
                   profile=prof_path, clip=1.0)
    tr.train()
    eps = tr.zo_optimizer.epsilon_spent()
    after = params(tr.model)
    with pytest.raises(dt.BudgetExceeded, match="all done"):
        tr.train()  # the same optimizer again: no step past the plan
    assert tr.zo_optimizer.steps_done == T and tr.zo_optimizer.epsilon_spent() == eps
    assert all(torch.equal(a, b) for a, b in zip(after, tr.model.parameters()))
    # Resuming from the last checkpoint runs nothing more either.
    again = ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), dpzo_algorithm="dpzero",
                      profile=prof_path, clip=1.0)
    again.train(resume_from_checkpoint=str(tmp_path / "out" / "checkpoint-3"))
    assert again.zo_optimizer.steps_done == T
    assert again.zo_optimizer.epsilon_spent() == eps
    assert all(torch.equal(a, b) for a, b in zip(after, again.model.parameters()))


def test_empty_poisson_batches(tmp_path):
    """B = 0.5 of 16 rows: most batches are empty; such a step releases noise only."""
    ds = Tokens(16)
    tr = ZOTrainer(model=bert(), args=targs(tmp_path, max_steps=8,
                                            per_device_train_batch_size=1),
                   train_dataset=ds, dpzo_algorithm="mezo")
    fix_sampling_seed(tr.zo_optimizer)
    sizes = [len(tr.zo_optimizer.batch(t)) for t in range(8)]
    assert 0 in sizes and any(sizes)
    tr.train()
    assert tr.zo_optimizer.steps_done == 8


@pytest.mark.parametrize("change,message", [
    (dict(gradient_accumulation_steps=2), "gradient_accumulation_steps must be 1, got 2"),
    (dict(max_steps=-1), "set max_steps"),
    (dict(lr_scheduler_type="cosine_with_restarts"), "not a dpzo schedule"),
    (dict(warmup_steps=2), "warm-up"),
    (dict(save_only_model=True), "save_only_model"),
    (dict(torch_compile=True), "torch_compile"),
    (dict(auto_find_batch_size=True), "auto_find_batch_size"),
])
def test_refusals(tmp_path, change, message):
    with pytest.raises(dpzo.Error, match=message):
        ZOTrainer(model=bert(), args=targs(tmp_path, **change), train_dataset=Tokens(),
                  dpzo_algorithm="mezo")


def test_refusals_of_trainer_keywords(tmp_path):
    with pytest.raises(dpzo.Error, match="compute_loss_func"):
        ZOTrainer(model=bert(), args=targs(tmp_path), train_dataset=Tokens(),
                  dpzo_algorithm="mezo", compute_loss_func=lambda *a, **k: 0)
    with pytest.raises(dpzo.Error, match="optimizers"):
        m = bert()
        ZOTrainer(model=m, args=targs(tmp_path), train_dataset=Tokens(),
                  dpzo_algorithm="mezo",
                  optimizers=(torch.optim.SGD(m.parameters(), lr=0.1), None))
    with pytest.raises(dpzo.Error, match="train_dataset"):
        ZOTrainer(model=bert(), args=targs(tmp_path), dpzo_algorithm="mezo")


def test_per_example_loss_matches_the_models_own_loss():
    """The default losses against each row's own Hugging Face loss (a batch of one)."""
    torch.manual_seed(0)
    ds = Tokens(5)
    batch = transformers.default_data_collator([ds[i] for i in range(5)])
    cls = bert().eval()
    gpt = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=100, n_positions=16, n_embd=16, n_layer=1, n_head=2)).eval()
    cfg = bert().config
    reg = transformers.BertForSequenceClassification(
        transformers.BertConfig(**{**cfg.to_dict(), "num_labels": 1})).eval()
    tok = transformers.BertForTokenClassification(cfg).eval()
    tok_labels = batch["input_ids"] % 2
    tok_labels[2, 4:] = -100
    with torch.no_grad():
        for model, inputs in ((cls, batch), (gpt, {"input_ids": batch["input_ids"],
                                                   "labels": batch["input_ids"].clone()}),
                              (reg, {**batch, "labels": batch["labels"].float() * 2 - 0.5}),
                              (tok, {**batch, "labels": tok_labels})):
            if model is gpt:
                inputs["labels"][1, 3:] = -100  # ignored tokens: a mean over the others
            got = per_example_loss(model, inputs)
            assert got.shape == (5,)
            for i in range(5):
                row = {k: v[i:i + 1] for k, v in inputs.items()}
                own = model(**row).loss
                assert float(got[i]) == pytest.approx(float(own), rel=1e-5, abs=1e-6)


def test_user_per_example_loss(tmp_path):
    """A user's per-example loss is the one stepped on (here: twice the cross-entropy, so
    the logged loss is twice the default run's, with the same batches)."""
    def doubled(model, inputs):
        return 2 * per_example_loss(model, inputs)
    runs = []
    for f in (None, doubled):
        tr = ZOTrainer(model=bert(), args=targs(tmp_path, max_steps=2), train_dataset=Tokens(),
                       dpzo_algorithm="mezo", per_example_loss=f)
        fix_sampling_seed(tr.zo_optimizer)
        tr.train()
        runs.append([r["loss"] for r in tr.state.log_history if "loss" in r])
    assert runs[1][0] == pytest.approx(2 * runs[0][0], rel=1e-6)


def test_an_unwritable_output_dir_is_refused_before_the_first_step(tmp_path):
    """Issue 28, item 6: checkpoints go to args.output_dir; a folder that cannot be made
    (here: under a regular file) is refused before any noise is drawn, naming the path,
    instead of after the steps whose privacy budget it spent."""
    B, T = 6, 4
    prof_path, _ = make_profile(tmp_path, steps=T, q=B / N)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = blocker / "out"
    args = targs(tmp_path, output_dir=str(out), max_steps=T, save_strategy="steps",
                 save_steps=2)
    with pytest.raises(dpzo.Error, match=re.escape(str(out))):
        ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), dpzo_algorithm="dpzero",
                  profile=prof_path, clip=1.0).train()
    assert blocker.read_text() == "not a folder"


def test_an_output_dir_that_stops_taking_files_is_refused_by_train(tmp_path):
    """The folder is checked again by train(): here it became a path under a regular file
    after the trainer was made; no step runs and the ledger stays at 0."""
    B, T = 6, 4
    prof_path, _ = make_profile(tmp_path, steps=T, q=B / N)
    args = targs(tmp_path, max_steps=T, save_strategy="steps", save_steps=2)
    tr = ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), dpzo_algorithm="dpzero",
                   profile=prof_path, clip=1.0)
    shutil.rmtree(args.output_dir)
    with open(args.output_dir, "w") as f:  # the folder's name is now a regular file
        f.write("x")
    with pytest.raises(dpzo.Error, match=re.escape(args.output_dir)):
        tr.train()
    assert tr.zo_optimizer.steps_done == 0
    assert tr.zo_optimizer.epsilon_spent() == 0.0


def test_a_writable_output_dir_is_made_and_left_clean(tmp_path):
    args = targs(tmp_path, output_dir=str(tmp_path / "new" / "out"), max_steps=2,
                 save_strategy="steps", save_steps=2)
    ZOTrainer(model=bert(), args=args, train_dataset=Tokens(), dpzo_algorithm="mezo").train()
    names = sorted(os.listdir(tmp_path / "new" / "out"))
    assert "checkpoint-2" in names
    assert not [n for n in names if "dpzo-probe" in n]  # the probe file is gone


class Images(torch.utils.data.Dataset):
    """N random 3 x 8 x 8 images, each with a random 16-vector target."""

    def __init__(self, n: int = N) -> None:
        g = torch.Generator().manual_seed(8)
        self.x = torch.randn(n, 3, 8, 8, generator=g)
        self.y = torch.randn(n, 16, generator=g)

    def __len__(self) -> int:
        return self.x.shape[0]

    def __getitem__(self, i: int):
        return {"pixel_values": self.x[i], "labels": self.y[i]}


def siglip_vision(seed: int = 0):
    """A tiny SiglipVisionModel (no hub): it pools with torch's nn.MultiheadAttention."""
    torch.manual_seed(seed)
    cfg = transformers.SiglipVisionConfig(hidden_size=16, intermediate_size=32,
                                          num_hidden_layers=1, num_attention_heads=2,
                                          image_size=8, patch_size=4, num_channels=3,
                                          vision_use_head=True)
    return transformers.SiglipVisionModel(cfg)


def pooled_error(model, inputs):
    out = model(pixel_values=inputs["pixel_values"]).pooler_output
    return (out.float() - inputs["labels"].float()).pow(2).mean(1)


def test_torch_attention_trains_as_with_perturb_all(tmp_path):
    """Issue 28, item 2: the attention pooling head's out_proj is read inside
    nn.MultiheadAttention's forward; the trainer's default (perturb="layer") must leave the
    parameters that perturb="all" leaves, bit for bit."""
    runs = []
    for options in (None, {"perturb": "all"}):
        model = siglip_vision()
        tr = ZOTrainer(model=model, args=targs(tmp_path, max_steps=3,
                                               remove_unused_columns=False),
                       train_dataset=Images(), dpzo_algorithm="mezo", perturbation=1e-3,
                       queries=2, per_example_loss=pooled_error, dpzo_options=options)
        fix_sampling_seed(tr.zo_optimizer)
        tr.train()
        assert tr.zo_optimizer.steps_done == 3
        runs.append(params(model))
    assert all(torch.equal(a, b) for a, b in zip(*runs))
    assert not any(torch.equal(a, b) for a, b in zip(runs[0], params(siglip_vision())))
