"""The GPU-cluster CSV reader: Helios, Alibaba and Tiresias columns, bad rows."""

import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched.gpu_csv import parse_gpu_csv
from trace_texts import ALIBABA, HELIOS, TIRESIAS


def test_helios_csv():
    """Helios/Acme columns: GPU jobs kept, CPU-only dropped, duration as run, 'queue' not taken as a queue."""
    trace = parse_gpu_csv(HELIOS, name="h.csv")
    assert trace.gpus.tolist() == [8, 16] and trace.run_s.tolist() == [3600.0, 600.0]
    assert trace.submit_s.tolist() == [0.0, 120.0] and trace.recorded_wait_s.tolist() == [30.0, 180.0]
    assert [trace.queues[q] for q in trace.queue] == ["vcA", "vcA"] and trace.dropped == {"no GPUs requested": 1}
    assert trace.exact_estimates == 2


def test_alibaba_pod_csv():
    """Alibaba pods: run = deletion - scheduled, never-scheduled pods dropped, qos as the queue."""
    trace = parse_gpu_csv(ALIBABA)
    assert trace.run_s.tolist() == [12537496.0, 240.0] and trace.recorded_wait_s.tolist() == [0.0, 60.0]
    assert trace.dropped == {"never started": 1}


def test_tiresias_csv_and_bad_row():
    """Tiresias rows read; a short row is an error at its line unless skipped."""
    assert parse_gpu_csv(TIRESIAS).gpus.tolist() == [1, 8]
    with pytest.raises(ConfigError, match=r"t.csv:4: bad CSV line: expected 7 fields, got 3"):
        parse_gpu_csv(TIRESIAS + "2,4,60\n", name="t.csv")
    assert parse_gpu_csv(TIRESIAS + "2,4,60\n", skip_bad=True).num_bad_lines == 1


def test_infinite_times_huge_counts_and_long_ids():
    """An inf end time and 1e30 GPUs are line-numbered bad lines; a 40-digit id falls back to the row number
    (issue 19 item 7)."""
    head = "job_id,user,gpus,submit_time,start_time,end_time\n"
    with pytest.raises(ConfigError, match=r"t.csv:3: bad CSV line: not a finite time: 'inf'"):
        parse_gpu_csv(head + "1,u,8,0,10,100\n2,u,8,5,10,inf\n", name="t.csv")
    with pytest.raises(ConfigError, match=r"t.csv:3: bad CSV line: GPU count is not a finite number below 2\*\*53: '1e30'"):
        parse_gpu_csv(head + "1,u,8,0,10,100\n2,u,1e30,5,10,20\n", name="t.csv")
    trace = parse_gpu_csv(head + "1,u,8,0,10,100\n" + "9" * 40 + ",u,8,5,10,200\n", name="t.csv")
    assert trace.job_id.tolist() == [1, 1]


@pytest.mark.parametrize("skip_bad", [False, True])
def test_a_cell_over_128_kib_names_its_line(skip_bad):
    """Issue 31: a cell longer than the csv module's field limit (131,072 characters) is an error naming line 3,
    not an internal error; skipping bad lines does not skip it (the rows after it cannot be trusted)."""
    text = 'job_id,gpu_num,submit_time,duration\n1,1,0,10\n2,1,5,"' + "x" * 140_000 + '"\n'
    with pytest.raises(ConfigError, match=r"^big.csv:3: bad CSV line: a cell longer than 131,072 characters"):
        parse_gpu_csv(text, name="big.csv", skip_bad=skip_bad)
