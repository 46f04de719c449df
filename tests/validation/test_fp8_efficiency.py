"""FP8_EFFICIENCY is the mean FP8 / BF16 ratio of the best-shape matmul ceilings in the project's validation data."""

import csv
from pathlib import Path

import pytest

from clusterplan.perf.compute import FP8_EFFICIENCY

DATA = Path(__file__).parents[2] / "benchmarks" / "data" / "validation" / "fp8_matmul_ceilings.csv"


def test_fp8_efficiency_is_the_mean_ratio_of_the_published_ceilings():
    """Each FP8 row's fraction of peak over the BF16 row's, averaged, rounds to the constant (two places)."""
    rows = list(csv.DictReader(open(DATA, encoding="utf-8")))
    assert all(row["source"] and row["date"] for row in rows)
    fraction = {dtype: [float(r["measured_tflops"]) / float(r["peak_tflops"]) for r in rows if r["dtype"] == dtype]
                for dtype in ("bf16", "fp8")}
    ratios = [fp8 / fraction["bf16"][0] for fp8 in fraction["fp8"]]
    assert len(ratios) == 3 and FP8_EFFICIENCY == pytest.approx(sum(ratios) / len(ratios), abs=0.005)
