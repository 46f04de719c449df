"""The layout search: price every layout a job's constraints allow at once, at each global batch it may take,
and keep the fastest that fit, each distinct layout once (docs/training.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np

from clusterplan.perf.bound import held, node_key, tokens_per_s_bound
from clusterplan.perf.hardware import Hardware, Options
from clusterplan.perf.layout import Constraints, Layouts, layouts
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


PROBE_ROWS = 256      # layouts priced first, the highest bounds, to learn the tokens/s the rest must beat
BOUND_SLACK = 1e-6    # a layout is priced unless its bound is this far below that (rounding's room, a safety)


def search(model: Transformer, hw: Hardware, options: Options, num_gpus: int,
           constraints: Constraints = Constraints(), *, top: int = 10,
           global_batches: Sequence[int] = ()) -> Search:
    """Evaluate every layout of ``num_gpus`` GPUs that ``constraints`` allows at each of ``global_batches``
    (default: the options' one); rank those that fit by tokens/s (step time at one batch).

    Layouts that differ only in a recomputation choice that recomputes nothing ("block" needing no layer,
    beside "none") price identically; each is listed once, the first of ``RECOMPUTE``'s order.

    Every layout is checked against memory; of those that fit, only the ones whose tokens/s bound (perf/bound.py:
    the step without communication) can reach the ``top`` fastest priced so far have their communication priced,
    every batch's in one grid. The layouts skipped could not have ranked: the result is the one pricing them all
    would give.
    """
    batches = tuple(dict.fromkeys(global_batches)) or (options.global_batch,)
    screened = _screened(model, hw, options, num_gpus, constraints, batches)
    return Search(best=_best(model, hw, screened, top), num_evaluated=screened.num_evaluated,
                  rejected=dict(screened.rejected), global_batches=batches)


@dataclass(**FROZEN, eq=False)
class _Screen:
    """A search's layouts before any communication is priced: what the rules and memory rejected, and the layouts
    that fit, every batch's in one grid, with each one's batch, its place in its batch's grid and its bound."""

    rejected: dict[str, int]
    num_evaluated: int
    options: Options
    grid: Layouts | None              # None: nothing fits
    global_batch: np.ndarray          # sequences per step of each layout
    batch: np.ndarray                 # ... as the index of its batch in the search's
    position: np.ndarray              # where it stood in that batch's grid
    bound: np.ndarray                 # the most tokens/s it can reach (perf/bound.py)


# Grids kept for the next screen of the same model, GPUs per node and options (size's GPU types of one server
# size ask the same grids), and screens kept for the next search that asks the same of the same GPU: the layouts,
# their memory and bounds read no part of the network (perf/bound.py), so size's fabrics of one GPU count share
# one screen. Both are read, never written.
_GRIDS: dict = {}
_GRIDS_KEPT = 256
_SCREENS: dict = {}
_SCREENS_KEPT = 64


def forget() -> None:
    """Drop the grids and screens kept (benchmarks/size_speed.py times a search from cold)."""
    _GRIDS.clear()
    _SCREENS.clear()


def _kept(store: dict, most: int, key, make):
    if key not in store:
        if len(store) >= most:
            store.pop(next(iter(store)))
        store[key] = make()
    return store[key]


def _screened(model: Transformer, hw: Hardware, options: Options, num_gpus: int, constraints: Constraints,
              batches: tuple[int, ...]) -> _Screen:
    """``_screen``, kept under everything it reads (the hardware but its network: ``bound.node_key``)."""
    key = (model, options, num_gpus, constraints, batches, node_key(hw))
    return _kept(_SCREENS, _SCREENS_KEPT, key, lambda: _screen(model, hw, options, num_gpus, constraints, batches))


def _screen(model: Transformer, hw: Hardware, options: Options, num_gpus: int, constraints: Constraints,
            batches: tuple[int, ...]) -> _Screen:
    """Every layout at each batch through the rules and memory; the bound of each that fits."""
    rejected: dict[str, int] = {}
    parts: list[tuple] = []
    evaluated, unfit, smallest = 0, 0, float("inf")
    for index, batch in enumerate(batches):
        batch_options = replace(options, global_batch=batch)
        key = (model, num_gpus, hw.system.gpus_per_node, batch_options, constraints)
        grid, dropped = _kept(_GRIDS, _GRIDS_KEPT, key, lambda: layouts(model, num_gpus, hw.system.gpus_per_node,
                                                                        batch_options, constraints))
        for reason, count in dropped.items():
            rejected[reason] = rejected.get(reason, 0) + count
        if not len(grid):
            continue
        memory = held(model, hw, batch_options, grid)
        evaluated += len(grid)
        if np.count_nonzero(~memory.fits):
            unfit += int(np.count_nonzero(~memory.fits))
            smallest = min(smallest, float(np.min(memory.total_bytes)))
        positions = np.flatnonzero(memory.fits)
        if len(positions):
            fitting = grid.select(positions)
            parts.append((index, batch, fitting, positions, tokens_per_s_bound(model, hw, batch_options, fitting)))
    if unfit:
        rejected[f"does not fit in GPU memory (the smallest needs {smallest / 2**30:,.0f} GiB per GPU, has "
                 f"{hw.usable_bytes / 2**30:,.0f} of {hw.hbm_bytes / 2**30:,.0f} with {hw.memory_margin:.0%} "
                 f"kept free)"] = unfit
    empty = np.zeros(0, np.int64)
    if not parts:
        return _Screen(rejected=rejected, num_evaluated=evaluated, options=options, grid=None, global_batch=empty,
                       batch=empty, position=empty, bound=np.zeros(0))
    grids = [part[2] for part in parts]
    return _Screen(rejected=rejected, num_evaluated=evaluated, options=options,
                   grid=Layouts(**{f.name: np.concatenate([getattr(g, f.name) for g in grids]) for f in fields(Layouts)}),
                   global_batch=np.concatenate([np.full(len(g), part[1], np.int64) for g, part in zip(grids, parts)]),
                   batch=np.concatenate([np.full(len(g), part[0], np.int64) for g, part in zip(grids, parts)]),
                   position=np.concatenate([part[3] for part in parts]),
                   bound=np.concatenate([part[4] for part in parts]))


def _best(model: Transformer, hw: Hardware, screen: _Screen, top: int) -> tuple[Prediction, ...]:
    """The ``top`` fastest distinct predictions: the highest bounds priced first, then every layout whose bound
    can still reach the ``top``-th of those; ranked as pricing every layout would (tokens/s, then the batch's
    order, then the grid's)."""
    if screen.grid is None:
        return ()
    order = np.argsort(-screen.bound, kind="stable")
    first = order[:max(PROBE_ROWS, 4 * top)]
    priced = [_price(model, hw, screen, first)]
    found = _distinct(screen, priced, top)
    floor = min(p.tokens_per_s for p in found) if len(found) == top else 0.0
    rest = order[len(first):]
    rest = rest[screen.bound[rest] >= floor * (1 - BOUND_SLACK)]
    if not len(rest):
        return found
    priced.append(_price(model, hw, screen, rest))
    return _distinct(screen, priced, top)


def _price(model: Transformer, hw: Hardware, screen: _Screen, rows: np.ndarray) -> tuple[np.ndarray, Prediction]:
    """(the rows, their predictions): ``evaluate`` of the screen's layouts ``rows``, each at its batch."""
    return rows, evaluate(model, hw, screen.options, screen.grid.select(rows), global_batch=screen.global_batch[rows])


def _distinct(screen: _Screen, priced: list[tuple[np.ndarray, Prediction]], top: int) -> tuple[Prediction, ...]:
    """The first ``top`` predictions, fastest first (ties: the batch's order, then the layout's place in its
    grid), whose layout and figures are not an earlier one's."""
    rows = np.concatenate([part[0] for part in priced])
    tokens = np.concatenate([np.asarray(part[1].tokens_per_s, dtype=float) for part in priced])
    which = np.concatenate([np.full(len(part[0]), k) for k, part in enumerate(priced)])
    local = np.concatenate([np.arange(len(part[0])) for part in priced])
    kept: list[Prediction] = []
    seen: set = set()
    for index in np.lexsort((screen.position[rows], screen.batch[rows], -tokens)):
        prediction = priced[int(which[index])][1].row(int(local[index]))
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
