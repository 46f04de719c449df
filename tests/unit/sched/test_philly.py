"""The Philly JSON job-log reader."""

import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched.philly import parse_philly
from trace_texts import PHILLY


def test_philly_json():
    """Run from the first attempt's start to the last one's end; GPUs = most in one attempt; no attempt = dropped."""
    trace = parse_philly(PHILLY)
    assert trace.run_s.tolist() == [3600.0] and trace.gpus.tolist() == [4] and trace.recorded_wait_s[0] == 60
    assert trace.dropped == {"never started": 1}


def test_deep_nesting_is_one_error():
    """100,000 nested [ is one line, not a RecursionError (issue 19 item 7)."""
    with pytest.raises(ConfigError, match="p.json:1: arrays and tables nested more than 64 deep"):
        parse_philly("[" * 100_000, name="p.json")
