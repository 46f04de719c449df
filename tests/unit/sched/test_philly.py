"""The Philly JSON job-log reader."""

from clusterplan.sched.philly import parse_philly
from trace_texts import PHILLY


def test_philly_json():
    """Run from the first attempt's start to the last one's end; GPUs = most in one attempt; no attempt = dropped."""
    trace = parse_philly(PHILLY)
    assert trace.run_s.tolist() == [3600.0] and trace.gpus.tolist() == [4] and trace.recorded_wait_s[0] == 60
    assert trace.dropped == {"never started": 1}
