# SPDX-License-Identifier: Apache-2.0
"""One rank of the data-parallel test of dpzo.torch (test_torch_plugin_core.py).

Run as a script by the test, twice (RANK 0 and 1, WORLD_SIZE 2, MASTER_ADDR/MASTER_PORT in
the environment): joins a gloo process group, runs mezo and then dpzero (``profile``) on
the model, data and seed of :func:`make`, each rank's closure evaluating the rows of its
share ``opt.batch(t)``, and saves what the test compares (``<algorithm>_rank<r>.pt`` in
the output folder). The test imports :func:`make` and :func:`run` for its one-process run,
so both sides build and step the same way.

    python torch_ddp_worker.py OUT_DIR PROFILE

Exit. Stop 38's CI saw rank 1 abort once ("terminate called without an active exception",
SIGABRT), where every CI run before had passed; 60 runs here beside a busy core did not
repeat it, so the cause is not proven. The message is a C++ thread object destroyed while
its thread runs; the likeliest here is torch's gloo backend, whose objects can outlive
destroy_process_group while Python still refers to the group (the optimisers hold it) and
are then destroyed in interpreter finalisation (pytorch/pytorch PR 179291 describes that
SIGABRT). So the worker collects its references to the group before destroying it, waits
until every rank has destroyed it (a marker file per rank: no rank's store or sockets go away
under another's shutdown), and leaves with os._exit after flushing, which runs no
finalisation. Its results are written and closed before all this, and the test checks them
and the exit status.
"""
from __future__ import annotations

import gc
import os
import sys
import time
from typing import Any, Dict, List, Optional

import torch

import dpzo.torch as dt

N, DIM, HIDDEN, CLASSES = 48, 6, 8, 3
STEPS, BATCH, QUERIES, LR, LAMBDA, SEED, CLIP = 4, 12, 2, 0.05, 1e-3, 11, 2.0


def make(algorithm: str, profile: Optional[str] = None,
         process_group: Any = None) -> tuple:
    """(model, X, y, opt): the same on every rank and in the one-process run."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(DIM, HIDDEN), torch.nn.Tanh(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    g = torch.Generator().manual_seed(1)
    X = torch.randn(N, DIM, generator=g)
    y = torch.randint(0, CLASSES, (N,), generator=g)
    kw: Dict[str, Any] = {}
    if algorithm == "dpzero":
        kw = {"profile": profile, "clip": CLIP}
    opt = dt.ZOOptimizer(model, algorithm=algorithm, lr=LR, steps=STEPS, batch_size=BATCH,
                         dataset_size=N, queries=QUERIES, perturbation=LAMBDA, seed=SEED,
                         process_group=process_group, **kw)
    return model, X, y, opt


def per_example_losses(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor,
                       rows: List[int]) -> torch.Tensor:
    """The rows' losses, each from a forward of that row alone: a row's loss is then the
    same bits whichever rows share its batch (a batched matmul need not be)."""
    out = [torch.nn.functional.cross_entropy(model(X[i:i + 1]), y[i:i + 1], reduction="none")
           for i in rows]
    return torch.cat(out) if out else torch.zeros(0)


def run(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor, opt: Any) -> Dict[str, Any]:
    """Runs the plan; returns the batches, the released g per step, the parameters after
    each step (parameters[0]: before the first), the losses every evaluation saw, the
    ledger and the sampling seed."""
    res: Dict[str, Any] = {"batches": [], "grads": [], "losses": [],
                           "parameters": [[p.detach().clone() for p in model.parameters()]]}
    for t in range(opt.steps):
        rows = opt.batch(t)
        seen: List[torch.Tensor] = []

        def closure() -> torch.Tensor:
            out = per_example_losses(model, X, y, rows)
            seen.append(out.detach().double().clone())
            return out

        opt.step(closure)
        res["batches"].append(list(rows))
        res["grads"].append(opt.last_gradient())
        res["losses"].append(seen)
        res["parameters"].append([p.detach().clone() for p in model.parameters()])
    res["noise_draws"] = opt.noise_draws()
    res["epsilon"] = opt.epsilon_spent()
    res["steps_done"] = opt.steps_done
    res["sampling_seed"] = opt.state_dict()["dpzo"]["sampling_seed"]
    return res


def _train(out_dir: str, profile: str, rank: int, world: int) -> None:
    """Both algorithms' runs; every object that holds the group is gone when this returns."""
    for algorithm in ("mezo", "dpzero"):
        model, X, y, opt = make(algorithm, profile)
        res = run(model, X, y, opt)
        res["world"] = world
        res["rank"] = rank
        torch.save(res, os.path.join(out_dir, f"{algorithm}_rank{rank}.pt"))


def _all_ranks_done(out_dir: str, rank: int, world: int, timeout: float = 60.0) -> bool:
    """Marks this rank's group destroyed and waits for every rank's mark (no group left to
    synchronise through)."""
    with open(os.path.join(out_dir, f"destroyed_rank{rank}"), "w", encoding="ascii") as f:
        f.write("done\n")
    deadline = time.monotonic() + timeout
    marks = [os.path.join(out_dir, f"destroyed_rank{r}") for r in range(world)]
    while not all(os.path.exists(m) for m in marks):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def main(argv: List[str]) -> int:
    import torch.distributed as dist
    out_dir, profile = argv[1], argv[2]
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    _train(out_dir, profile, rank, world)
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()
    gc.collect()
    return 0 if _all_ranks_done(out_dir, rank, world) else 3


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
