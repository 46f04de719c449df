"""Standard Workload Format 2.2 (the Parallel Workloads Archive): 18 numeric fields per job."""

from __future__ import annotations

from clusterplan.sched.jobs import Trace, make_trace
from clusterplan.sched.trace_lines import BadLine, Lines
from clusterplan.sched.trace_lines import number as as_number

SWF_FIELDS = ("job", "submit", "wait", "run", "allocated_procs", "cpu_time", "memory", "requested_procs",
              "requested_time", "requested_memory", "status", "user", "group", "executable", "queue", "partition",
              "preceding_job", "think_time")


def parse_swf(text: str, *, name: str = "<swf>", skip_bad: bool = False) -> Trace:
    """Standard Workload Format 2.2: 18 numeric fields per job, ``;`` header comments, -1 unknown.

    GPUs = allocated processors (field 5), else requested (field 8); estimate = requested time (field 9).
    """
    lines = Lines(name, skip_bad)
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
            rows.append([_field(index, field) for index, field in enumerate(fields)])
        except BadLine as error:
            lines.reject(number, f"bad SWF line: {error}")
    columns = list(zip(*rows)) if rows else [()] * 18
    allocated, requested = columns[4], columns[7]
    gpus = [a if a > 0 else r for a, r in zip(allocated, requested)]
    return make_trace(name=name, format="swf", job_id=[int(x) for x in columns[0]], submit_s=columns[1],
                      run_s=columns[3], estimate_s=columns[8], gpus=gpus, user=[int(x) for x in columns[11]],
                      queue=[int(x) for x in columns[14]], partition=[int(x) for x in columns[15]],
                      recorded_wait_s=columns[2], num_bad_lines=lines.bad, header=header)


def _field(index: int, text: str) -> float:
    try:
        return as_number(text)
    except BadLine as error:
        raise BadLine(f"field {index + 1} ({SWF_FIELDS[index]}) {error}: {text!r}") from None
