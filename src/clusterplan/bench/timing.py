"""The one timing loop of every benchmark: mean seconds of one of ``iterations`` back-to-back calls.

On a CUDA device the loop is timed by two CUDA events recorded around it,
after a ``torch.cuda.synchronize`` (so that earlier work is not counted) and
read after the end event completes; elsewhere (a CPU, or a host-to-host copy
on a GPU machine) by ``time.perf_counter``, the calls returning when done.
Warm-up calls run first and are not timed. ``torch`` is imported only on the
CUDA path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

# What a measurement tells its caller as it goes: (steps done, steps in all or 0 when unknown, the step now).
Progress = Callable[[int, int, str], None]


def time_calls(call: Callable[[], object], iterations: int, *, warmup: int = 0, device: Any = None) -> float:
    """Seconds per call of ``iterations`` calls of ``call`` after ``warmup`` untimed ones.

    ``device`` is the torch device the calls run on: CUDA events time a CUDA device, the wall clock
    anything else (``None`` included).
    """
    for _ in range(warmup):
        call()
    if device is not None and device.type == "cuda":
        return _cuda_events(call, iterations, device)
    began = time.perf_counter()
    for _ in range(iterations):
        call()
    return (time.perf_counter() - began) / iterations


def _cuda_events(call: Callable[[], object], iterations: int, device: Any) -> float:
    import torch

    torch.cuda.synchronize(device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / iterations
