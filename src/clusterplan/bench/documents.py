"""The ``clusterplan.bench/1`` document: measured collective rows, from the benchmark or an nccl-tests log.

One document shape serves ``bench collectives --out``, ``bench parse`` and
``calibrate`` (docs/bench.md, docs/nccltests.md). A row is ``{size_bytes,
count, dtype, op, redop, root, out_of_place: {time_s, algbw_GBps, busbw_GBps,
wrong}, in_place: {...} or None}``; times in seconds, bandwidths in GB/s
(1e9 B/s) as nccl-tests prints them. ``report.nccl.render_bench`` draws it as
the nccl-tests table.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from clusterplan import __version__
from clusterplan.bench.collectives import AVERAGE_MODES, REDUCING, ROOT, ROOTED, BenchRun, Timing
from clusterplan.bench.nccltests import NcclTestsLog
from clusterplan.bench.nccltests_table import Placement
from clusterplan.perf.collectives import bus_factor

BENCH_SCHEMA = "clusterplan.bench/1"


def bench_document(*, op: str | None, rows: list[dict], world_size: int | None, num_nodes: int | None = None,
                   hosts: list[str] | None = None, backend: str = "", versions: dict | None = None,
                   source: str = "", extra: dict | None = None) -> dict[str, Any]:
    """Measured collective rows (from the benchmark or an nccl-tests log) as one document."""
    return {"schema": BENCH_SCHEMA, "version": __version__, "op": op, "world_size": world_size,
            "num_nodes": num_nodes, "hosts": hosts or [], "backend": backend, "versions": versions or {},
            "source": source, "rows": [{**row, "op": row.get("op", op)} for row in rows], **(extra or {})}


def bench_run_document(run: BenchRun) -> dict[str, Any]:
    """What ``bench collectives`` measured, with its configuration, ranks and notes."""
    op, config = run.config.op, run.config

    def placement(t: Timing | None) -> dict | None:
        return None if t is None else {"time_s": t.time_s, "algbw_GBps": t.algbw_GBps,
                                       "busbw_GBps": t.busbw_GBps, "wrong": t.wrong}

    rows = [{"size_bytes": row.size_bytes, "count": row.count, "dtype": config.dtype, "op": op,
             "redop": "sum" if op in REDUCING else None, "root": ROOT if op in ROOTED else None,
             "out_of_place": placement(row.out_of_place), "in_place": placement(row.in_place)} for row in run.rows]
    extra = {"dtype": config.dtype, "bus_factor": bus_factor(op, run.world_size),
             "average": {"mode": config.average, "meaning": AVERAGE_MODES[config.average]},
             "config": asdict(config), "ranks": [asdict(info) for info in run.ranks],
             "notes": list(run.notes), "wrong": run.wrong, "avg_busbw_GBps": run.avg_busbw_GBps}
    return bench_document(op=op, rows=rows, world_size=run.world_size, num_nodes=len(run.hosts), hosts=run.hosts,
                          backend=run.backend, versions=dict(run.versions), source="clusterplan bench collectives",
                          extra=extra)


def log_document(log: NcclTestsLog, *, source: str) -> dict[str, Any]:
    """An nccl-tests log as a ``clusterplan.bench/1`` document."""
    versions = {k: v for k, v in (("nccl-tests", log.version), ("nccl", log.nccl_version)) if v}
    return bench_document(op=log.op, rows=rows_as_dicts(log), world_size=log.num_ranks, backend="nccl-tests log",
                          versions=versions, source=source,
                          extra={"avg_busbw_GBps": log.avg_busbw_GBps, "num_truncated_rows": log.num_truncated_rows})


def rows_as_dicts(log: NcclTestsLog) -> list[dict]:
    """The log's rows as JSON-ready dicts (the row shape of the ``clusterplan.bench/1`` schema)."""
    def placement(p: Placement | None) -> dict | None:
        if p is None:
            return None
        return {"time_s": p.time_s, "algbw_GBps": p.algbw_GBps, "busbw_GBps": p.busbw_GBps,
                "wrong": p.wrong, "error": p.error}

    return [{"size_bytes": r.size_bytes, "count": r.count, "dtype": r.dtype, "redop": r.redop,
             "root": r.root, "out_of_place": placement(r.out_of_place),
             "in_place": placement(r.in_place)} for r in log.rows]
