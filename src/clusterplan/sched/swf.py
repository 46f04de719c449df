"""Standard Workload Format 2.2 (the Parallel Workloads Archive): 18 numeric fields per job.

Two paths read the same jobs. The fast one checks every data line has 18 fields, then
converts all of them in one numpy call (``np.fromstring``, C) and checks they are finite and
below 2**53; it reads 1,000,000 lines several times faster than converting field by field. Any
doubt (a short line, a word, nan, 1e30) sends the file down the slow path, one line at a
time, which names the line or skips it under ``--skip-bad``: the verdicts are the slow path's.
"""

from __future__ import annotations

import numpy as np

from clusterplan.sched.jobs import Trace, make_trace
from clusterplan.sched.trace_lines import BadLine, Lines
from clusterplan.sched.trace_lines import LARGEST
from clusterplan.sched.trace_lines import number as as_number

CHUNK_LINES = 100_000   # lines converted at once: bounds the byte-wise arrays to ~100 MB
POWERS = 10.0 ** np.arange(15)   # exact in a float64
SWF_FIELDS = ("job", "submit", "wait", "run", "allocated_procs", "cpu_time", "memory", "requested_procs",
              "requested_time", "requested_memory", "status", "user", "group", "executable", "queue", "partition",
              "preceding_job", "think_time")


def parse_swf(text: str, *, name: str = "<swf>", skip_bad: bool = False) -> Trace:
    """Standard Workload Format 2.2: 18 numeric fields per job, ``;`` header comments, -1 unknown.

    GPUs = allocated processors (field 5), else requested (field 8); estimate = requested time (field 9).
    """
    header, data = _header_and_data(text)
    values = _fast(data)
    if values is not None:
        columns = values.T
        bad = 0
    else:
        columns, bad = _slow(text, name, skip_bad)
    gpus = np.where(columns[4] > 0, columns[4], columns[7])
    return make_trace(name=name, format="swf", job_id=columns[0], submit_s=columns[1], run_s=columns[3],
                      estimate_s=columns[8], gpus=gpus, user=columns[11], queue=columns[14], partition=columns[15],
                      recorded_wait_s=columns[2], num_bad_lines=bad, header=header)


def _header_and_data(text: str) -> tuple[dict[str, str], list[str]]:
    """The ``;`` header comments (repeated keys joined) and the other non-blank lines, stripped."""
    header: dict[str, str] = {}
    stripped = list(map(str.strip, text.splitlines()))
    for comment in (line for line in stripped if line[:1] == ";"):
        key, sep, value = comment[1:].partition(":")
        if sep and key.strip() and " " not in key.strip():
            key = key.strip()
            header[key] = f"{header[key]} | {value.strip()}" if key in header else value.strip()
    return header, [line for line in stripped if line and line[0] != ";"]


def _fast(data: list[str]) -> np.ndarray | None:
    """Every data line's 18 fields as one (jobs x 18) array, or None where any line needs the slow path."""
    parts = []
    for begin in range(0, len(data), CHUNK_LINES):
        part = _chunk(data[begin:begin + CHUNK_LINES])
        if part is None:
            return None
        parts.append(part)
    return np.concatenate(parts) if parts else np.zeros((0, 18))


def _chunk(lines: list[str]) -> np.ndarray | None:
    """``lines`` as numbers, byte by byte in numpy: whole numbers by their digits, anything else by
    ``np.fromstring``; None for a line without 18 fields or a field that is not a finite number below 2**53."""
    text = "\n".join(lines) + "\n"
    if not text.isascii():
        return None
    buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    blank = (buf == 32) | (buf == 9) | (buf == 10) | (buf == 31)     # what str.split() splits a line at
    start = ~blank & np.concatenate(([True], blank[:-1]))
    firsts = np.flatnonzero(start)
    per_line = np.diff(np.searchsorted(firsts, np.flatnonzero(buf == 10)), prepend=0)
    if firsts.size != 18 * len(lines) or (per_line != 18).any():
        return None
    values = _whole_numbers(buf, blank, start)
    if values is None:
        try:
            values = np.fromstring(text, dtype=np.float64, sep=" ")
        except ValueError:   # a word: the slow path names its line
            return None
        if values.size != firsts.size:
            return None
    if not (np.abs(values) < LARGEST).all():   # also false for nan
        return None
    return values.reshape(len(lines), 18)


def _whole_numbers(buf: np.ndarray, blank: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """Each field's value where every field is a whole number of at most 15 digits (SWF's usual); else None."""
    digit = (buf >= 48) & (buf <= 57)
    minus = buf == 45
    if not (digit | minus | blank).all() or (minus & ~start).any():
        return None
    if (minus & np.concatenate((blank[1:], [True]))).any():
        return None   # a lone "-"
    token = np.cumsum(start, dtype=np.int32) - 1
    ends = np.flatnonzero(~blank & np.concatenate((blank[1:], [True]))) + 1   # one past each field's last byte
    where = np.flatnonzero(digit)
    owner = token[where]
    place = ends[owner] - 1 - where
    if place.size and place.max() > 14:
        return None
    values = np.bincount(owner, weights=(buf[where] - 48) * POWERS[place], minlength=ends.size)
    values[minus[start]] *= -1
    return values


def _slow(text: str, name: str, skip_bad: bool) -> tuple[np.ndarray, int]:
    """Line by line: the first bad line is an error naming it, or with ``skip_bad`` skipped and counted."""
    lines = Lines(name, skip_bad)
    rows: list[list[float]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            continue
        fields = stripped.split()
        if len(fields) != 18:
            lines.reject(number, f"bad SWF line: expected 18 fields, got {len(fields)}")
            continue
        try:
            rows.append([_field(index, field) for index, field in enumerate(fields)])
        except BadLine as error:
            lines.reject(number, f"bad SWF line: {error}")
    values = np.array(rows, dtype=np.float64).reshape(len(rows), 18)
    return values.T, lines.bad


def _field(index: int, text: str) -> float:
    try:
        return as_number(text)
    except BadLine as error:
        raise BadLine(f"field {index + 1} ({SWF_FIELDS[index]}) {error}: {text!r}") from None
