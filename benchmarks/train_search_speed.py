"""Layouts evaluated per second by the training search (median of several runs).

The search is vectorised over layouts; the baseline prices the same layouts one
at a time through the same function, in the same process.

    python benchmarks/train_search_speed.py
"""

from __future__ import annotations

import statistics
import time

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf import training
from clusterplan.perf.model import preset
from clusterplan.spec import load_spec


def main() -> None:
    spec = load_spec(overrides=["cluster.num_nodes=128"])
    hw = training.hardware(design(spec, load_catalog()))
    model = preset("llama2-70b")
    opts = training.Options(seq_len=4096, global_batch=1024)
    grid, _ = training.layouts(model, 1024, 8, opts, {})
    n = len(grid["tp"])
    training.evaluate(model, hw, opts, grid)  # warm caches (straggler integral, imports)
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        training.evaluate(model, hw, opts, grid)
        runs.append(time.perf_counter() - start)
    vectorised = n / statistics.median(runs)
    subset = min(n, 200)
    start = time.perf_counter()
    for i in range(subset):
        training.evaluate(model, hw, opts, {k: v[i:i + 1] for k, v in grid.items()})
    scalar = subset / (time.perf_counter() - start)
    start = time.perf_counter()
    found = training.search(model, hw, opts, 1024, {})
    whole = time.perf_counter() - start
    print(f"llama2-70b on 1,024 H100: {n:,} layouts")
    print(f"vectorised evaluate: {vectorised:,.0f} layouts/s (median of 7)")
    print(f"one layout at a time: {scalar:,.0f} layouts/s ({vectorised / scalar:.0f}x slower)")
    print(f"whole search (enumerate, evaluate, rank): {whole:.3f} s, {found.num_evaluated:,} evaluated")


if __name__ == "__main__":
    main()
