"""GPUs without validation runs take their GEMM efficiency from their published matmul ceiling, scaled by the share of
its own ceiling that H100's calibrated efficiency is (benchmarks/data/validation/bf16_matmul_ceilings.csv)."""

import csv
from pathlib import Path

import pytest

from clusterplan.catalog import load_catalog

DATA = Path(__file__).parents[2] / "benchmarks" / "data" / "validation" / "bf16_matmul_ceilings.csv"
CALIBRATED = "h100-sxm"
FROM_CEILING = ("b200", "gb200", "mi300x")


def fractions() -> dict[str, float]:
    """Each catalog GPU's measured ceiling over the catalog's own dense BF16 peak (the table's peaks are rounded)."""
    rows, catalog = list(csv.DictReader(open(DATA, encoding="utf-8"))), load_catalog()
    assert all(row["source"] and row["date"] for row in rows)
    return {row["catalog_id"]: float(row["measured_tflops"]) * 1e12 / catalog.get("gpus", row["catalog_id"]).bf16_flops
            for row in rows if row["catalog_id"] and row["method"].startswith("MAMF")}


@pytest.mark.parametrize("gpu", FROM_CEILING)
def test_an_uncalibrated_gpu_runs_at_the_calibrated_share_of_its_ceiling(gpu):
    catalog, ceiling = load_catalog(), fractions()
    share = catalog.get("gpus", CALIBRATED).gemm_efficiency / ceiling[CALIBRATED]
    assert catalog.get("gpus", gpu).gemm_efficiency == pytest.approx(ceiling[gpu] * share, abs=0.005)


def test_the_h200_measured_here_matches_the_h100_ceiling_it_shares():
    """H200 takes H100's 0.59 (the same die): this project's own 8192^3 run sits within 1 % of H100's ceiling."""
    rows = {row["catalog_id"]: row for row in csv.DictReader(open(DATA, encoding="utf-8"))}
    h200 = float(rows["h200-sxm"]["measured_tflops"]) * 1e12 / load_catalog().get("gpus", "h200-sxm").bf16_flops
    assert h200 == pytest.approx(fractions()[CALIBRATED], rel=0.01)
    assert load_catalog().get("gpus", "h200-sxm").gemm_efficiency == load_catalog().get("gpus", CALIBRATED).gemm_efficiency
