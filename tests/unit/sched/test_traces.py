"""Trace readers on small fixtures: SWF, sacct --parsable2, GPU-cluster CSVs, Philly JSON; bad lines."""

import gzip
import math

import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched.traces import detect_format, parse_gpu_csv, parse_philly, parse_sacct, parse_swf, read_trace

SWF = """\
; Version: 2.2
; Computer: test
;MaxProcs: 64
; Note: first note
; Note: second note
    1        0   10   100.5  4  -1 -1  4   200  -1 1  3  1 -1  1  2 -1 -1
    2       5.5  -1    50    -1  -1 -1  8   -1   -1 1  4  1 -1  1  1 -1 -1
    3       7     0    -1    2  -1 -1  2   100  -1 5  3  1 -1  1  1 -1 -1
    4       8     0   300    2  -1 -1  2   100  -1 1  3  1 -1  1  1 -1 -1
"""


def test_swf_reads_the_fields_it_needs():
    """Float times, allocated else requested processors, request as estimate, run cut at the request."""
    trace = parse_swf(SWF, name="t.swf")
    assert trace.job_id.tolist() == [1, 2, 4]
    assert trace.submit_s.tolist() == [0.0, 5.5, 8.0]
    assert trace.gpus.tolist() == [4, 8, 2]
    assert trace.run_s.tolist() == [100.5, 50.0, 100.0] and trace.estimate_s.tolist() == [200.0, 50.0, 100.0]
    assert trace.user.tolist() == [3, 4, 3] and trace.partition.tolist() == [2, 1, 1]
    assert trace.num_truncated == 1 and trace.exact_estimates == 1
    assert trace.dropped == {"unknown or zero run time": 1}
    assert trace.recorded_wait_s[0] == 10 and math.isnan(trace.recorded_wait_s[1])


def test_swf_header_comments():
    """Header keys with or without a space after ';', repeated keys kept, MaxProcs as the machine size."""
    trace = parse_swf(SWF)
    assert trace.max_gpus == 64 and trace.header["Note"] == "first note | second note"


def test_swf_bad_line_names_its_number():
    """A line with 17 fields is an error at its line number, with the --skip-bad hint."""
    text = SWF + "    5   9  0  10  1 -1 -1 1 10 -1 1 3 1 -1 1 1 -1\n"
    with pytest.raises(ConfigError) as error:
        parse_swf(text, name="t.swf")
    assert str(error.value).startswith("t.swf:10: bad SWF line: expected 18 fields, got 17")
    assert "--skip-bad" in str(error.value)


def test_swf_non_number_names_the_field():
    """A non-numeric field is reported by number and name."""
    text = SWF.replace("    2       5.5", "    2       5x5")
    with pytest.raises(ConfigError, match=r"t.swf:7: .*field 2 \(submit\) is not a number: '5x5'"):
        parse_swf(text, name="t.swf")


def test_skip_bad_counts_and_skips():
    """--skip-bad: the two bad lines are skipped and counted, the good jobs kept."""
    text = SWF + "garbage\n    6 9 0 10 1 -1 -1 1 10 -1 1 3 1 -1 1 1 -1 -1 99\n"
    trace = parse_swf(text, skip_bad=True)
    assert trace.num_bad_lines == 2 and trace.num_jobs == 3


def test_read_trace_opens_gzip_and_detects_the_format(tmp_path):
    """A .swf.gz file is decompressed and read as SWF; an unreadable path is a ConfigError."""
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(SWF.encode()))
    assert read_trace(path).num_jobs == 3
    with pytest.raises(ConfigError, match="cannot read trace"):
        read_trace(tmp_path / "missing.swf")


SACCT = """\
JobID|JobIDRaw|User|Partition|QOS|Submit|Start|End|Elapsed|Timelimit|State|NNodes|AllocTRES
100|100|alice|gpu|normal|2024-03-01T00:00:00|2024-03-01T00:01:00|2024-03-01T01:01:00|01:00:00|02:00:00|COMPLETED|1|billing=8,cpu=8,gres/gpu=4,mem=64G,node=1
100.batch|100.batch||||2024-03-01T00:01:00|2024-03-01T00:01:00|2024-03-01T01:01:00|01:00:00||COMPLETED|1|cpu=8,gres/gpu=4,mem=64G,node=1
101_3|101|bob|gpu|high|2024-03-01T00:10:00|2024-03-01T00:10:00|2024-03-02T00:10:00|1-00:00:00|1-00:00:00|TIMEOUT|2|cpu=64,gres/gpu:h100=16,node=2
102|102|alice|gpu|normal|2024-03-01T00:20:00|Unknown|Unknown|00:00:00|01:00:00|PENDING|1|
103|103|carol|cpu|normal|2024-03-01T00:30:00|2024-03-01T00:30:00|Unknown|00:05:00|UNLIMITED|RUNNING|1|cpu=4,node=1
"""


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


HELIOS = """\
job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
1,u1,vcA,8,48,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:30,2020-04-01 01:00:30,3600,30
2,u2,vcB,0,4,1,COMPLETED,2020-04-01 00:01:00,2020-04-01 00:01:00,2020-04-01 00:02:00,60,0
3,u1,vcA,16,96,2,FAILED,2020-04-01 00:02:00,2020-04-01 00:05:00,2020-04-01 00:15:00,600,180
"""
ALIBABA = """\
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0
openb-pod-0001,6000,12288,1,460,,BE,Succeeded,100,400,160
openb-pod-0002,6000,12288,2,1000,,LS,Pending,200,,
"""
TIRESIAS = """\
job_id,num_gpu,submit_time,iterations,model_name,duration,interval
0,1,0,606,vgg19,164,30
1,8,30,133,vgg11,147,23
"""


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


PHILLY = """[
 {"status": "Pass", "vc": "vc1", "jobid": "application_1", "user": "u1", "submitted_time": "2017-10-01 00:00:00",
  "attempts": [{"start_time": "2017-10-01 00:01:00", "end_time": "2017-10-01 00:11:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]},
               {"start_time": "2017-10-01 00:20:00", "end_time": "2017-10-01 01:01:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}, {"ip": "m2", "gpus": ["gpu0", "gpu1"]}]}]},
 {"status": "Killed", "vc": "vc2", "jobid": "application_2", "user": "u2", "submitted_time": "2017-10-01 00:05:00",
  "attempts": []}
]"""


def test_philly_json():
    """Run from the first attempt's start to the last one's end; GPUs = most in one attempt; no attempt = dropped."""
    trace = parse_philly(PHILLY)
    assert trace.run_s.tolist() == [3600.0] and trace.gpus.tolist() == [4] and trace.recorded_wait_s[0] == 60
    assert trace.dropped == {"never started": 1}


def test_detect_format():
    """By suffix or first line: SWF, Philly JSON, sacct, CSV."""
    assert detect_format("x.swf.gz", "1 2") == "swf"
    assert detect_format("log", PHILLY) == "philly"
    assert detect_format("out.txt", SACCT) == "sacct"
    assert detect_format("jobs.csv", TIRESIAS) == "csv"
    with pytest.raises(ConfigError, match="--trace-format"):
        detect_format("notes.txt", "hello")
