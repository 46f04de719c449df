"""Trace readers: SWF, ``sacct --parsable2``, the GPU-cluster CSVs (Helios, Acme, Philly, Alibaba,
Tiresias) and Philly's JSON job log, one module each. Each returns a ``Trace`` through ``make_trace``.

A malformed line is an error naming the file and line (exit 2); with
``skip_bad`` it is skipped and counted in ``Trace.num_bad_lines``. A well-formed
job that cannot be replayed (never started, no GPUs, unknown run time) is not
an error: it is dropped and counted by reason in ``Trace.dropped``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from clusterplan.errors import ConfigError
from clusterplan.files import TRACE_BYTES, read_input_text
from clusterplan.sched.gpu_csv import parse_gpu_csv
from clusterplan.sched.jobs import Trace
from clusterplan.sched.philly import parse_philly
from clusterplan.sched.sacct import parse_sacct
from clusterplan.sched.swf import parse_swf

READERS: dict[str, Callable[..., Trace]] = {"swf": parse_swf, "sacct": parse_sacct, "csv": parse_gpu_csv,
                                            "philly": parse_philly}
FORMATS = tuple(READERS)


def read_trace(path: str | Path, *, format: str | None = None, skip_bad: bool = False) -> Trace:
    """Read a trace file (gzip is detected); ``format`` None = from the name and the first line."""
    path = Path(path)
    text = read_input_text(path, what="trace", limit_bytes=TRACE_BYTES)   # regular file, capped, gzip detected
    return parse_trace(text, name=str(path), format=format or detect_format(path.name, text), skip_bad=skip_bad)


def parse_trace(text: str, *, name: str, format: str, skip_bad: bool = False) -> Trace:
    """``text`` read as ``format`` (one of ``FORMATS``)."""
    if format not in READERS:
        raise ConfigError(f"unknown trace format {format!r}; one of {', '.join(FORMATS)}", key="--trace-format")
    return READERS[format](text, name=name, skip_bad=skip_bad)


def detect_format(filename: str, text: str) -> str:
    lower = filename.lower().removesuffix(".gz")
    head = text.lstrip()[:4096]
    first = head.splitlines()[0] if head else ""
    if lower.endswith(".swf") or first.startswith(";"):
        return "swf"
    if lower.endswith(".json") or head.startswith("["):
        return "philly"
    if "|" in first and "jobid" in first.lower():
        return "sacct"
    if "," in first:
        return "csv"
    if re.match(r"^\s*\d+(\s+-?[\d.]+){17}\s*$", first):
        return "swf"
    raise ConfigError("cannot tell the trace format; pass --trace-format swf|sacct|csv|philly", source=filename)
