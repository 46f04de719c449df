"""Fair-share: SLURM's multifactor priority, with EASY backfilling for the top job.

priority = W_age * age + W_size * size + W_fairshare * F + W_partition * P + W_qos * Q, every factor in [0, 1]
(SLURM priority_multifactor.shtml):

* age = min(1, time in queue / ``max_age_s``) (PriorityMaxAge, default 7 days);
* size = GPUs held / GPUs in the cluster (1 - (GPUs - 1) / cluster with ``favor_small``);
* F = 2 ** (-U / S), the classic fair-share factor (classic_fair_share.shtml, dampening 1):
  U is the user's share of all usage, S the user's share of all shares (1 share
  each unless ``shares`` says otherwise). Usage is GPU-seconds held, decayed with
  half-life ``half_life_s`` (PriorityDecayHalfLife, default 7 days) continuously:
  dU/dt = GPUs running - U ln2 / half_life, solved exactly between a user's starts and ends;
* P, Q = the job's partition and QOS factor from ``partition_factor`` / ``qos_factor``
  (names as the trace has them; SWF numbers as strings), 0 where not given.

Priorities are recomputed at the first scheduling event (a submission or a completion)
at or after each ``calc_period_s`` boundary (PriorityCalcPeriod, 5 min) while two or more jobs
wait (else when the second one arrives). SLURM recomputes on
a timer; between events that can only matter when a reordered job could start at the tick,
and leaving those ticks out keeps long quiet stretches free of work. A new job gets its
priority at submission from the factors of the last recalculation. Ties go to the earlier
submission, then the lower job id.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

import numpy as np

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN, check
from clusterplan.sched.easy import Backfill

DAY_S = 86400.0


@dataclass(**FROZEN)
class Multifactor:
    weight_age: float = 1000.0
    weight_fairshare: float = 10000.0
    weight_job_size: float = 1000.0
    weight_partition: float = 1000.0
    weight_qos: float = 1000.0
    max_age_s: float = 7 * DAY_S
    half_life_s: float = 7 * DAY_S
    calc_period_s: float = 300.0
    favor_small: bool = False
    shares: Mapping[str, float] = field(default_factory=dict)
    partition_factor: Mapping[str, float] = field(default_factory=dict)
    qos_factor: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, float):
                check(value >= 0 and math.isfinite(value), item.name, f"must be a number >= 0, got {value}")
        for key in ("max_age_s", "half_life_s", "calc_period_s"):
            check(getattr(self, key) > 0, key, f"must be > 0, got {getattr(self, key)}")
        for name in ("partition_factor", "qos_factor"):
            bad = {k: v for k, v in getattr(self, name).items() if not 0 <= v <= 1}
            check(not bad, name, f"factors must be in [0, 1], got {bad}")
        bad = {k: v for k, v in self.shares.items() if not v > 0}
        check(not bad, "shares", f"must be > 0, got {bad}")


_DURATION = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": DAY_S}


def parse_multifactor(pairs: list[str]) -> Multifactor:
    """``key=value`` options: weights (age, fairshare, job_size, partition, qos), max_age, half_life,
    calc_period (seconds, or with s/m/h/d), favor_small, share:USER, partition:NAME, qos:NAME."""
    values: dict[str, object] = {}
    maps: dict[str, dict[str, float]] = {"shares": {}, "partition_factor": {}, "qos_factor": {}}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key, text = key.strip(), text.strip()
        try:
            if not sep:
                raise ValueError("expected key=value")
            kind, colon, name = key.partition(":")
            if colon:
                target = {"share": "shares", "partition": "partition_factor", "qos": "qos_factor"}.get(kind)
                if target is None:
                    raise ValueError("prefix must be share:, partition: or qos:")
                maps[target][name] = float(text)
            elif f"weight_{key}" in _FIELDS:
                values[f"weight_{key}"] = float(text)
            elif f"{key}_s" in _FIELDS:
                values[f"{key}_s"] = _duration(text)
            elif key == "favor_small":
                values[key] = text.lower() in ("1", "true", "yes", "on")
            else:
                raise ValueError(f"unknown key; one of {', '.join(_KEYS)}")
        except ValueError as error:
            raise ConfigError(str(error), key="--priority", source=pair) from None
    try:
        return Multifactor(**values, **maps)
    except ConfigError as error:
        raise ConfigError(error.message, key=f"--priority {error.key}") from None


def _duration(text: str) -> float:
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number):] or "s"
    if unit not in _DURATION:
        raise ValueError(f"unknown time unit {unit!r} in {text!r} (s, m, h, d)")
    return float(number) * _DURATION[unit]


_FIELDS = {item.name for item in fields(Multifactor)}
_KEYS = ("age", "fairshare", "job_size", "partition", "qos", "max_age", "half_life", "calc_period",
         "favor_small", "share:USER", "partition:NAME", "qos:NAME")


class FairShare(Backfill):
    """EASY backfilling over a queue kept in multifactor-priority order."""

    name = "fairshare"

    def __init__(self, jobs, machine, priority: Multifactor | None = None):
        super().__init__(jobs, machine)
        config = priority or Multifactor()
        self.config = config
        trace = jobs.trace
        self.decay = math.log(2) / config.half_life_s
        users = np.unique(trace.user)
        self.user_index = np.searchsorted(users, trace.user)           # job -> dense user index
        self.user_of: list[int] = self.user_index.tolist()
        names = [_name(trace.users, u) for u in users.tolist()]
        shares = np.array([config.shares.get(name, 1.0) for name in names])
        self.share = shares / shares.sum()
        self.usage = np.zeros(users.size)    # decayed GPU-seconds at ``stamp``
        self.stamp = np.zeros(users.size)
        self.running = np.zeros(users.size)  # GPUs each user holds now
        self.factor = np.ones(users.size)    # fair-share factor at the last recalculation
        num_gpus = jobs.cluster.num_gpus
        size = jobs.demand_array / num_gpus
        if config.favor_small:
            size = 1 - (jobs.demand_array - 1) / num_gpus
        partition = _factors(trace.partition, trace.partitions, config.partition_factor)
        qos = _factors(trace.queue, trace.queues, config.qos_factor)
        self.static = (config.weight_job_size * size + config.weight_partition * partition
                       + config.weight_qos * qos)
        self.submit_array = trace.submit_s
        self.keys: list[tuple[float, int]] = []   # (-priority, job), parallel to the queue
        self.next_calc = math.inf
        self.stale = False   # a recalculation was due while fewer than two jobs waited

    def enqueue(self, job: int, now: float) -> None:
        self._sync()
        config = self.config
        if self.stale and self.queue:
            self._recalculate(now)
        priority = self.static[job] + config.weight_fairshare * self.factor[self.user_of[job]]
        key = (-float(priority), job)
        index = bisect.bisect(self.keys, key)
        self.keys.insert(index, key)
        self.queue.insert(index, job)
        if self.next_calc == math.inf:
            period = config.calc_period_s
            self.next_calc = (math.floor(now / period) + 1) * period

    def _sync(self) -> None:
        if len(self.keys) != len(self.queue):   # jobs started since: drop their keys
            waiting = set(self.queue)
            self.keys = [key for key in self.keys if key[1] in waiting]

    def reorder(self, now: float) -> None:
        self._sync()
        if now < self.next_calc:
            return
        period = self.config.calc_period_s
        self.next_calc = (math.floor(now / period) + 1) * period if self.queue else math.inf
        if len(self.queue) < 2:   # nothing to order: recalculate when a second job comes
            self.stale = True
            return
        self._recalculate(now)

    def _recalculate(self, now: float) -> None:
        config = self.config
        self.stale = False
        self.factor = self._fairshare_factor(now)
        queued = np.fromiter(self.queue, dtype=np.int64, count=len(self.queue))
        age = np.minimum(1.0, (now - self.submit_array[queued]) / config.max_age_s)
        priority = (self.static[queued] + config.weight_age * age
                    + config.weight_fairshare * self.factor[self.user_index[queued]])
        order = np.lexsort((queued, -priority))
        self.queue = queued[order].tolist()
        self.keys = list(zip((-priority[order]).tolist(), self.queue))

    def started(self, job: int, now: float) -> None:
        self._charge(self.user_of[job], now, self.jobs.demand[job])

    def finish(self, job: int, now: float, early: bool) -> None:
        super().finish(job, now, early)
        self._charge(self.user_of[job], now, -self.jobs.demand[job])

    def _charge(self, user: int, now: float, gpus: int) -> None:
        elapsed = now - self.stamp[user]
        if elapsed > 0:
            keep = math.exp(-self.decay * elapsed)
            self.usage[user] = self.usage[user] * keep + self.running[user] * (1 - keep) / self.decay
            self.stamp[user] = now
        self.running[user] += gpus

    def _fairshare_factor(self, now: float) -> np.ndarray:
        keep = np.exp(-self.decay * (now - self.stamp))
        usage = self.usage * keep + self.running * (1 - keep) / self.decay
        total = usage.sum()
        if total <= 0:
            return np.ones_like(usage)
        return np.exp2(-(usage / total) / self.share)


def _name(names: tuple[str, ...], index: int) -> str:
    return names[index] if 0 <= index < len(names) else str(index)


def _factors(ids: np.ndarray, names: tuple[str, ...], table: Mapping[str, float]) -> np.ndarray:
    if not table:
        return np.zeros(ids.size)
    lookup = {value: table.get(_name(names, value), 0.0) for value in np.unique(ids).tolist()}
    return np.array([lookup[value] for value in ids.tolist()])
