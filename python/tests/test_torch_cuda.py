# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch on CUDA tensors: the same bits as on the CPU (skipped without a GPU).

The plugin's CUDA path hands the tensors' device storage to dpzo's CUDA kernels
(dpzo_cuda_dir_perturb, dpzo_zo_update_cuda) on PyTorch's current stream. The kernels
reproduce the CPU reference bit for bit (docs/cuda.md), so with the per-example losses
computed identically (here on the CPU, from the weights the forward sees copied back), a
run on the GPU must leave exactly the CPU run's parameters, in float32, bfloat16 and
float16, on the default stream and on a side stream.
"""
from __future__ import annotations

import ctypes

import pytest

torch = pytest.importorskip("torch")

import dpzo.torch as dt  # noqa: E402
from dpzo.torch import _c  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (torch.cuda.is_available() and _c.cuda_available()),
    reason="no CUDA device (or a dpzo build without CUDA): the GPU evidence is issue 19's")


def make_model(dtype, device):
    torch.manual_seed(3)
    m = torch.nn.Sequential(torch.nn.Embedding(50, 8), torch.nn.Linear(8, 8),
                            torch.nn.LayerNorm(8), torch.nn.Linear(8, 4))
    return m.to(device=device, dtype=dtype)


def run(dtype, device, steps=4, side_stream=False):
    model = make_model(dtype, device)
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.05, steps=steps, batch_size=8,
                         dataset_size=32, queries=2, seed=11)
    state = opt.state_dict()
    state["dpzo"]["sampling_seed"] = 5
    opt.load_state_dict(state)
    tokens = torch.arange(32 * 3).reshape(32, 3) % 50
    labels = torch.arange(32) % 4
    seen = []

    def cpu_losses(idx):
        # the losses from the weights the forward saw, computed on the CPU in float64, so
        # both runs feed the kernels the same numbers
        cpu = make_model(torch.float64, "cpu")
        with torch.no_grad():
            for p, q in zip(cpu.parameters(), model.parameters()):
                p.copy_(q.detach().to("cpu", torch.float64))
            z = cpu(tokens[idx]).mean(1)
            return torch.logsumexp(z, 1) - z[torch.arange(len(idx)), labels[idx]]

    ctx = torch.cuda.stream(torch.cuda.Stream()) if side_stream else None
    for t in range(steps):
        idx = opt.batch(t)

        def closure():
            if ctx is not None:
                torch.cuda.current_stream().synchronize()
            return cpu_losses(idx)

        if ctx is not None:
            with ctx:
                opt.step(closure)
        else:
            opt.step(closure)
        seen.append([p.detach().to("cpu").clone() for p in model.parameters()])
    torch.cuda.synchronize()
    return seen


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_gpu_run_is_the_cpu_run_bit_for_bit(dtype):
    cpu = run(dtype, "cpu")
    gpu = run(dtype, "cuda")
    for a, b in zip(cpu, gpu):
        for x, y in zip(a, b):
            assert torch.equal(x.view(torch.int16 if dtype != torch.float32 else torch.int32),
                               y.view(torch.int16 if dtype != torch.float32 else torch.int32))


def test_side_stream_gives_the_same_bits():
    a = run(torch.bfloat16, "cuda")
    b = run(torch.bfloat16, "cuda", side_stream=True)
    for x, y in zip(a[-1], b[-1]):
        assert torch.equal(x.view(torch.int16), y.view(torch.int16))


def test_gpu_restores_bf16_exactly():
    model = make_model(torch.bfloat16, "cuda")
    before = [p.detach().clone() for p in model.parameters()]
    opt = dt.ZOOptimizer(model, algorithm="mezo", lr=0.05, steps=1, batch_size=8,
                         dataset_size=32, seed=2)
    _c._lib.call(_c.zo_begin, ctypes.c_void_p(opt._zo))
    for sign in (1, -1):
        with opt.perturbed(0, sign):
            model(torch.zeros(2, 3, dtype=torch.long, device="cuda"))
    torch.cuda.synchronize()
    for p, q in zip(model.parameters(), before):
        assert torch.equal(p.view(torch.int16), q.view(torch.int16))
