"""A trace as a table of jobs: one numpy column per field, sorted by submit time.

Every reader (SWF, sacct, GPU-cluster CSVs, the synthetic generator) ends in
``make_trace``, so the rules live in one place:

* jobs are sorted by (submit time, job id), stably;
* a job that cannot be replayed is dropped and counted by reason (unknown or
  zero run time, no GPUs asked for, never started);
* the estimate is the user's requested time; where the trace has none the run
  time is used (perfect estimates, said in ``Trace.exact_estimates``);
* a job that ran past its request is cut at the request, as SLURM kills a job
  at its time limit, and counted in ``num_truncated``; so every estimate is an
  upper bound on the run time, which is what backfilling's guarantees rest on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

COLUMNS = ("job_id", "submit_s", "run_s", "estimate_s", "gpus", "user", "queue", "partition", "recorded_wait_s")


@dataclass(**FROZEN)
class Trace:
    """Jobs to replay. Arrays are read-only and share one order (submit time, then job id)."""

    name: str
    format: str
    job_id: np.ndarray
    submit_s: np.ndarray
    run_s: np.ndarray
    estimate_s: np.ndarray
    gpus: np.ndarray
    user: np.ndarray        # small ints, -1 unknown; names in ``users`` where the trace has them
    queue: np.ndarray       # SWF queue / SLURM QOS / CSV vc or qos, -1 unknown
    partition: np.ndarray   # -1 unknown
    recorded_wait_s: np.ndarray  # the wait the trace itself records (its real scheduler), NaN unknown
    users: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    dropped: Mapping[str, int] = field(default_factory=dict)  # reason -> jobs left out
    num_bad_lines: int = 0       # malformed lines skipped with --skip-bad
    num_truncated: int = 0       # jobs cut at their requested time
    exact_estimates: int = 0     # jobs without a request, whose run time is their estimate
    header: Mapping[str, str] = field(default_factory=dict)  # SWF header comments (MaxProcs, ...)

    @property
    def num_jobs(self) -> int:
        return int(self.job_id.size)

    @property
    def max_gpus(self) -> int | None:
        """The trace's machine size from its header (SWF MaxProcs, else MaxNodes), if given."""
        for key in ("MaxProcs", "MaxNodes"):
            text = self.header.get(key, "").split()
            if text and text[0].isdigit() and int(text[0]) > 0:
                return int(text[0])
        return None

    def limited_to(self, num_gpus: int) -> "Trace":
        """The jobs that fit a cluster of ``num_gpus``; the others counted as 'larger than the cluster'."""
        keep = self.gpus <= num_gpus
        if keep.all():
            return self
        columns = {name: getattr(self, name)[keep] for name in COLUMNS}
        dropped = dict(self.dropped)
        dropped["larger than the cluster"] = dropped.get("larger than the cluster", 0) + int((~keep).sum())
        return Trace(name=self.name, format=self.format, **columns, users=self.users, queues=self.queues,
                     partitions=self.partitions, dropped=dropped, num_bad_lines=self.num_bad_lines,
                     num_truncated=self.num_truncated, exact_estimates=self.exact_estimates,
                     header=self.header)


def make_trace(*, name: str, format: str, job_id, submit_s, run_s, estimate_s, gpus, user=None, queue=None,
               partition=None, recorded_wait_s=None, users: tuple[str, ...] = (), queues: tuple[str, ...] = (),
               partitions: tuple[str, ...] = (), dropped: Mapping[str, int] | None = None,
               num_bad_lines: int = 0, header: Mapping[str, str] | None = None) -> Trace:
    """Validate, drop what cannot be replayed, cut overruns at the request, sort by submit time.

    ``estimate_s`` <= 0 means unknown: the run time is used. ``run_s`` < 0 is unknown.
    """
    submit = np.asarray(submit_s, dtype=np.float64)
    n = submit.size
    run = np.asarray(run_s, dtype=np.float64)
    estimate = np.asarray(estimate_s, dtype=np.float64)
    count = np.asarray(gpus, dtype=np.float64)
    ids = np.asarray(job_id, dtype=np.int64)
    recorded = np.full(n, np.nan) if recorded_wait_s is None else np.asarray(recorded_wait_s, dtype=np.float64)
    extra = {key: np.full(n, -1, np.int64) if value is None else np.asarray(value, dtype=np.int64)
             for key, value in (("user", user), ("queue", queue), ("partition", partition))}
    sizes = {len(a) for a in (ids, run, estimate, count, recorded, *extra.values())}
    if sizes != {n}:
        raise ConfigError(f"trace columns differ in length ({sorted(sizes | {n})})", source=name)
    if not np.isfinite(submit).all():
        raise ConfigError("a submit time is not a number", source=name)
    for label, column in (("run time", run), ("requested time", estimate), ("GPU count", count)):
        huge = np.abs(np.nan_to_num(column, nan=0.0, posinf=np.inf, neginf=np.inf)) >= 2.0**53  # nan = unknown
        if huge.any():
            first = int(np.flatnonzero(huge)[0])
            raise ConfigError(f"job {ids[first] if abs(ids[first]) < 2**53 else first}: {label} {column[first]:g} "
                              f"is not a finite number below 2**53", source=name)
    reasons = dict(dropped or {})
    rules = (("unknown or zero run time", ~(run > 0)), ("no GPUs requested", ~(count > 0)))
    keep = np.ones(n, dtype=bool)
    for reason, bad in rules:
        bad &= keep
        if bad.any():
            reasons[reason] = reasons.get(reason, 0) + int(bad.sum())
        keep &= ~bad
    order = np.flatnonzero(keep)
    order = order[np.lexsort((ids[order], submit[order]))]
    run, estimate = run[order], estimate[order]
    unknown = ~(estimate > 0)
    estimate = np.where(unknown, run, estimate)
    truncated = run > estimate
    run = np.minimum(run, estimate)
    columns = {"job_id": ids[order], "submit_s": submit[order], "run_s": run, "estimate_s": estimate,
               "gpus": np.ceil(count[order]).astype(np.int64),
               "recorded_wait_s": np.where(recorded[order] >= 0, recorded[order], np.nan),
               **{key: value[order] for key, value in extra.items()}}
    for array in columns.values():
        array.flags.writeable = False
    return Trace(name=name, format=format, **columns, users=tuple(users), queues=tuple(queues),
                 partitions=tuple(partitions), dropped=reasons, num_bad_lines=num_bad_lines,
                 num_truncated=int(truncated.sum()), exact_estimates=int(unknown.sum()),
                 header=dict(header or {}))
