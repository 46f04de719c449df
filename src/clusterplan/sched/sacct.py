"""SLURM accounting: ``sacct --parsable2`` with a header line."""

from __future__ import annotations

import re

from clusterplan.errors import ConfigError
from clusterplan.sched.jobs import Trace, make_trace
from clusterplan.sched.trace_lines import LARGEST, BadLine, Lines, Names, shifted, timestamp

_GPU_TRES = re.compile(r"gres/gpu(?::[^=,]+)?=(\d+)")
_GPU_GRES = re.compile(r"gpu(?::[^:,()]+)?:(\d+)")


def parse_sacct(text: str, *, name: str = "<sacct>", skip_bad: bool = False) -> Trace:
    """``sacct --parsable2`` with a header: JobID, Submit, Start, End (or Elapsed), AllocTRES/ReqTRES
    (or AllocGRES/ReqGRES) for GPUs; optional User, Partition, QOS, Timelimit(Raw). Job steps
    (``123.batch``, ``123.0``) are skipped; jobs that never started or still run are dropped."""
    lines = Lines(name, skip_bad)
    rows = text.splitlines()
    if not rows:
        raise ConfigError("empty sacct output", source=name)
    header, index, gpu_columns = _header(rows[0], name)
    users, partitions, qos = Names(), Names(), Names()
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
            submit, start = timestamp(get("submit")), timestamp(get("start"))
            if submit is None:
                raise BadLine("no submit time")
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
            if number_id >= LARGEST:
                raise BadLine(f"job id {job!r} is not below 2**53")
        except BadLine as error:
            lines.reject(number, f"bad sacct line: {error}")
            continue
        for key, value in (("id", number_id), ("submit", submit), ("start", start), ("run", run),
                           ("limit", limit), ("gpus", gpus), ("user", users(get("user"))),
                           ("part", partitions(get("partition"))), ("qos", qos(get("qos")))):
            out[key].append(value)
    submit, start = shifted(out["submit"], out["start"])
    return make_trace(name=name, format="sacct", job_id=out["id"], submit_s=submit, run_s=out["run"],
                      estimate_s=out["limit"], gpus=out["gpus"], user=out["user"], queue=out["qos"],
                      partition=out["part"], recorded_wait_s=[s - t for s, t in zip(start, submit)],
                      users=users.names(), queues=qos.names(), partitions=partitions.names(),
                      dropped={k: v for k, v in dropped.items() if v}, num_bad_lines=lines.bad)


def _header(line: str, name: str) -> tuple[list[str], dict[str, int], list[str]]:
    """The header's columns (lower case), each column's index, and the columns that may hold GPUs."""
    header = [column.strip().lower() for column in line.split("|")]
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
    return header, index, gpu_columns


def _duration(text: str) -> float | None:
    """SLURM '[DD-[HH:]]MM:SS' -> seconds; None for UNLIMITED, Partition_Limit or empty."""
    text = text.strip()
    if not text or not text[0].isdigit():
        return None
    days, _, clock = text.rpartition("-")
    parts = clock.split(":")
    if not days and len(parts) == 1:
        raise BadLine(f"not a duration: {text!r}")
    try:
        seconds = 0.0
        for part in parts:
            seconds = seconds * 60 + float(part)
        return seconds + (int(days) * 86400 if days else 0)
    except ValueError:
        raise BadLine(f"not a duration: {text!r}") from None


def _run_time(end: str, elapsed_raw: str, elapsed: str, start: float, has_end: bool) -> float | None:
    """End - Start where there is an End column (None while the job runs), else Elapsed."""
    if has_end:
        finish = timestamp(end)
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
        count = int(generic.group(1))
    else:
        typed = _GPU_TRES.findall(text) or _GPU_GRES.findall(text)
        count = sum(int(n) for n in typed) if typed else 0
    if count >= LARGEST:   # an int64 cast would wrap it negative
        raise BadLine(f"GPU count {count:.3g} is not below 2**53")
    return count
