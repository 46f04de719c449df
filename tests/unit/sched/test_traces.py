"""Reading a trace file: gzip, format detection, the format table."""

import gzip

import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched.traces import detect_format, read_trace
from trace_texts import PHILLY, SACCT, SWF, TIRESIAS


def test_read_trace_opens_gzip_and_detects_the_format(tmp_path):
    """A .swf.gz file is decompressed and read as SWF; an unreadable path is a ConfigError."""
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(SWF.encode()))
    assert read_trace(path).num_jobs == 3
    with pytest.raises(ConfigError, match="cannot read trace"):
        read_trace(tmp_path / "missing.swf")


def test_detect_format():
    """By suffix or first line: SWF, Philly JSON, sacct, CSV."""
    assert detect_format("x.swf.gz", "1 2") == "swf"
    assert detect_format("log", PHILLY) == "philly"
    assert detect_format("out.txt", SACCT) == "sacct"
    assert detect_format("jobs.csv", TIRESIAS) == "csv"
    with pytest.raises(ConfigError, match="--trace-format"):
        detect_format("notes.txt", "hello")
