"""Mixture-of-experts training throughput against published Megatron runs (benchmarks/data/validation/
moe_training_throughput.csv, NVIDIA Megatron-Bridge performance summary, NeMo 25.09 and 25.11): the routed experts
priced as grouped GEMMs by local expert with their launches (perf/experts.py) bring the median |error| from
91.5 % (dense roofline) to 25.4 %, and each recipe's all-to-all overlap and DeepEP dispatcher to 17.8 %; the
tolerance here is 20 % on the median, 30 % on the B200 runs, 10 % on DeepSeek-V3 on 1,024 H100 (DeepEP)."""

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
validate_moe = pytest.importorskip("validate_moe")


def test_moe_throughput_median_error_within_20_percent():
    """Median |predicted / published - 1| over the predicted runs <= 20 %; every B200 run within 30 %; DeepSeek-V3
    on 1,024 H100 with DeepEP within 10 %."""
    rows = [row for row in validate_moe.rows() if row["prediction"] is not None]
    errors = {(row["model"], row["system"]): row["prediction"].tokens_per_s_per_gpu / row["published"] - 1
              for row in rows}
    ordered = sorted(abs(error) for error in errors.values())
    assert len(ordered) >= 5 and ordered[len(ordered) // 2] <= 0.20, errors
    assert all(abs(error) <= 0.30 for (_, system), error in errors.items() if system == "DGX-B200"), errors
    assert abs(errors[("deepseek-v3", "DGX-H100")]) <= 0.10, errors
