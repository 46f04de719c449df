"""The Llama 3 405B run (Dubey et al. 2024, Table 5), predicted from the catalog rates alone: sanity only.

The figures themselves (error per cause and in total) are printed by benchmarks/validate_reliability.py and
recorded in docs/reliability.md; here the total must lie within a factor of 2 of the 419 published.
"""

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
validate_reliability = pytest.importorskip("validate_reliability")

if not (validate_reliability.DATA / validate_reliability.TABLE).exists():
    pytest.skip("shared validation data not beside this checkout", allow_module_level=True)
RESULT = validate_reliability.compare(validate_reliability.DATA)


def test_counts_are_the_published_ones():
    """Table 5's counts sum to the 419 unexpected interruptions; faulty GPUs are 148/419 = 35.3 %, not 30.1 %."""
    assert RESULT["published_total"] == 419 and RESULT["days"] == 54 and RESULT["num_gpus"] == 16384
    rows = {row["group"]: row["published"] for row in RESULT["rows"]}
    assert rows == {"gpu": 268, "host": 46, "network": 42, "software": 63}
    assert round(148 / 419, 3) == 0.353


def test_total_within_a_factor_of_two():
    """Predicted interruptions in 54 days lie within a factor of 2 of the published 419."""
    assert 419 / 2 <= RESULT["predicted_total"] <= 419 * 2


def test_gpus_are_the_leading_cause_in_both():
    """GPU failures lead in the published table and in the prediction."""
    predicted = {row["group"]: row["predicted"] for row in RESULT["rows"]}
    assert max(predicted, key=predicted.get) == "gpu"


def test_the_script_prints_every_cause(capsys):
    """benchmarks/validate_reliability.py prints the comparison table with an error per cause and in total."""
    assert validate_reliability.main([]) == 0
    out = capsys.readouterr().out
    for group in ("gpu", "host", "network", "software", "total"):
        assert any(line.startswith(group) and "%" in line for line in out.splitlines())


def test_before_is_the_previous_software_rate_and_the_rest_is_unchanged():
    """'before' swaps in only the previous software rate (1.57 per 1000 node-days): the other causes agree."""
    rows = {row["group"]: row for row in RESULT["rows"]}
    for group in ("gpu", "host", "network"):
        assert rows[group]["predicted_before"] == rows[group]["predicted"]
    assert rows["software"]["predicted_before"] == pytest.approx(RESULT["num_nodes"] * 1.57 / 1000 * RESULT["days"])


def test_the_script_prints_before_after_and_the_second_check(capsys):
    """The table has both columns; the second check prints Meta's RSC range and the predicted rate per node-day."""
    assert validate_reliability.main([]) == 0
    out = capsys.readouterr().out
    assert "before" in out.splitlines()[1] and "after" in out.splitlines()[1]
    assert "second check, Meta RSC-2 / RSC-1" in out and "2.34 to 6.50 per 1000 node-days" in out
    assert 2.34 <= RESULT["hardware_per_1000_node_days"] <= 6.50    # like against like: RSC counts hardware only
