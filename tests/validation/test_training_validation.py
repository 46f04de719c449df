"""The published training runs of the validation data, predicted: sanity only.

The figures (error per row, median and maximum per source) are printed by benchmarks/validate_training.py and
recorded in docs/training.md; here every run must have a layout that fits, and each source's median error must
stay within 15 % (the issue's target is 5 %; the printed table says where it is met).
"""

import statistics
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
validate_training = pytest.importorskip("validate_training")

if not validate_training.DATA.is_dir():
    pytest.skip("shared validation data not beside this checkout", allow_module_level=True)

SOURCES = (validate_training.sc21_table1, validate_training.megatron_core, validate_training.llm_foundry,
           validate_training.other_published)


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source.__name__)
def test_every_run_fits_and_the_median_error_is_bounded(source):
    errors = []
    for name, run, measured, best, _ in source():
        assert best is not None, f"{name} {run}: no layout fits"
        assert measured > 0 and best.step.total > 0
        errors.append(abs(best.step.total / measured - 1))
    assert statistics.median(errors) < 0.15
