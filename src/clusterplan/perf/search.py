"""The layout search: price every layout a job's constraints allow at once, at each global batch it may take,
and keep the fastest that fit, each distinct layout once (docs/training.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from clusterplan.perf.hardware import Hardware, Options
from clusterplan.perf.layout import Constraints, layouts
from clusterplan.perf.model import Transformer
from clusterplan.perf.step import Prediction, evaluate
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class Search:
    """The best layouts found, fastest (most tokens/s) first, and how many layouts each reason rejected."""

    best: tuple[Prediction, ...]
    num_evaluated: int
    rejected: dict[str, int]
    global_batches: tuple[int, ...] = ()   # the global batches searched (sequences per step)


def search(model: Transformer, hw: Hardware, options: Options, num_gpus: int,
           constraints: Constraints = Constraints(), *, top: int = 10,
           global_batches: Sequence[int] = ()) -> Search:
    """Evaluate every layout of ``num_gpus`` GPUs that ``constraints`` allows at each of ``global_batches``
    (default: the options' one); rank those that fit by tokens/s (step time at one batch).

    Layouts that differ only in a recomputation choice that recomputes nothing ("block" needing no layer,
    beside "none") price identically; each is listed once, the first of ``RECOMPUTE``'s order.
    """
    batches = tuple(dict.fromkeys(global_batches)) or (options.global_batch,)
    rejected: dict[str, int] = {}
    rows: list[tuple[float, int, Prediction, int]] = []   # (tokens/s, batch index, prediction grid, row)
    evaluated, unfit, smallest = 0, 0, float("inf")
    for index, batch in enumerate(batches):
        batch_options = replace(options, global_batch=batch)
        grid, dropped = layouts(model, num_gpus, hw.system.gpus_per_node, batch_options, constraints)
        for reason, count in dropped.items():
            rejected[reason] = rejected.get(reason, 0) + count
        if not len(grid):
            continue
        result = evaluate(model, hw, batch_options, grid)
        evaluated += len(grid)
        fits = np.asarray(result.fits)
        if np.count_nonzero(~fits):
            unfit += int(np.count_nonzero(~fits))
            smallest = min(smallest, float(np.min(result.memory.total)))
        rows += [(float(result.tokens_per_s[i]), index, result, int(i)) for i in np.flatnonzero(fits)]
    if unfit:
        rejected[f"does not fit in GPU memory (the smallest needs {smallest / 2**30:,.0f} GiB per GPU, has "
                 f"{hw.usable_bytes / 2**30:,.0f} of {hw.hbm_bytes / 2**30:,.0f} with {hw.memory_margin:.0%} "
                 f"kept free)"] = unfit
    rows.sort(key=lambda row: (-row[0], row[1]))
    return Search(best=_distinct(rows, top), num_evaluated=evaluated, rejected=rejected, global_batches=batches)


def _distinct(rows: list, top: int) -> tuple[Prediction, ...]:
    """The first ``top`` predictions of ``rows`` whose layout and figures are not an earlier one's."""
    kept: list[Prediction] = []
    seen: set = set()
    for _, _, grid, index in rows:
        prediction = grid.row(index)
        lay = prediction.layout
        key = (lay.tp, lay.pp, lay.dp, lay.cp, lay.ep, lay.mbs, lay.virtual_stages, lay.zero, prediction.global_batch,
               prediction.hardware_tflops_per_gpu > prediction.tflops_per_gpu, round(prediction.step.total, 9),
               round(prediction.memory.total))
        if key in seen:
            continue
        seen.add(key)
        kept.append(prediction)
        if len(kept) == top:
            break
    return tuple(kept)
