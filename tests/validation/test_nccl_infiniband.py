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
    """Median over the clusters of each one's median |error| <= 15 % at >= 64 MiB, the points tree.CHANNEL_Bps is
    fitted on left out; 12 clusters, none past 25 % (the clusters as benchmarks/validate_collectives.py prints
    them)."""
    clusters = validate_collectives.infiniband_clusters(validate_collectives.residuals())
    medians = [cluster.median for cluster in clusters]
    assert len(clusters) >= 12
    assert statistics.median(medians) <= 0.15
    assert max(medians) <= 0.25
    assert sum(cluster.calibration for cluster in clusters) == 2


def test_the_calibration_points_are_the_two_node_b200_trees():
    """tree.CHANNEL_Bps's points (perf/tree.py: busbw 335.2 and 338.6 GB/s on two B200 nodes, NCCL_ALGO=Tree)
    are exactly the rows CALIBRATION names, and they are flagged as such."""
    fitted = [row for row in ROWS
              if (row["gpu_id"], row["algorithm"], int(row["num_nodes"])) in validate_collectives.CALIBRATION]
    assert sorted(float(row["busbw_GBps"]) for row in fitted) == [335.2, 338.63]
    flagged = [p for p in validate_collectives.infiniband_points() if p.calibration]
    assert sorted(p.measured_GBps for p in flagged) == [335.2, 338.63]


def test_the_goal_counts_each_cluster_once_and_leaves_out_its_calibration_points():
    """Hand-made residuals: two InfiniBand points of one cluster at >= 64 MiB (|error| of busbw 10 % and 50 %,
    the second a calibration point), one below 64 MiB, one on one node, one on Ethernet: one cluster, one error,
    the calibration point counted apart, its most nodes over all its points."""
    residual = validate_collectives.Residual
    points = (residual("a", "b200", "infiniband", 2, 128 * MiB, 1 / 1.1 - 1),
              residual("a", "b200", "infiniband", 2, 128 * MiB, 1 / 1.5 - 1, calibration=True),
              residual("a", "b200", "infiniband", 8, 1 * MiB, 0.3),
              residual("b", "b200", "infiniband", 1, 128 * MiB, 0.3),
              residual("c", "b200", "ethernet", 4, 128 * MiB, 0.3))
    (cluster,) = validate_collectives.infiniband_clusters(points)
    assert cluster.label == "a" and cluster.errors == pytest.approx((0.1,))
    assert cluster.calibration == 1 and cluster.most_nodes == 8


def _row(test_id: str, size: int, oop_us: float, ip_us: float) -> dict:
    return {"test_id": test_id, "size_bytes": str(size), "oop_time_us": str(oop_us), "ip_time_us": str(ip_us),
            "oop_busbw_GBps": str(size / oop_us), "ip_busbw_GBps": str(size / ip_us)}


def test_a_row_is_its_out_of_place_column_unless_it_stalled():
    """Regression (review finding 6: the faster of the two columns biased measured busbw upward). #309's 8-node
    run at 8 MiB (1272.4 us out-of-place, 321.4 in-place, 203.8 and 378.1 us either side) stalled: in-place.
    #309's 4-node run at 2 MiB (191.3 us out-of-place, 132.2 in-place: 1.45x) keeps its out-of-place column, as
    does a 2.5x gap whose out-of-place time is no spike (shorter than the next size's); every other row too."""
    rows = [_row("a", 4, 203.8, 200.0), _row("a", 8, 1272.4, 321.4), _row("a", 16, 378.1, 370.0),
            _row("b", 1, 82.17, 80.0), _row("b", 2, 191.3, 132.2), _row("b", 4, 151.1, 150.0),
            _row("c", 1, 50.0, 20.0), _row("c", 2, 60.0, 60.0)]
    measured = validate_collectives.table_busbw(rows)
    assert measured[1] == pytest.approx(8 / 321.4)                 # the stall: in-place
    assert measured[4] == pytest.approx(2 / 191.3)                 # 1.45x: out-of-place
    assert measured[6] == pytest.approx(1 / 50.0)                  # 2.5x but faster than the next size
    assert [m for i, m in enumerate(measured) if i not in (1,)] == pytest.approx(
        [float(row["oop_busbw_GBps"]) for i, row in enumerate(rows) if i != 1])


def test_a_stall_at_a_sweep_end_is_judged_against_its_one_neighbour():
    """The first size of a sweep: #309's gj-aion 4-node run starts at 1 MiB in 317.0 us out-of-place, 93.3 in
    place, 226.8 us at 2 MiB: stalled (longer than twice the message). At the top of a sweep the one neighbour is
    half the message, which a bandwidth-bound timing always exceeds: a stall there must be more than twice it
    (regression: the neighbour test did no work at the top)."""
    assert validate_collectives.stalled(317.0, 93.26, None, 226.8)
    assert not validate_collectives.stalled(317.0, 93.26, 320.0, 226.8)
    assert not validate_collectives.stalled(150.0, 93.26, None, 100.0)
    assert not validate_collectives.stalled(250.0, 100.0, 130.0, None)    # top of a sweep: 1.9x the half size
    assert validate_collectives.stalled(300.0, 100.0, 130.0, None)        # 2.3x the half size: a stall
