"""The layout search: price every layout a job's constraints allow at once, keep the fastest that fit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clusterplan.perf.hardware import Hardware, Options
from clusterplan.perf.layout import Constraints, layouts
from clusterplan.perf.model import Transformer
from clusterplan.perf.step import Prediction, evaluate
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class Search:
    """The best layouts found, fastest first, and how many layouts each reason rejected."""

    best: tuple[Prediction, ...]
    num_evaluated: int
    rejected: dict[str, int]


def search(model: Transformer, hw: Hardware, options: Options, num_gpus: int,
           constraints: Constraints = Constraints(), *, top: int = 10) -> Search:
    """Evaluate every layout of ``num_gpus`` GPUs that ``constraints`` allows; rank those that fit by step time."""
    grid, rejected = layouts(model, num_gpus, hw.system.gpus_per_node, options, constraints)
    if not len(grid):
        return Search(best=(), num_evaluated=0, rejected=rejected)
    result = evaluate(model, hw, options, grid)
    fits = result.fits
    if np.count_nonzero(~fits):
        need = float(np.min(result.memory.total))
        reason = (f"does not fit in GPU memory (the smallest needs {need / 2**30:,.0f} GiB per GPU, "
                  f"has {hw.hbm_bytes / 2**30:,.0f})")
        rejected[reason] = int(np.count_nonzero(~fits))
    order = np.argsort(result.step.total, kind="stable")
    order = order[fits[order]][:top]
    return Search(best=tuple(result.row(int(i)) for i in order), num_evaluated=len(grid), rejected=rejected)
