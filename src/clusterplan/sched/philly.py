"""Philly's JSON job log (``cluster_job_log``)."""

from __future__ import annotations

import json

from clusterplan.errors import ConfigError
from clusterplan.parsing import parse_json
from clusterplan.sched.jobs import Trace, make_trace
from clusterplan.sched.trace_lines import BadLine, Lines, Names, shifted, timestamp


def parse_philly(text: str, *, name: str = "<philly>", skip_bad: bool = False) -> Trace:
    """Philly ``cluster_job_log``: a JSON list of jobs with ``submitted_time``, ``user``, ``vc`` and
    ``attempts`` [{start_time, end_time, detail: [{ip, gpus: [...]}]}]. Run = first attempt start to
    last attempt end (retries included, as the Philly analysis counts them); GPUs = most in one attempt.
    Bad entries are reported by their position in the list."""
    try:
        entries = parse_json(text, source=name)
    except json.JSONDecodeError as error:
        raise ConfigError(f"malformed JSON: {error.msg}", source=name, line=error.lineno) from None
    if not isinstance(entries, list):
        raise ConfigError("expected a JSON list of jobs (Philly cluster_job_log)", source=name)
    lines = Lines(name, skip_bad)
    users, groups = Names(), Names()
    out: dict[str, list] = {k: [] for k in ("submit", "wait", "run", "gpus", "user", "group")}
    never = 0
    for position, entry in enumerate(entries, start=1):
        try:
            submit = timestamp(str(entry["submitted_time"]))
            attempts = [a for a in entry.get("attempts") or [] if a.get("start_time")]
            if submit is None:
                raise BadLine("no submitted_time")
            starts = [timestamp(str(a["start_time"])) for a in attempts]
            ends = [timestamp(str(a.get("end_time") or "")) for a in attempts]
            gpus = max((sum(len(d.get("gpus", [])) for d in a.get("detail") or []) for a in attempts), default=0)
        except (BadLine, KeyError, TypeError, AttributeError) as error:
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
    (submit,) = shifted(out["submit"])
    return make_trace(name=name, format="philly", job_id=range(1, len(submit) + 1), submit_s=submit,
                      run_s=out["run"], estimate_s=[-1.0] * len(submit), gpus=out["gpus"], user=out["user"],
                      queue=out["group"], recorded_wait_s=out["wait"], users=users.names(),
                      queues=groups.names(), dropped={"never started": never} if never else {},
                      num_bad_lines=lines.bad)
