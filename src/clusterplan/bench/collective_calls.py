"""The torch.distributed call of each collective, its buffers, and the untimed check (docs/bench.md).

``collective_call`` returns one callable per op that runs it from a source
view into a target view; ``placement_views`` lays those views out in the send
and receive buffers, out-of-place or in-place as nccl-tests does; ``count_wrong``
runs one call on known inputs (``bench.collective_values``) and counts the
elements that differ from the exact result. ``torch`` is imported inside the
functions that need it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from clusterplan.bench.collective_values import expected_values, input_values, modulus
from clusterplan.bench.collectives import ROOT, Group, buffer_elements

CHUNK = 1 << 22                        # elements filled or checked at a time (bounds check memory)


def all_gather_function(dist: Any) -> Callable:
    return getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def reduce_scatter_function(dist: Any) -> Callable:
    return getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def has_reduce_scatter(dist: Any, device: Any, dtype: Any) -> bool:
    """Whether the backend has reduce_scatter (gloo before torch 2.6 or so has not)."""
    import torch

    n = dist.get_world_size()
    try:
        reduce_scatter_function(dist)(torch.zeros(1, dtype=dtype, device=device),
                                      torch.zeros(n, dtype=dtype, device=device))
    except RuntimeError as error:
        if re.search(r"not supported|does not support|not implemented", str(error), re.IGNORECASE):
            return False
        raise
    return True


def collective_call(op: str, dist: Any, rank: int, n: int, *, emulated: bool, group: Any = None) -> Callable:
    """The torch call that runs ``op`` from ``source`` into ``target``.

    ``group`` (a torch.distributed group, ``rank`` and ``n`` within it) serves the ops without a root or a
    peer rank: all_reduce, all_gather, reduce_scatter and alltoall; None is the world.
    """
    where = {"group": group} if group is not None else {}
    if op == "all_reduce":
        return lambda source, target: dist.all_reduce(target, **where)
    if op == "all_gather":
        gather = all_gather_function(dist)
        return lambda source, target: gather(target, source, **where)
    if op == "reduce_scatter" and not emulated:
        scatter = reduce_scatter_function(dist)
        return lambda source, target: scatter(target, source, **where)
    if op == "reduce_scatter":
        def emulation(source, target):
            dist.all_reduce(source, **where)
            mine = source[rank * target.numel():(rank + 1) * target.numel()]
            if mine.data_ptr() != target.data_ptr():
                target.copy_(mine)
        return emulation
    if op == "broadcast":
        return lambda source, target: dist.broadcast(source if rank == ROOT else target, src=ROOT)
    if op == "reduce":
        return lambda source, target: dist.reduce(target, dst=ROOT)
    if op == "alltoall":
        return lambda source, target: dist.all_to_all_single(target, source, **where)
    if n == 1:  # sendrecv to oneself
        return lambda source, target: target.copy_(source)

    def ring_shift(source, target):
        for work in dist.batch_isend_irecv([dist.P2POp(dist.isend, source, (rank + 1) % n),
                                            dist.P2POp(dist.irecv, target, (rank - 1) % n)]):
            work.wait()
    return ring_shift


def placement_views(op: str, placement: str, send: Any, recv: Any, rank: int, n: int, count: int) -> tuple[Any, Any]:
    """(source, target) of one call: separate buffers, or in-place as nccl-tests lays it out."""
    send_elements, recv_elements = buffer_elements(op, count, n)
    if placement == "out_of_place":
        return send[:send_elements], recv[:recv_elements]
    if op == "all_gather":
        target = recv[:recv_elements]
        return target[rank * count:(rank + 1) * count], target
    if op == "reduce_scatter":
        source = send[:send_elements]
        return source, source[rank * count:(rank + 1) * count]
    return recv[:recv_elements], recv[:recv_elements]


def synchronize(device: Any) -> None:
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)


def count_wrong(op: str, placement: str, call: Callable, send: Any, recv: Any, group: Group, count: int,
                dtype_name: str) -> int:
    """Wrong elements on this rank after one call on known inputs (untimed)."""
    import torch

    n, rank = group.world_size, group.rank
    m = modulus(n, dtype_name)
    source, target = placement_views(op, placement, send, recv, rank, n, count)
    target.fill_(math.nan)   # what the call does not write stays wrong
    for low in range(0, source.numel(), CHUNK):
        index = torch.arange(low, min(low + CHUNK, source.numel()), device=source.device)
        source[low:low + CHUNK] = input_values(op, rank, n, index, m).to(source.dtype)
    if placement == "out_of_place" and op in ("all_reduce", "reduce"):
        target.copy_(source)
    call(source, target)
    synchronize(group.device)
    if (op == "reduce" and rank != ROOT) or (op == "broadcast" and placement == "out_of_place" and rank == ROOT):
        return 0   # nothing defined there
    wrong = 0
    for low in range(0, target.numel(), CHUNK):
        index = torch.arange(low, min(low + CHUNK, target.numel()), device=target.device)
        expected = expected_values(op, rank, n, count, index, m).to(target.dtype)
        wrong += int((_comparable(target[low:low + CHUNK]) != _comparable(expected)).sum())
    return wrong


def _comparable(values: Any) -> Any:
    """1-byte floats as float32 (exactly), since not every device compares fp8 directly; others as they are."""
    import torch

    return values.to(torch.float32) if values.is_floating_point() and values.element_size() == 1 else values
