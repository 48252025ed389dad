# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch, perturb="layer": every tuned tensor is read perturbed, whatever module reads
it (issue 28, item 2).

perturb="layer" puts each tuned tensor's perturbed value in place around the forward of one
module. nn.MultiheadAttention reads out_proj.weight and out_proj.bias inside its own forward
(F.multi_head_attention_forward, or the fast path) and never calls out_proj: before the
fix those two tensors were evaluated unperturbed and updated anyway. The reference here is
perturb="all" (every tuned tensor perturbed before the closure, so every read sees it): both
modes perturb with the same C kernel into the same values and the models run the same
kernels, so the released g and the parameters after the steps must be the same bits.
"""
from __future__ import annotations

import copy
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

torch = pytest.importorskip("torch")

import dpzo.torch as dt  # noqa: E402

F = torch.nn.functional
N, B, Q, STEPS = 16, 8, 2, 3
D = 16  # model width


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(torch.int32).clone()


@contextmanager
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@contextmanager
def mha_fastpath(enabled: bool) -> Iterator[None]:
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(enabled)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(before)


def data(shape: tuple, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


X = data((N, 5, D), 1)
Y = data((N, 5, D), 2)
MEM = data((N, 3, D), 3)


def mse(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return (out.float() - target.float()).pow(2).reshape(out.shape[0], -1).mean(1)


def run(model: torch.nn.Module, perturb: str, losses: Callable[[torch.nn.Module, List[int]],
        torch.Tensor], params: Optional[Callable[[torch.nn.Module], List[Any]]] = None,
        steps: int = STEPS, before_step: Optional[Callable[[torch.nn.Module, int], None]] = None
        ) -> Dict[str, Any]:
    """`steps` mezo steps of Q queries on a copy of `model`: the released g of each step, the
    closure's calls per step and the parameters' bits after the steps."""
    model = copy.deepcopy(model)
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.05, steps=steps, batch_size=B,
                         dataset_size=N, queries=Q, perturbation=1e-3, seed=4,
                         perturb=perturb, params=params(model) if params else None)
    s = opt.state_dict()
    s["dpzo"]["sampling_seed"] = 9
    opt.load_state_dict(s)
    g, calls = [], []
    for t in range(steps):
        if before_step is not None:
            before_step(model, t)
        rows = opt.batch(t)
        count = [0]

        def closure() -> torch.Tensor:
            count[0] += 1
            return losses(model, rows)

        opt.step(closure)
        g.append(opt.last_gradient())
        calls.append(count[0])
    return {"g": g, "calls": calls, "params": [bits(p) for p in model.parameters()],
            "opt": opt, "model": model}


def assert_same_as_all(model: torch.nn.Module, losses: Callable[..., torch.Tensor],
                       params: Optional[Callable[[torch.nn.Module], List[Any]]] = None,
                       **kw: Any) -> Dict[str, Any]:
    ref = run(model, "all", losses, params, **kw)
    got = run(model, "layer", losses, params, **kw)
    assert all(gk != 0 for step in ref["g"] for gk in step)  # the check is not vacuous
    assert got["g"] == ref["g"], (got["g"], ref["g"])
    assert all(torch.equal(a, b) for a, b in zip(got["params"], ref["params"]))
    return got


# ---- torch's attention and transformer layers ----------------------------------------------

def mha_model(batch_first: bool = True) -> torch.nn.Module:
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(D, 2, batch_first=batch_first)
    with torch.no_grad():  # zero biases would hide an unperturbed bias: randomise them
        for p in m.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return m


def mha_losses(model: torch.nn.Module, rows: List[int]) -> torch.Tensor:
    x = X[rows] if model.batch_first else X[rows].transpose(0, 1)
    out = model(x, x, x, need_weights=False)[0]
    return mse(out if model.batch_first else out.transpose(0, 1), Y[rows])


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_is_evaluated_at_its_perturbed_out_proj(mode: str,
                                                                   batch_first: bool) -> None:
    # eval + batch_first + no grad: torch's fast path (_native_multi_head_attention)
    model = mha_model(batch_first).train(mode == "train")
    with no_warnings():
        got = assert_same_as_all(model, mha_losses)
    assert got["calls"] == [2 * Q] * STEPS  # no evaluation was redone


def test_only_out_proj_weight_tuned() -> None:
    """The issue's sharpest case: with only out_proj.weight tuned, "layer" gave g = 0."""
    with no_warnings():
        got = assert_same_as_all(mha_model(), mha_losses, lambda m: [m.out_proj.weight])
    assert all(gk != 0 for step in got["g"] for gk in step)


def test_multihead_attention_perturbs_in_proj_and_out_proj_together() -> None:
    """Memory: the attention's tuned tensors (in_proj_*, out_proj.*) are perturbed around its
    forward, together, and put back after it."""
    model = mha_model()
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.05, steps=1, batch_size=B,
                         dataset_size=N, perturbation=1e-3, seed=4)
    seen: List[int] = []
    model.register_forward_pre_hook(lambda m, a: seen.append(len(opt._swapped)))
    model.register_forward_hook(lambda m, a, o: seen.append(len(opt._swapped)))
    opt.step(lambda: mha_losses(model, list(range(B))))
    assert seen == [4, 0] * 2
    assert opt._swapped == {}
    assert opt._homes() == {n: ("",) for n, _ in model.named_parameters()}


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_the_tracker_alone_finds_the_attentions_reads(mode: str, monkeypatch: Any) -> None:
    """Without the known rule for nn.MultiheadAttention the first evaluation's tracked reads
    find out_proj's tensors read in the attention's forward, through
    F.multi_head_attention_forward (train) and through the fused
    _native_multi_head_attention (eval), and get them right from that evaluation on."""
    from dpzo.torch import optimizer
    monkeypatch.setattr(optimizer, "_READS_CHILDREN", {})
    with pytest.warns(UserWarning, match=r"out_proj\.weight \(read in the forward of the "
                      r"model \(MultiheadAttention\)\)"):
        got = assert_same_as_all(mha_model().train(mode == "train"), mha_losses)
    assert got["calls"] == [2 * Q] * STEPS
    assert got["opt"]._homes()["out_proj.bias"] == ("", "out_proj")


def encoder_layer() -> torch.nn.Module:
    torch.manual_seed(1)
    return torch.nn.TransformerEncoderLayer(D, 2, dim_feedforward=32, dropout=0.0,
                                            batch_first=True)


def decoder_layer() -> torch.nn.Module:
    torch.manual_seed(2)
    return torch.nn.TransformerDecoderLayer(D, 2, dim_feedforward=32, dropout=0.0,
                                            batch_first=True)


def transformer() -> torch.nn.Module:
    torch.manual_seed(3)
    return torch.nn.Transformer(D, 2, num_encoder_layers=1, num_decoder_layers=1,
                                dim_feedforward=32, dropout=0.0, batch_first=True)


def layer_losses(model: torch.nn.Module, rows: List[int]) -> torch.Tensor:
    if isinstance(model, torch.nn.TransformerEncoderLayer):
        out = model(X[rows])
    else:  # decoder layer, transformer: (target, memory / source)
        out = model(X[rows], MEM[rows]) if isinstance(model, torch.nn.TransformerDecoderLayer) \
            else model(MEM[rows], X[rows])
    return mse(out, Y[rows])


@pytest.mark.parametrize("make", [encoder_layer, decoder_layer, transformer])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_torch_transformer_layers(make: Callable[[], torch.nn.Module], mode: str) -> None:
    model = make().train(mode == "train")
    # In eval mode TransformerEncoderLayer takes its fused fast path only when no module in
    # it has forward hooks: under "all" it would, under "layer" not, and the two kernels
    # round differently. The fast path is switched off for both runs in eval mode so that
    # the comparison is bit for bit (under "layer" the fused path is never taken anyway).
    with mha_fastpath(mode == "train"), no_warnings():
        got = assert_same_as_all(model, layer_losses)
    assert got["calls"] == [2 * Q] * STEPS


# ---- a Hugging Face model ----------------------------------------------------------------------

def siglip() -> torch.nn.Module:
    """A tiny SiglipVisionModel (no hub): its attention pooling head is torch's
    nn.MultiheadAttention."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(5)
    cfg = transformers.SiglipVisionConfig(hidden_size=D, intermediate_size=32,
                                          num_hidden_layers=1, num_attention_heads=2,
                                          image_size=8, patch_size=4, num_channels=3,
                                          vision_use_head=True)
    return transformers.SiglipVisionModel(cfg)


PIXELS = data((N, 3, 8, 8), 6)


def siglip_losses(model: torch.nn.Module, rows: List[int]) -> torch.Tensor:
    return mse(model(pixel_values=PIXELS[rows]).pooler_output, Y[rows, 0])


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_hugging_face_model_with_torch_attention(mode: str) -> None:
    with no_warnings():
        got = assert_same_as_all(siglip().train(mode == "train"), siglip_losses)
    assert got["calls"] == [2 * Q] * STEPS


def test_hugging_face_bert() -> None:
    """BERT reads each weight in its own module: the same either way, nothing to report."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(6)
    cfg = transformers.BertConfig(vocab_size=50, hidden_size=D, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=32,
                                  max_position_embeddings=16, num_labels=3,
                                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = transformers.BertForSequenceClassification(cfg)
    ids = torch.randint(0, 50, (N, 6), generator=torch.Generator().manual_seed(7))
    labels = torch.arange(N) % 3

    def losses(m: torch.nn.Module, rows: List[int]) -> torch.Tensor:
        return F.cross_entropy(m(input_ids=ids[rows]).logits, labels[rows], reduction="none")

    with no_warnings():
        got = assert_same_as_all(model, losses)
    assert got["calls"] == [2 * Q] * STEPS


def test_hugging_face_gpt2_with_tied_embeddings() -> None:
    """GPT-2's lm_head.weight is wte.weight (one Parameter in two modules, both its homes):
    the same either way, nothing to report."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(14)
    cfg = transformers.GPT2Config(vocab_size=50, n_positions=16, n_embd=D, n_layer=2, n_head=2,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                  bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(cfg)
    assert model.lm_head.weight is model.transformer.wte.weight
    ids = torch.randint(0, 50, (N, 6), generator=torch.Generator().manual_seed(15))

    def losses(m: torch.nn.Module, rows: List[int]) -> torch.Tensor:
        logits = m(input_ids=ids[rows]).logits[:, :-1]
        return F.cross_entropy(logits.reshape(-1, 50), ids[rows, 1:].reshape(-1),
                               reduction="none").reshape(len(rows), -1).mean(1)

    with no_warnings():
        got = assert_same_as_all(model, losses)
    assert got["calls"] == [2 * Q] * STEPS


# ---- reads the plugin finds at run time -------------------------------------------------------

class Parent(torch.nn.Module):
    """Reads its child's weight itself (like nn.MultiheadAttention's out_proj); with
    call_child it also calls the child (the same weight read in two places)."""

    def __init__(self, call_child: bool = False) -> None:
        super().__init__()
        self.pre = torch.nn.Linear(D, D)
        self.child = torch.nn.Linear(D, D)
        self.call_child = call_child
        self.direct = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.pre(x))
        if self.call_child:
            h = self.child(h)
        if self.direct:
            h = F.linear(h, self.child.weight, self.child.bias)
        return h


def parent_losses(model: torch.nn.Module, rows: List[int]) -> torch.Tensor:
    return mse(model(X[rows]), Y[rows])


def make_parent(call_child: bool = False) -> Parent:
    torch.manual_seed(8)
    return Parent(call_child)


@pytest.mark.parametrize("call_child", [False, True])
def test_a_weight_read_by_another_module_is_found_and_rehomed(call_child: bool) -> None:
    with pytest.warns(UserWarning, match=r"child\.weight.*child\.bias|child\.bias.*child\.weight"):
        got = assert_same_as_all(make_parent(call_child), parent_losses)
    # found in the first evaluation, which was computed right (no evaluation redone)
    assert got["calls"] == [2 * Q] * STEPS
    home = got["opt"]._homes()  # the child keeps its hook (it may run: call_child)
    assert home["child.weight"] == home["child.bias"] == ("", "child")
    assert home["pre.weight"] == ("pre",)


def test_a_weight_read_outside_every_forward_is_perturbed_for_the_whole_evaluation() -> None:
    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(D, D)
            self.scale = torch.nn.Parameter(torch.tensor(1.5))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(x)

    def losses(m: torch.nn.Module, rows: List[int]) -> torch.Tensor:
        return mse(m(X[rows]) * m.scale, Y[rows])  # the closure reads scale itself

    torch.manual_seed(9)
    with pytest.warns(UserWarning, match=r"scale.*whole evaluation"):
        got = assert_same_as_all(Scaled(), losses)
    assert got["calls"] == [2 * Q] * STEPS
    assert got["opt"]._homes()["scale"] is None


def test_a_weight_read_in_two_modules_has_both_as_homes() -> None:
    class Outer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.b = Parent()  # reads its child's weight itself

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.b.child(x)  # the child called from here...
            return self.b(h)     # ...and its weight read inside b

    torch.manual_seed(10)
    with pytest.warns(UserWarning, match=r"b\.child\.weight"):
        got = assert_same_as_all(Outer(), parent_losses)
    assert got["opt"]._homes()["b.child.weight"] == ("b", "b.child")  # both readers


def test_a_change_of_path_is_caught_and_the_evaluation_redone() -> None:
    """The first step calls the child; from the second on its weight is read by the parent
    (the child's forward no longer runs): the evaluation after which the child's hook had
    not fired is redone with the reads tracked, and the weight moves to the parent."""
    def switch(model: torch.nn.Module, t: int) -> None:
        model.call_child, model.direct = t == 0, t > 0

    with pytest.warns(UserWarning, match=r"child\.weight"):
        got = assert_same_as_all(make_parent(), parent_losses, before_step=switch)
    assert got["calls"] == [2 * Q, 2 * Q + 1] + [2 * Q] * (STEPS - 2)


def test_a_skipped_module_is_no_foreign_read() -> None:
    """Experts run by turns (a mixture of experts, a layer drop): a module that did not run
    and whose tensors nobody read needs nothing; each is checked once (one evaluation redone)
    and then trusted."""
    class Experts(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = torch.nn.Linear(D, D)
            self.b = torch.nn.Linear(D, D)
            self.use_a = True

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (self.a if self.use_a else self.b)(x)

    def switch(model: torch.nn.Module, t: int) -> None:
        model.use_a = t % 2 == 0

    torch.manual_seed(11)
    with no_warnings():
        got = assert_same_as_all(Experts(), parent_losses, before_step=switch, steps=4)
    # step 0: b skipped (the first evaluation is checked); step 1: a skipped, checked once
    assert got["calls"] == [2 * Q, 2 * Q + 1, 2 * Q, 2 * Q]


def test_a_weight_tied_between_a_module_and_its_child() -> None:
    """The same Parameter registered in a module and in its child: the child's forward
    ending must not put it back while the outer module still reads it."""
    class Tied(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.child = torch.nn.Linear(D, D)
            self.w = self.child.weight

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return F.linear(torch.tanh(self.child(x)), self.w)

    torch.manual_seed(12)
    with no_warnings():
        assert_same_as_all(Tied(), parent_losses)


def test_a_module_called_twice() -> None:
    torch.manual_seed(13)
    lin = torch.nn.Linear(D, D)
    model = torch.nn.Sequential(lin, torch.nn.Tanh(), lin)
    with no_warnings():
        got = assert_same_as_all(model, parent_losses)
    assert got["calls"] == [2 * Q] * STEPS
