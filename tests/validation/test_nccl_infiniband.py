"""Multi-node InfiniBand collectives against published nccl-tests results (benchmarks/data/validation/
nccl_busbw_infiniband.csv and the InfiniBand tables of nccl_tests_tables.csv): every row sourced and dated, every
run described by catalog entries, and the issue's goal held: |predicted - measured| / measured of busbw at >= 64 MiB
with a median <= 15 % across the clusters (each cluster's median), no cluster's median past 25 %."""

import csv
import re
import statistics
import sys
from pathlib import Path

import pytest

from clusterplan.catalog import load_catalog
from clusterplan.perf.collectives import ALGORITHMS, OPS

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
validate_collectives = pytest.importorskip("validate_collectives")

PROJECT = BENCHMARKS / "data" / "validation"
MiB = 2**20
ROWS = list(csv.DictReader(open(PROJECT / "nccl_busbw_infiniband.csv")))
TABLES = list(csv.DictReader(open(PROJECT / "nccl_tests_tables.csv")))


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row['dataset'][:30]} {row['num_nodes']}n {row['algorithm']}")
def test_every_point_is_sourced_and_in_the_catalog(row):
    """A URL, an ISO date and a named source; the GPU and fabric are catalog ids; 8 GPUs a node as counted."""
    catalog = load_catalog()
    assert row["source_url"].startswith("https://") and row["source"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"])
    catalog.get("gpus", row["gpu_id"])
    assert catalog.get("fabrics", row["fabric"]).technology == "infiniband"
    assert int(row["num_gpus"]) == 8 * int(row["num_nodes"])
    assert row["collective"] in OPS and row["algorithm"] in ("", *ALGORITHMS)
    assert float(row["busbw_GBps"]) > 0 and float(row["size_bytes"]) > 0


def test_every_table_row_names_its_run_and_source():
    """Each nccl_tests_tables.csv row belongs to a run the script describes, with its URL and date."""
    for row in TABLES:
        assert row["test_id"] in validate_collectives.TABLE_RUNS, row["test_id"]
        assert row["source_url"].startswith("https://") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"])


@pytest.mark.skipif(not validate_collectives.DATA.is_dir(), reason="shared validation data not beside this checkout")
def test_multi_node_infiniband_goal():
    """Median over the clusters of each one's median |error| <= 15 % at >= 64 MiB; 12 clusters, none past 25 %
    (as printed by benchmarks/validate_collectives.py: 5.6 %, the worst 16.5 %)."""
    clusters: dict[str, list[float]] = {}
    for point in validate_collectives.residuals():
        if point.technology == "infiniband" and point.num_nodes > 1 and point.size_bytes >= 64 * MiB:
            clusters.setdefault(point.label, []).append(abs(1 / (1 + point.error) - 1))
    medians = [statistics.median(errors) for errors in clusters.values()]
    assert len(clusters) >= 12
    assert statistics.median(medians) <= 0.15
    assert max(medians) <= 0.25
