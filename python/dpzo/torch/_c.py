# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch._c: the C functions the plugin calls (dpzo/zo_step.h, dpzo/zo_dir.h, dpzo/cuda.h).

Internal. Every number of a step comes from these: the directions, the perturbed weights,
the clipping, the noise, the ledger and the update. This module only declares them and
converts torch tensors into (address, element type).
"""
from __future__ import annotations

import ctypes
from typing import Any

import torch

from .. import _lib
from ..errors import Error
from ..profiles import _CProfile  # the dpzo_profile struct (layout-checked in the tests)

_vp = ctypes.c_void_p
_u64 = ctypes.c_uint64
_dp = ctypes.POINTER(ctypes.c_double)
_szp = ctypes.POINTER(ctypes.c_size_t)

zo_open = _lib.fn("dpzo_zo_open", ctypes.c_int,
                  [_vp, ctypes.c_char_p, ctypes.c_char_p, _u64, _u64, ctypes.POINTER(_vp)])
zo_free = _lib.fn("dpzo_zo_free", None, [_vp])
zo_batch = _lib.fn("dpzo_zo_batch", ctypes.c_size_t, [_vp, _u64, _szp])
zo_batch_capacity = _lib.fn("dpzo_zo_batch_capacity", ctypes.c_size_t, [_vp])
zo_sampling_seed = _lib.fn("dpzo_zo_sampling_seed", _u64, [_vp])
zo_set_sampling_seed = _lib.fn("dpzo_zo_set_sampling_seed", ctypes.c_int, [_vp, _vp, _u64])
zo_begin = _lib.fn("dpzo_zo_begin", ctypes.c_int, [_vp, _vp])
zo_queries = _lib.fn("dpzo_zo_queries", ctypes.c_uint, [_vp])
zo_lambda = _lib.fn("dpzo_zo_lambda", ctypes.c_double, [_vp])
zo_lr = _lib.fn("dpzo_zo_lr", ctypes.c_double, [_vp])
zo_lr_at = _lib.fn("dpzo_zo_lr_at", ctypes.c_double, [_vp, _u64])
zo_direction = _lib.fn("dpzo_zo_direction", _vp, [_vp, ctypes.c_uint])
zo_clip_sum = _lib.fn("dpzo_zo_clip_sum", ctypes.c_int,
                      [_vp, _vp, _dp, _dp, ctypes.c_size_t, _dp])
zo_release = _lib.fn("dpzo_zo_release", ctypes.c_int, [_vp, _vp, _dp, _dp])
zo_adopt = _lib.fn("dpzo_zo_adopt", ctypes.c_int, [_vp, _vp, _dp])
zo_gradient = _lib.fn("dpzo_zo_gradient", ctypes.c_double, [_vp, ctypes.c_uint])
zo_update = _lib.fn("dpzo_zo_update", ctypes.c_int,
                    [_vp, _vp, _u64, ctypes.c_size_t, ctypes.c_int, _vp])
zo_update_cuda = _lib.fn("dpzo_zo_update_cuda", ctypes.c_int,
                         [_vp, _vp, _u64, ctypes.c_size_t, ctypes.c_int, _vp, _vp])
zo_update_public = _lib.fn("dpzo_zo_update_public", ctypes.c_int,
                           [_vp, _vp, _u64, ctypes.c_size_t, ctypes.c_int, _vp, _vp])
zo_update_public_cuda = _lib.fn("dpzo_zo_update_public_cuda", ctypes.c_int,
                                [_vp, _vp, _u64, ctypes.c_size_t, ctypes.c_int, _vp, _vp, _vp])
zo_set_public = _lib.fn("dpzo_zo_set_public", ctypes.c_int, [_vp, _vp, _vp, ctypes.c_uint])
zo_basis = _lib.fn("dpzo_zo_basis", ctypes.c_uint, [_vp])
zo_candidates = _lib.fn("dpzo_zo_candidates", ctypes.c_uint, [_vp])
zo_candidate = _lib.fn("dpzo_zo_candidate", _vp, [_vp, ctypes.c_uint])
zo_choice = _lib.fn("dpzo_zo_choice", ctypes.c_int, [_vp])
zo_clip_sum_candidates = _lib.fn("dpzo_zo_clip_sum_candidates", ctypes.c_int,
                                 [_vp, _vp, _dp, ctypes.c_size_t, _dp])
zo_score_queries = _lib.fn("dpzo_zo_score_queries", ctypes.c_uint, [_vp])
zo_score_direction = _lib.fn("dpzo_zo_score_direction", _vp, [_vp, ctypes.c_uint])
zo_score_lambda = _lib.fn("dpzo_zo_score_lambda", ctypes.c_double, [_vp])
zo_set_score = _lib.fn("dpzo_zo_set_score", ctypes.c_int, [_vp, _vp, _dp, _dp, _vp])
zo_mask = _lib.fn("dpzo_zo_mask", ctypes.POINTER(ctypes.c_float), [_vp])
zo_set_mask = _lib.fn("dpzo_zo_set_mask", ctypes.c_int, [_vp, _vp, _vp])
zo_profile = _lib.fn("dpzo_zo_profile", ctypes.POINTER(_CProfile), [_vp])
zo_abort = _lib.fn("dpzo_zo_abort", None, [_vp])
zo_end = _lib.fn("dpzo_zo_end", ctypes.c_int, [_vp, _vp])
zo_steps_done = _lib.fn("dpzo_zo_steps_done", _u64, [_vp])
zo_set_steps_done = _lib.fn("dpzo_zo_set_steps_done", ctypes.c_int, [_vp, _vp, _u64])
zo_epsilon = _lib.fn("dpzo_zo_epsilon", ctypes.c_double, [_vp])
zo_budget = _lib.fn("dpzo_zo_budget", ctypes.c_double, [_vp])
zo_delta = _lib.fn("dpzo_zo_delta", ctypes.c_double, [_vp])
zo_noise_draws = _lib.fn("dpzo_zo_noise_draws", _u64, [_vp])
zo_take_loss = _lib.fn("dpzo_zo_take_loss", ctypes.c_double, [_vp])
dir_perturb = _lib.fn("dpzo_dir_perturb", None,
                      [_vp, _u64, ctypes.c_size_t, ctypes.c_double, ctypes.c_int, _vp, _vp])
cuda_dir_perturb = _lib.fn("dpzo_cuda_dir_perturb", ctypes.c_int,
                           [_vp, _vp, _u64, ctypes.c_size_t, ctypes.c_double, ctypes.c_int,
                            _vp, _vp, _vp])
cuda_available = _lib.fn("dpzo_cuda_available", ctypes.c_int, [])

# dpzo_dtype
DTYPES = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2}


def dtype_code(t: torch.Tensor, what: str) -> int:
    code = DTYPES.get(t.dtype)
    if code is None:
        raise Error(f"{what}: dpzo.torch tunes float32, bfloat16 and float16 parameters, "
                    f"got {t.dtype}")
    return code


def address(t: torch.Tensor, what: str) -> int:
    if not t.is_contiguous():
        raise Error(f"{what}: a contiguous tensor is needed (call .contiguous() on the "
                    "parameter's data once before training)")
    if t.device.type not in ("cpu", "cuda"):
        raise Error(f"{what}: CPU and CUDA tensors are supported, got device {t.device}")
    return int(t.data_ptr())


def stream_of(t: torch.Tensor) -> Any:
    """PyTorch's current stream on t's device, as a cudaStream_t (a void pointer)."""
    return _vp(torch.cuda.current_stream(t.device).cuda_stream)


# CPU tensors of at least this many elements are split over threads: every element is a
# function of its global index alone, so the pieces give the same bits as one call, and
# ctypes releases the GIL during each call.
_PARALLEL_MIN = 1 << 20
_pool: Any = None


def _pieces(n: int) -> list:
    """[(offset, count)] covering n elements: one piece, or one per torch CPU thread (cut at
    multiples of 4096 elements, whole Philox blocks)."""
    workers = torch.get_num_threads()
    if n < _PARALLEL_MIN or workers < 2:
        return [(0, n)]
    step = -(-n // workers)
    step = -(-step // 4096) * 4096
    return [(o, min(step, n - o)) for o in range(0, n, step)]


def _run(jobs: list) -> None:
    """Runs the C calls of jobs (callables), in threads when there are several."""
    global _pool
    if len(jobs) == 1:
        jobs[0]()
        return
    if _pool is None:
        import concurrent.futures
        _pool = concurrent.futures.ThreadPoolExecutor(max_workers=torch.get_num_threads(),
                                                      thread_name_prefix="dpzo")
    for f in [_pool.submit(job) for job in jobs]:
        f.result()


def perturb_into(direction: int, j0: int, x: torch.Tensor, alpha: float,
                 out: torch.Tensor) -> None:
    """out = x + alpha u (elements j0 .. of the direction), out of place, by the C kernel."""
    n = x.numel()
    if n == 0:
        return
    code = dtype_code(x, "perturb")
    xa, oa = address(x, "perturb"), address(out, "perturb")
    if x.device.type == "cuda":
        _lib.call(cuda_dir_perturb, _vp(direction), j0, n, alpha, code, xa, oa, stream_of(x))
        return
    size = x.element_size()
    _run([lambda o=o, c=c: dir_perturb(_vp(direction), j0 + o, c, alpha, code, xa + o * size,
                                       oa + o * size) for o, c in _pieces(n)])


def update(zo: int, j0: int, theta: torch.Tensor) -> None:
    """theta -= (lr / Q) sum_k g_k u_k on the tensor's own storage, by the C kernel."""
    n = theta.numel()
    if n == 0:
        return
    code = dtype_code(theta, "update")
    ta = address(theta, "update")
    if theta.device.type == "cuda":
        _lib.call(zo_update_cuda, _vp(zo), j0, n, code, ta, stream_of(theta))
        return
    size = theta.element_size()
    _run([lambda o=o, c=c: _lib.call(zo_update, _vp(zo), j0 + o, c, code, ta + o * size)
          for o, c in _pieces(n)])


def update_public(zo: int, j0: int, theta: torch.Tensor, grad: torch.Tensor) -> None:
    """pazo-m: theta -= lr alpha grad (grad: float32, theta's shape and device)."""
    n = theta.numel()
    if n == 0:
        return
    code = dtype_code(theta, "update")
    if theta.device.type == "cuda":
        _lib.call(zo_update_public_cuda, _vp(zo), j0, n, code, address(theta, "update"),
                  address(grad, "public gradient"), stream_of(theta))
    else:
        _lib.call(zo_update_public, _vp(zo), j0, n, code, address(theta, "update"),
                  address(grad, "public gradient"))
