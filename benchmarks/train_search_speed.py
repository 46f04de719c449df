"""Layouts priced per second by the training model: a whole grid at once, and one layout at a time.

The search prices every layout as numpy arrays in one call; plan, size and a web
server price one layout per call, through the same formulas on Python floats.
Each figure is the median of several runs in the same process.

    python benchmarks/train_search_speed.py
"""

from __future__ import annotations

import statistics
import time

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.layout import Layout, layouts
from clusterplan.perf.presets import preset
from clusterplan.perf.search import forget, search
from clusterplan.perf.step import evaluate
from clusterplan.spec import load_spec

RUNS = 7
ONE_AT_A_TIME = 500   # layouts, spread over the grid


def median_s(work) -> float:
    runs = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    spec = load_spec(overrides=["cluster.num_nodes=128"])
    hw = hardware(design(spec, load_catalog()))
    model = preset("llama2-70b")
    opts = Options(seq_len=4096, global_batch=1024)
    grid, _ = layouts(model, 1024, 8, opts)
    n = len(grid)
    chosen = [grid.row(i) for i in range(0, n, max(1, n // ONE_AT_A_TIME))]
    values = [{name: getattr(layout, name) for name in Layout.__dataclass_fields__} for layout in chosen]
    evaluate(model, hw, opts, grid)  # warm caches (straggler integral, collective candidates)

    def one_at_a_time():
        for fields in values:
            evaluate(model, hw, opts, Layout(**fields))   # a request: make the layout, price it

    vectorised = n / median_s(lambda: evaluate(model, hw, opts, grid))
    scalar = len(values) / median_s(one_at_a_time)
    whole = median_s(lambda: (forget(), search(model, hw, opts, 1024)))   # from cold: no grid or screen kept
    print(f"llama2-70b on 1,024 H100: {n:,} layouts")
    print(f"vectorised evaluate: {vectorised:,.0f} layouts/s (median of {RUNS})")
    print(f"one layout at a time: {scalar:,.0f} layouts/s (median of {RUNS}, {len(values)} layouts each, "
          f"{vectorised / scalar:.0f}x slower)")
    print(f"whole search (enumerate, check memory, bound, price what can rank, rank): {whole:.3f} s "
          f"(median of {RUNS}), {n:,} evaluated")


if __name__ == "__main__":
    main()
