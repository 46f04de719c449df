"""Calibration before and after, on every nccl-tests run in shared/data/validation.

Usage: python benchmarks/calibration_gain.py

Each run of nccl_tests_allreduce_tables.csv is written out as an nccl-tests
table (report.nccl.render_bench), read back with the nccl-tests parser and
calibrated. Errors are |predicted - measured| / measured of out-of-place time:
the model as shipped (hardware as in validate_collectives.py), the calibration
fitted on all of the run's sizes, and fitted on every other size and scored on
the sizes it did not see.
"""

from __future__ import annotations

import csv
import io
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from validate_collectives import DATA, TABLE_RUNS  # noqa: E402

from clusterplan.bench.calibrate import fit_rows  # noqa: E402
from clusterplan.bench.nccltests import parse_nccl_tests  # noqa: E402
from clusterplan.perf.collectives import predict  # noqa: E402
from clusterplan.report.nccl import render_bench  # noqa: E402


def runs(data: Path) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in csv.DictReader(open(data / "nccl_tests_allreduce_tables.csv")):
        grouped.setdefault(row["test_id"], []).append(row)
    return grouped


def as_log(rows: list[dict]) -> str:
    """The run as nccl-tests prints it."""
    def placement(prefix: str, row: dict) -> dict:
        return {"time_s": float(row[f"{prefix}_time_us"]) * 1e-6, "algbw_GBps": float(row[f"{prefix}_algbw_GBps"]),
                "busbw_GBps": float(row[f"{prefix}_busbw_GBps"]), "wrong": int(row[f"{prefix}_wrong"])}
    doc = {"op": "all_reduce", "world_size": int(rows[0]["num_ranks"]), "backend": "nccl", "rows": [
        {"size_bytes": int(r["size_bytes"]), "count": int(r["count"]), "dtype": r["dtype"], "redop": r["redop"],
         "root": int(r["root"]), "out_of_place": placement("oop", r), "in_place": placement("ip", r)} for r in rows]}
    stream = io.StringIO()
    render_bench(doc, stream)
    return stream.getvalue()


def errors(points, time_of) -> list[float]:
    return [abs(time_of(size) - t) / t for size, t in points]


def main() -> int:
    print(f"{'run':40} {'rows':>4} {'model':>16} {'calibrated':>16} {'held out':>16}")
    for test_id, rows in runs(DATA).items():
        log = parse_nccl_tests(as_log(rows), source=test_id)
        points = [(r.size_bytes, r.out_of_place.time_s) for r in log.rows if r.out_of_place.time_s > 0]
        ranks = int(rows[0]["num_ranks"])
        sizes = np.array([s for s, _ in points], dtype=float)
        model = predict("all_reduce", sizes, TABLE_RUNS[test_id].system, ranks).time_s
        before = [abs(m - t) / t for m, (_, t) in zip(model, points)]
        after = errors(points, fit_rows("all_reduce", ranks, points).time_s)
        train, test = points[::2], points[1::2]
        held = errors(test, fit_rows("all_reduce", ranks, train).time_s) if len(train) >= 2 and test else []

        def cell(values: list[float]) -> str:
            return f"{statistics.median(values):6.1%} / {statistics.mean(values):6.1%}" if values else "-"
        print(f"{test_id[:40]:40} {len(points):>4} {cell(before):>16} {cell(after):>16} {cell(held):>16}")
    print("cells: median / mean of |predicted - measured| / measured of time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
