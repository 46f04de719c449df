"""Trace readers: SWF, ``sacct --parsable2``, the GPU-cluster CSVs (Helios, Acme, Philly, Alibaba,
Tiresias) and Philly's JSON job log. Each returns a ``Trace`` through ``make_trace``.

A malformed line is an error naming the file and line (exit 2); with
``skip_bad`` it is skipped and counted in ``Trace.num_bad_lines``. A well-formed
job that cannot be replayed (never started, no GPUs, unknown run time) is not
an error: it is dropped and counted by reason in ``Trace.dropped``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from clusterplan.errors import ConfigError
from clusterplan.sched.jobs import Trace, make_trace

FORMATS = ("swf", "sacct", "csv", "philly")
SKIP_HINT = "(--skip-bad skips bad lines)"


class _Bad(ValueError):
    """One line is malformed (internal: turned into ConfigError with the line number)."""


def read_trace(path: str | Path, *, format: str | None = None, skip_bad: bool = False) -> Trace:
    """Read a trace file (gzip is detected); ``format`` None = from the name and the first line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read trace: {error.strerror}", source=str(path)) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise ConfigError(f"cannot read trace: broken gzip data ({error})", source=str(path)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("cannot read trace: not UTF-8 text", source=str(path)) from None
    return parse_trace(text, name=str(path), format=format or detect_format(path.name, text), skip_bad=skip_bad)


def parse_trace(text: str, *, name: str, format: str, skip_bad: bool = False) -> Trace:
    readers: dict[str, Callable[..., Trace]] = {"swf": parse_swf, "sacct": parse_sacct, "csv": parse_gpu_csv,
                                                "philly": parse_philly}
    if format not in readers:
        raise ConfigError(f"unknown trace format {format!r}; one of {', '.join(FORMATS)}", key="--trace-format")
    return readers[format](text, name=name, skip_bad=skip_bad)


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


class _Lines:
    """Collects bad lines: the first raises unless ``skip_bad``; then they are counted."""

    def __init__(self, name: str, skip_bad: bool):
        self.name, self.skip_bad, self.bad = name, skip_bad, 0

    def reject(self, line: int | None, reason: str) -> None:
        if not self.skip_bad:
            raise ConfigError(f"{reason} {SKIP_HINT}", source=self.name, line=line)
        self.bad += 1


# SWF ---------------------------------------------------------------------------------------------------------
SWF_FIELDS = ("job", "submit", "wait", "run", "allocated_procs", "cpu_time", "memory", "requested_procs",
              "requested_time", "requested_memory", "status", "user", "group", "executable", "queue", "partition",
              "preceding_job", "think_time")


def parse_swf(text: str, *, name: str = "<swf>", skip_bad: bool = False) -> Trace:
    """Standard Workload Format 2.2: 18 numeric fields per job, ``;`` header comments, -1 unknown.

    GPUs = allocated processors (field 5), else requested (field 8); estimate = requested time (field 9).
    """
    lines = _Lines(name, skip_bad)
    header: dict[str, str] = {}
    rows: list[list[float]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            key, sep, value = stripped[1:].partition(":")
            if sep and key.strip() and " " not in key.strip():
                key = key.strip()
                header[key] = f"{header[key]} | {value.strip()}" if key in header else value.strip()
            continue
        fields = stripped.split()
        if len(fields) != 18:
            lines.reject(number, f"bad SWF line: expected 18 fields, got {len(fields)}")
            continue
        try:
            rows.append([float(field) for field in fields])
        except ValueError:
            bad = next(i for i, f in enumerate(fields) if not _is_number(f))
            lines.reject(number, f"bad SWF line: field {bad + 1} ({SWF_FIELDS[bad]}) is not a number: {fields[bad]!r}")
    columns = list(zip(*rows)) if rows else [()] * 18
    allocated, requested = columns[4], columns[7]
    gpus = [a if a > 0 else r for a, r in zip(allocated, requested)]
    return make_trace(name=name, format="swf", job_id=[int(x) for x in columns[0]], submit_s=columns[1],
                      run_s=columns[3], estimate_s=columns[8], gpus=gpus, user=[int(x) for x in columns[11]],
                      queue=[int(x) for x in columns[14]], partition=[int(x) for x in columns[15]],
                      recorded_wait_s=columns[2], num_bad_lines=lines.bad, header=header)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# shared helpers for the tabular formats ------------------------------------------------------------------
class _Names:
    """Strings -> dense ints in order of first appearance (users, partitions, QOS)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text in ("", "-1"):
            return -1
        return self.ids.setdefault(text, len(self.ids))

    def names(self) -> tuple[str, ...]:
        return tuple(self.ids)


def _timestamp(text: str) -> float | None:
    """Seconds from a number or an ISO date ('2020-04-01 00:00:05', '2024-03-01T12:00:00'); None if empty."""
    text = text.strip()
    if text in ("", "None", "Unknown", "nan", "NaN", "NULL"):
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise _Bad(f"not a time: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _shifted(submit: list[float], *others: list[float]) -> list[list[float]]:
    """Times relative to the first submission (a trace's epoch does not matter)."""
    origin = min(submit, default=0.0)
    return [[t - origin for t in column] for column in (submit, *others)]


# sacct -------------------------------------------------------------------------------------------------------
_GPU_TRES = re.compile(r"gres/gpu(?::[^=,]+)?=(\d+)")
_GPU_GRES = re.compile(r"gpu(?::[^:,()]+)?:(\d+)")


def parse_sacct(text: str, *, name: str = "<sacct>", skip_bad: bool = False) -> Trace:
    """``sacct --parsable2`` with a header: JobID, Submit, Start, End (or Elapsed), AllocTRES/ReqTRES
    (or AllocGRES/ReqGRES) for GPUs; optional User, Partition, QOS, Timelimit(Raw). Job steps
    (``123.batch``, ``123.0``) are skipped; jobs that never started or still run are dropped."""
    lines = _Lines(name, skip_bad)
    rows = text.splitlines()
    if not rows:
        raise ConfigError("empty sacct output", source=name)
    header = [column.strip().lower() for column in rows[0].split("|")]
    index = {column: i for i, column in enumerate(header)}
    need = [c for c in ("submit", "start") if c not in index]
    if not {"end", "elapsed", "elapsedraw"} & set(index):
        need.append("end")
    if ("jobid" not in index and "jobidraw" not in index) or need:
        raise ConfigError(f"sacct header lacks {', '.join(need) or 'JobID'} (use --parsable2 with a header)",
                          source=name, line=1)
    gpu_columns = [c for c in ("alloctres", "reqtres", "allocgres", "reqgres") if c in index]
    if not gpu_columns:
        raise ConfigError("sacct header has no AllocTRES, ReqTRES, AllocGRES or ReqGRES column for GPUs",
                          source=name, line=1)
    users, partitions, qos = _Names(), _Names(), _Names()
    out: dict[str, list] = {k: [] for k in ("id", "submit", "start", "run", "limit", "gpus", "user", "part", "qos")}
    dropped = {"never started": 0, "still running": 0}
    id_column = index.get("jobidraw", index.get("jobid"))
    for number, line in enumerate(rows[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) != len(header):
            lines.reject(number, f"bad sacct line: expected {len(header)} fields, got {len(cells)}")
            continue
        get = lambda column: cells[index[column]].strip() if column in index else ""  # noqa: E731
        job = cells[id_column].strip()
        if "." in job:
            continue  # a job step, not a job
        try:
            submit, start = _timestamp(get("submit")), _timestamp(get("start"))
            if submit is None:
                raise _Bad("no submit time")
            if start is None:
                dropped["never started"] += 1
                continue
            run = _run_time(get("end"), get("elapsedraw"), get("elapsed"), start, "end" in index)
            if run is None:
                dropped["still running"] += 1
                continue
            gpus = next((n for n in (_gpus(get(c)) for c in gpu_columns) if n is not None), 0)
            limit = _limit(get("timelimitraw"), get("timelimit"))
            number_id = int(re.match(r"\d+", job).group()) if re.match(r"\d+", job) else len(out["id"])
        except _Bad as error:
            lines.reject(number, f"bad sacct line: {error}")
            continue
        for key, value in (("id", number_id), ("submit", submit), ("start", start), ("run", run),
                           ("limit", limit), ("gpus", gpus), ("user", users(get("user"))),
                           ("part", partitions(get("partition"))), ("qos", qos(get("qos")))):
            out[key].append(value)
    submit, start = _shifted(out["submit"], out["start"])
    return make_trace(name=name, format="sacct", job_id=out["id"], submit_s=submit, run_s=out["run"],
                      estimate_s=out["limit"], gpus=out["gpus"], user=out["user"], queue=out["qos"],
                      partition=out["part"], recorded_wait_s=[s - t for s, t in zip(start, submit)],
                      users=users.names(), queues=qos.names(), partitions=partitions.names(),
                      dropped={k: v for k, v in dropped.items() if v}, num_bad_lines=lines.bad)


def _duration(text: str) -> float | None:
    """SLURM '[DD-[HH:]]MM:SS' -> seconds; None for UNLIMITED, Partition_Limit or empty."""
    text = text.strip()
    if not text or not text[0].isdigit():
        return None
    days, _, clock = text.rpartition("-")
    parts = clock.split(":")
    if not days and len(parts) == 1:
        raise _Bad(f"not a duration: {text!r}")
    try:
        seconds = 0.0
        for part in parts:
            seconds = seconds * 60 + float(part)
        return seconds + (int(days) * 86400 if days else 0)
    except ValueError:
        raise _Bad(f"not a duration: {text!r}") from None


def _run_time(end: str, elapsed_raw: str, elapsed: str, start: float, has_end: bool) -> float | None:
    """End - Start where there is an End column (None while the job runs), else Elapsed."""
    if has_end:
        finish = _timestamp(end)
        return None if finish is None else finish - start
    if elapsed_raw.isdigit():
        return float(elapsed_raw)
    return _duration(elapsed)


def _limit(raw: str, text: str) -> float:
    if raw.strip().isdigit():
        return float(raw) * 60
    return _duration(text) or -1.0


def _gpus(text: str) -> int | None:
    if not text:
        return None
    generic = re.search(r"gres/gpu=(\d+)", text)
    if generic:
        return int(generic.group(1))
    typed = _GPU_TRES.findall(text) or _GPU_GRES.findall(text)
    return sum(int(n) for n in typed) if typed else 0


# GPU-cluster CSVs -------------------------------------------------------------------------------------------
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
    lines = _Lines(name, skip_bad)
    reader = csv.reader(io.StringIO(text))
    header = [column.strip().lower() for column in next(reader, [])]
    column = {role: next((header.index(a) for a in aliases if a in header), None) for role, aliases in ALIASES.items()}
    if column["gpus"] is None or column["submit"] is None:
        raise ConfigError(f"CSV header lacks a GPU column ({'/'.join(ALIASES['gpus'])}) or a submit column "
                          f"({'/'.join(ALIASES['submit'])})", source=name, line=1)
    if column["duration"] is None and (column["start"] is None or column["end"] is None):
        raise ConfigError("CSV header lacks a duration or a start and end column", source=name, line=1)
    users, groups = _Names(), _Names()
    out: dict[str, list] = {k: [] for k in ("id", "submit", "wait", "run", "gpus", "user", "group")}
    never = 0
    for row in reader:
        number = reader.line_num
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            lines.reject(number, f"bad CSV line: expected {len(header)} fields, got {len(row)}")
            continue
        cell = lambda role: row[column[role]] if column[role] is not None else ""  # noqa: E731
        try:
            submit = _timestamp(cell("submit"))
            start = _timestamp(cell("start"))
            end = _timestamp(cell("end"))
            gpus = float(cell("gpus") or 0)
            duration = _timestamp(cell("duration"))
            if submit is None:
                raise _Bad("no submit time")
        except (_Bad, ValueError) as error:
            lines.reject(number, f"bad CSV line: {error}")
            continue
        if duration is None and (start is None or end is None):
            never += 1
            continue
        run = duration if duration is not None else end - start
        raw_id = cell("id")
        digits = re.findall(r"\d+", raw_id)
        out["id"].append(int(digits[-1]) if digits else len(out["id"]))
        out["submit"].append(submit)
        out["wait"].append(start - submit if start is not None else -1.0)
        out["run"].append(run)
        out["gpus"].append(gpus)
        out["user"].append(users(cell("user")))
        out["group"].append(groups(cell("group")))
    (submit,) = _shifted(out["submit"])
    return make_trace(name=name, format="csv", job_id=out["id"], submit_s=submit, run_s=out["run"],
                      estimate_s=[-1.0] * len(submit), gpus=out["gpus"], user=out["user"], queue=out["group"],
                      recorded_wait_s=out["wait"], users=users.names(), queues=groups.names(),
                      dropped={"never started": never} if never else {}, num_bad_lines=lines.bad)


# Philly JSON -----------------------------------------------------------------------------------------------
def parse_philly(text: str, *, name: str = "<philly>", skip_bad: bool = False) -> Trace:
    """Philly ``cluster_job_log``: a JSON list of jobs with ``submitted_time``, ``user``, ``vc`` and
    ``attempts`` [{start_time, end_time, detail: [{ip, gpus: [...]}]}]. Run = first attempt start to
    last attempt end (retries included, as the Philly analysis counts them); GPUs = most in one attempt.
    Bad entries are reported by their position in the list."""
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"malformed JSON: {error.msg}", source=name, line=error.lineno) from None
    if not isinstance(entries, list):
        raise ConfigError("expected a JSON list of jobs (Philly cluster_job_log)", source=name)
    lines = _Lines(name, skip_bad)
    users, groups = _Names(), _Names()
    out: dict[str, list] = {k: [] for k in ("submit", "wait", "run", "gpus", "user", "group")}
    never = 0
    for position, entry in enumerate(entries, start=1):
        try:
            submit = _timestamp(str(entry["submitted_time"]))
            attempts = [a for a in entry.get("attempts") or [] if a.get("start_time")]
            if submit is None:
                raise _Bad("no submitted_time")
            starts = [_timestamp(str(a["start_time"])) for a in attempts]
            ends = [_timestamp(str(a.get("end_time") or "")) for a in attempts]
            gpus = max((sum(len(d.get("gpus", [])) for d in a.get("detail") or []) for a in attempts), default=0)
        except (_Bad, KeyError, TypeError, AttributeError) as error:
            lines.reject(None, f"bad Philly job #{position} in the list: {error}")
            continue
        if not attempts or ends[-1] is None:
            never += 1
            continue
        out["submit"].append(submit)
        out["wait"].append(starts[0] - submit)
        out["run"].append(ends[-1] - starts[0])
        out["gpus"].append(gpus)
        out["user"].append(users(str(entry.get("user", ""))))
        out["group"].append(groups(str(entry.get("vc", ""))))
    (submit,) = _shifted(out["submit"])
    return make_trace(name=name, format="philly", job_id=range(1, len(submit) + 1), submit_s=submit,
                      run_s=out["run"], estimate_s=[-1.0] * len(submit), gpus=out["gpus"], user=out["user"],
                      queue=out["group"], recorded_wait_s=out["wait"], users=users.names(),
                      queues=groups.names(), dropped={"never started": never} if never else {},
                      num_bad_lines=lines.bad)
