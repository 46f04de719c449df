"""A seeded synthetic workload for what-if studies: Poisson arrivals, a GPU-size mix, log-normal run
times, and user estimates that overestimate the run time and snap to a few common limits.

Defaults follow the public GPU-cluster traces (shared/research/scheduling_reliability.md A3): the
median job asks for 1 GPU (Helios, Acme, Philly), run times are heavy-tailed (median minutes, mean
hours). Estimates are modal, as real ones are ("90% of jobs use the same 20 estimates", Tsafrir &
Feitelson 2006), and not run x a fixed factor (Tsafrir, JSSPP'10): the user pads the run time by a
factor 1 + Exponential(``padding``) and asks for the next standard limit at or above it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN, check
from clusterplan.sched.jobs import Trace, make_trace

HOUR_S = 3600.0
LIMITS_S = (900.0, 1800.0, HOUR_S, 2 * HOUR_S, 4 * HOUR_S, 8 * HOUR_S, 12 * HOUR_S, 24 * HOUR_S, 48 * HOUR_S,
            72 * HOUR_S, 168 * HOUR_S)
GPU_MIX = {1: 0.55, 2: 0.10, 4: 0.10, 8: 0.15, 16: 0.05, 32: 0.03, 64: 0.02}


@dataclass(**FROZEN)
class Workload:
    """What to generate. ``load`` = offered GPU-seconds / (cluster GPUs x submission span)."""

    num_jobs: int = 10_000
    load: float = 0.85
    seed: int = 0
    gpu_mix: Mapping[int, float] = field(default_factory=lambda: dict(GPU_MIX))
    median_run_s: float = 600.0
    run_sigma: float = 2.0          # of ln(run time)
    min_run_s: float = 30.0
    max_run_s: float = 168 * HOUR_S
    padding: float = 1.0            # mean extra factor users add before rounding up to a limit
    num_users: int = 40
    user_skew: float = 1.1          # Zipf exponent of jobs per user

    def __post_init__(self) -> None:
        for key, (name, low, high) in RANGES.items():
            _check_range(key, getattr(self, name), low, high)
        check(self.min_run_s <= self.median_run_s <= self.max_run_s, "median_run",
              f"need min_run ({self.min_run_s:g}) <= median_run ({self.median_run_s:g}) <= max_run "
              f"({self.max_run_s:g})")
        check(bool(self.gpu_mix) and all(_in(g, *GPU_COUNTS) and _in(p, *GPU_WEIGHTS)
                                         for g, p in self.gpu_mix.items())
              and sum(self.gpu_mix.values()) > 0, "gpus",
              f"needs GPU counts from 1 to {GPU_COUNTS[1]:,} with finite weights from 0 to {GPU_WEIGHTS[1]:g}, "
              f"not all 0; got {_mix_text(self.gpu_mix)}")


MAX_JOBS = 1_000_000
"""The most jobs a synthetic trace may ask for: the size the scheduler's speed goal is set at (EASY replays a
million overloaded jobs in about 40 s, docs/scheduling.md); larger asks are refused before anything is drawn."""
RANGES = {   # spec key -> (field, lowest, highest), both ends allowed; every value must also be finite
    "jobs": ("num_jobs", 1, MAX_JOBS),
    "load": ("load", 1e-6, 100.0),
    "seed": ("seed", 0, 2**63 - 1),
    "median_run": ("median_run_s", 1e-3, 1e9),
    "sigma": ("run_sigma", 0.0, 10.0),
    "min_run": ("min_run_s", 1e-3, 1e9),
    "max_run": ("max_run_s", 1e-3, 1e9),
    "padding": ("padding", 0.0, 100.0),
    "users": ("num_users", 1, 100_000),
    "skew": ("user_skew", 0.0, 10.0),
}
GPU_COUNTS = (1, 1_000_000)
GPU_WEIGHTS = (0.0, 1e12)


def _in(value: float, low: float, high: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high


def _check_range(key: str, value: float, low: float, high: float) -> None:
    whole = isinstance(low, int) and isinstance(high, int)
    span = f"an integer from {low:,} to {high:,}" if whole else f"a number from {low:g} to {high:g}"
    check(_in(value, low, high) and (not whole or float(value).is_integer()), key, f"must be {span}, got {value}")


def _mix_text(mix: Mapping[int, float]) -> str:
    return "/".join(f"{g}:{p:g}" for g, p in mix.items())


def synthetic(workload: Workload, *, num_gpus: int) -> Trace:
    """Jobs for a cluster of ``num_gpus`` (sizes above it are left out of the mix), seeded by ``workload.seed``."""
    rng = np.random.default_rng(workload.seed)
    sizes = np.array([g for g in workload.gpu_mix if g <= num_gpus])
    if not sizes.size:
        raise ConfigError(f"no GPU count in the mix fits {num_gpus} GPUs", key="gpu_mix")
    weights = np.array([workload.gpu_mix[g] for g in sizes.tolist()], dtype=float)
    n = workload.num_jobs
    gpus = rng.choice(sizes, size=n, p=weights / weights.sum())
    run = np.exp(rng.normal(np.log(workload.median_run_s), workload.run_sigma, size=n))
    run = np.clip(np.round(run), workload.min_run_s, workload.max_run_s)
    padded = run * (1 + rng.exponential(workload.padding, size=n)) if workload.padding else run
    limits = np.array(LIMITS_S)
    estimate = limits[np.minimum(np.searchsorted(limits, padded), limits.size - 1)]
    estimate = np.maximum(estimate, run)
    rank = np.arange(1, workload.num_users + 1, dtype=float)
    popularity = rank ** -workload.user_skew
    user = rng.choice(workload.num_users, size=n, p=popularity / popularity.sum())
    rate = workload.load * num_gpus / float(np.mean(gpus * run))   # jobs per second
    submit = np.cumsum(rng.exponential(1 / rate, size=n))
    submit = np.round(submit - submit[0], 3)
    return make_trace(name=f"synthetic(jobs={n}, load={workload.load:g}, seed={workload.seed})",
                      format="synthetic", job_id=np.arange(1, n + 1), submit_s=submit, run_s=run,
                      estimate_s=estimate, gpus=gpus, user=user,
                      users=tuple(f"user{i}" for i in range(1, workload.num_users + 1)))


_KEYS = {"jobs": ("num_jobs", int), "load": ("load", float), "seed": ("seed", int),
         "median_run": ("median_run_s", float), "sigma": ("run_sigma", float), "min_run": ("min_run_s", float),
         "max_run": ("max_run_s", float), "padding": ("padding", float), "users": ("num_users", int),
         "skew": ("user_skew", float)}


def parse_workload(text: str) -> Workload:
    """``synthetic[:jobs=N,load=L,seed=S,median_run=s,sigma=x,padding=x,users=N,skew=x,gpus=1:0.5/8:0.5]``."""
    _, _, options = text.partition(":")
    values: dict[str, object] = {}
    for pair in filter(None, (p.strip() for p in options.split(","))):
        key, sep, raw = pair.partition("=")
        try:
            if not sep:
                raise ValueError("expected key=value")
            if key == "gpus":
                mix = {}
                for part in raw.split("/"):
                    count, _, weight = part.partition(":")
                    mix[_number(count, int)] = _number(weight or "1", float)
                values["gpu_mix"] = mix
            elif key in _KEYS:
                name, kind = _KEYS[key]
                values[name] = _number(raw, kind)
            else:
                raise ValueError(f"unknown key; one of {', '.join([*_KEYS, 'gpus'])}")
        except ValueError as error:
            raise ConfigError(str(error), key=key[:40], source=_shown(text)) from None
    try:
        return Workload(**values)
    except ConfigError as error:
        raise ConfigError(error.message, key=error.key, source=_shown(text)) from None


def _shown(text: str) -> str:
    """The spec as an error names it: cut short past 80 characters."""
    return text if len(text) <= 80 else f"{text[:77]}..."


def _number(raw: str, kind: type) -> float:
    """``raw`` as ``kind``, refusing long digit strings before converting them (Python's own int limit is 4,300
    digits, and no range here needs more than 20)."""
    raw = raw.strip()
    if len(raw) > 32:
        raise ValueError(f"{raw[:20]}... is too long for a number ({len(raw):,} characters)")
    try:
        return kind(raw)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise ValueError(f"must be {what}, got {raw!r}") from None
