"""The GPU-cluster CSV traces: Helios, Acme, Philly (Helios form), Alibaba and Tiresias."""

from __future__ import annotations

import csv
import io
import re

from clusterplan.errors import ConfigError
from clusterplan.sched.jobs import Trace, make_trace
from clusterplan.sched.trace_lines import LARGEST, BadLine, Lines, Names, shifted, timestamp
from clusterplan.sched.trace_lines import number as as_number

ALIASES = {
    "id": ("job_id", "jobid", "job_name", "name"),
    "gpus": ("gpu_num", "num_gpu", "num_gpus", "gpus", "gpu_request"),
    "submit": ("submit_time", "submitted_time", "creation_time", "submit"),
    "start": ("start_time", "scheduled_time"),
    "end": ("end_time", "deletion_time"),
    "duration": ("duration", "run_time", "runtime"),
    "user": ("user", "user_id", "organization"),
    "group": ("vc", "qos", "virtual_cluster"),
}


def parse_gpu_csv(text: str, *, name: str = "<csv>", skip_bad: bool = False) -> Trace:
    """Helios ``cluster_log.csv`` (and Philly in the Helios artifact's form), Acme ``trace_{seren,kalos}.csv``,
    Alibaba ``openb_pod_list*.csv``, Tiresias job CSVs: GPUs, submit time, and a duration or start and end.
    These traces record no requested times: estimates are the run times. ``vc``/``qos`` is the queue."""
    lines = Lines(name, skip_bad)
    reader = csv.reader(io.StringIO(text))
    rows = _rows(reader, name)
    header = [column.strip().lower() for column in next(rows, [])]
    column = {role: next((header.index(a) for a in aliases if a in header), None) for role, aliases in ALIASES.items()}
    if column["gpus"] is None or column["submit"] is None:
        raise ConfigError(f"CSV header lacks a GPU column ({'/'.join(ALIASES['gpus'])}) or a submit column "
                          f"({'/'.join(ALIASES['submit'])})", source=name, line=1)
    if column["duration"] is None and (column["start"] is None or column["end"] is None):
        raise ConfigError("CSV header lacks a duration or a start and end column", source=name, line=1)
    users, groups = Names(), Names()
    out: dict[str, list] = {k: [] for k in ("id", "submit", "wait", "run", "gpus", "user", "group")}
    never = 0
    for row in rows:
        number = reader.line_num
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            lines.reject(number, f"bad CSV line: expected {len(header)} fields, got {len(row)}")
            continue
        cell = lambda role: row[column[role]] if column[role] is not None else ""  # noqa: E731
        try:
            submit = timestamp(cell("submit"))
            start = timestamp(cell("start"))
            end = timestamp(cell("end"))
            gpus = _gpus(cell("gpus") or "0")
            duration = timestamp(cell("duration"))
            if submit is None:
                raise BadLine("no submit time")
        except (BadLine, ValueError) as error:
            lines.reject(number, f"bad CSV line: {error}")
            continue
        if duration is None and (start is None or end is None):
            never += 1
            continue
        run = duration if duration is not None else end - start
        raw_id = cell("id")
        digits = re.findall(r"\d+", raw_id)
        # the id's last digits name the job; past 2**53 (a 40-digit id) its row number does
        job_id = int(digits[-1]) if digits else len(out["id"])
        out["id"].append(job_id if job_id < LARGEST else len(out["id"]))
        out["submit"].append(submit)
        out["wait"].append(start - submit if start is not None else -1.0)
        out["run"].append(run)
        out["gpus"].append(gpus)
        out["user"].append(users(cell("user")))
        out["group"].append(groups(cell("group")))
    (submit,) = shifted(out["submit"])
    return make_trace(name=name, format="csv", job_id=out["id"], submit_s=submit, run_s=out["run"],
                      estimate_s=[-1.0] * len(submit), gpus=out["gpus"], user=out["user"], queue=out["group"],
                      recorded_wait_s=out["wait"], users=users.names(), queues=groups.names(),
                      dropped={"never started": never} if never else {}, num_bad_lines=lines.bad)


def _rows(reader, name: str):
    """The reader's rows; a line it cannot split (a cell over ``csv.field_size_limit()``, 128 KiB unless a
    program raised it) is an error naming the line: the rows after it cannot be trusted, so not skippable."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            limit = csv.field_size_limit()
            detail = (f"a cell longer than {limit:,} characters (128 KiB), the most a trace cell may hold"
                      if "field limit" in str(error) else str(error))
            raise ConfigError(f"bad CSV line: {detail}", source=name, line=reader.line_num) from None
        yield row


def _gpus(text: str) -> float:
    try:
        return as_number(text)
    except BadLine as error:
        raise BadLine(f"GPU count {error}: {text!r}") from None
