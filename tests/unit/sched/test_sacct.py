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


@pytest.mark.parametrize("cells", ["1|u|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|gres/gpu=" + "9" * 30,
                                   "1|u|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|gres/gpu:h100="
                                   + "9" * 20,
                                   "9" * 40 + "|u|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|gres/gpu=1"])
def test_a_huge_gpu_count_or_job_id_is_a_line_numbered_bad_line(cells):
    """gres/gpu=99...9 and a 40-digit job id name their line, and --skip-bad skips and counts them (an int64 cast
    had wrapped them negative or failed after the lines were read; issue 19 item 7)."""
    good = "2|u|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|gres/gpu=2"
    text = "JobID|User|Submit|Start|End|AllocTRES\n" + good + "\n" + cells + "\n"
    with pytest.raises(ConfigError) as info:
        parse_sacct(text, name="s.txt")
    assert info.value.line == 3 and "2**53" in str(info.value)
    trace = parse_sacct(text, name="s.txt", skip_bad=True)
    assert trace.num_jobs == 1 and trace.num_bad_lines == 1
