"""The sacct --parsable2 reader: jobs, GPUs, limits, names and bad lines."""

import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched.sacct import parse_sacct
from trace_texts import SACCT


def test_sacct_jobs_gpus_limits_and_names():
    """Steps skipped; GPUs from AllocTRES (generic or typed); Timelimit as the estimate; names kept."""
    trace = parse_sacct(SACCT, name="s.txt")
    assert trace.job_id.tolist() == [100, 101]
    assert trace.submit_s.tolist() == [0.0, 600.0]
    assert trace.gpus.tolist() == [4, 16] and trace.run_s.tolist() == [3600.0, 86400.0]
    assert trace.estimate_s.tolist() == [7200.0, 86400.0]
    assert trace.recorded_wait_s.tolist() == [60.0, 0.0]
    assert [trace.users[u] for u in trace.user] == ["alice", "bob"]
    assert [trace.queues[q] for q in trace.queue] == ["normal", "high"]
    assert trace.dropped == {"never started": 1, "still running": 1}


def test_sacct_bad_time_and_missing_columns():
    """A bad Submit is an error at its line; a header without GPU columns is an error at line 1."""
    bad = SACCT.replace("2024-03-01T00:10:00|2024-03-01T00:10:00", "yesterday|2024-03-01T00:10:00")
    with pytest.raises(ConfigError, match=r"s.txt:4: bad sacct line: not a time: 'yesterday'"):
        parse_sacct(bad, name="s.txt")
    with pytest.raises(ConfigError, match=r"s.txt:1: .*no AllocTRES"):
        parse_sacct("JobID|Submit|Start|End\n1|0|0|10\n", name="s.txt")
