"""Checkpoint cost, the optimum interval (Young 1974, Daly 2006) and goodput (docs/reliability.md).

Notation (Daly's): delta = time training is blocked per checkpoint, M = mean
time to interruption, R = restart cost per interruption, tau = compute time
between checkpoints.

    Young:   tau = sqrt(2 delta M)
    Daly:    tau = sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta   (delta < 2M)
             tau = M                                                                   (delta >= 2M)
    goodput = T_s / T_w = tau / (M e^(R/M) (e^((tau + delta)/M) - 1))

The last is Daly's wall-clock model for exponential failures (failures may
also strike during checkpoints and restarts); it is exact for that model, and
to first order its waste is delta/tau + (tau/2 + R)/M.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class Checkpoint:
    """One checkpoint of the job: its size and how long it takes to save and to load."""

    size_bytes: float
    asynchronous: bool
    metadata_s: float  # blocking whatever the size: save planning, metadata, file creation and commit
    copy_s: float      # each GPU's shard to host memory over its host link
    write_s: float     # the whole checkpoint to the checkpoint tier
    write_Bps: float   # min(tier write bandwidth, writers x per-client bandwidth)
    reload_s: float    # read back on restart

    def blocking_s(self, interval_s: float = math.inf) -> float:
        """Training time lost per checkpoint at ``interval_s``.

        Both pay the fixed metadata time. Synchronous: the copy and the write pipelined, so the slower
        of the two. Asynchronous: the copy, plus the wait for the previous write when it has not
        finished within the interval.
        """
        if not self.asynchronous:
            return self.metadata_s + max(self.copy_s, self.write_s)
        return self.metadata_s + self.copy_s + max(0.0, self.write_s - interval_s)

    @property
    def unsaved_s(self) -> float:
        """Expected extra work lost per failure: a failure during an asynchronous write finds the
        newest checkpoint incomplete, with probability write/tau, and loses a further tau."""
        return self.write_s if self.asynchronous else 0.0


@dataclass(**FROZEN)
class Restart:
    """What one interruption costs besides the lost work since the checkpoint."""

    detect_s: float
    overhead_s: float   # reschedule, start, initialise
    reload_s: float
    unsaved_s: float

    @property
    def total_s(self) -> float:
        return self.detect_s + self.overhead_s + self.reload_s + self.unsaved_s


@dataclass(**FROZEN)
class Interval:
    """The optimum intervals by both formulas and the one used."""

    young_s: float
    daly_s: float
    used_s: float
    chosen_by: str   # "daly", "scenario", or "write time" (an asynchronous write takes longer than Daly's)


@dataclass(**FROZEN)
class Waste:
    """Fractions of wall time lost: to checkpoints, to recomputing lost work, to restarts; sum 1 - goodput."""

    checkpoint: float
    lost_work: float
    restart: float

    @property
    def total(self) -> float:
        return self.checkpoint + self.lost_work + self.restart


@dataclass(**FROZEN)
class Outcome:
    interval: Interval
    restart: Restart
    blocking_s: float
    goodput: float
    waste: Waste


def young_interval_s(checkpoint_s: float, mtti_s: float) -> float:
    """Young (1974): the first-order optimum, sqrt(2 delta M)."""
    return math.sqrt(2 * checkpoint_s * mtti_s)


def daly_interval_s(checkpoint_s: float, mtti_s: float) -> float:
    """Daly (2006): the higher-order optimum; M when the checkpoint takes 2M or longer."""
    if checkpoint_s >= 2 * mtti_s:
        return mtti_s
    ratio = checkpoint_s / (2 * mtti_s)
    return math.sqrt(2 * checkpoint_s * mtti_s) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - checkpoint_s


def _log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0, without overflow."""
    return x + math.log(-math.expm1(-x))


def _log_factors(interval_s: float, checkpoint_s: float, restart_s: float, mtti_s: float) -> tuple[float, ...]:
    """ln of T_w/T_s split into three factors: (tau + delta)/tau, M(e^(a/M) - 1)/a with a = tau + delta, e^(R/M)."""
    span = interval_s + checkpoint_s
    return (math.log1p(checkpoint_s / interval_s),
            _log_expm1(span / mtti_s) - math.log(span / mtti_s),
            restart_s / mtti_s)


def goodput_fraction(interval_s: float, checkpoint_s: float, restart_s: float, mtti_s: float) -> float:
    """Useful time / wall time in Daly's exponential-failure model."""
    return math.exp(-sum(_log_factors(interval_s, checkpoint_s, restart_s, mtti_s)))


def waste_split(interval_s: float, checkpoint_s: float, restart_s: float, mtti_s: float) -> Waste:
    """1 - goodput shared among the three factors of T_w in proportion to their logarithms."""
    logs = _log_factors(interval_s, checkpoint_s, restart_s, mtti_s)
    total = sum(logs)
    lost = -math.expm1(-total)
    return Waste(checkpoint=lost * logs[0] / total, lost_work=lost * logs[1] / total,
                 restart=lost * logs[2] / total)


def first_order_waste(interval_s: float, checkpoint_s: float, restart_s: float, mtti_s: float) -> float:
    """The textbook approximation delta/tau + (tau/2 + R)/M (small delta/tau and tau/M)."""
    return checkpoint_s / interval_s + (interval_s / 2 + restart_s) / mtti_s


def outcome(checkpoint: Checkpoint, *, mtti_s: float, interval_s: float, detect_s: float,
            overhead_s: float) -> Outcome:
    """Interval, restart cost and goodput of ``checkpoint`` at ``mtti_s``; ``interval_s`` 0 = the optimum."""
    floor_s = checkpoint.blocking_s()
    young, daly = young_interval_s(floor_s, mtti_s), daly_interval_s(floor_s, mtti_s)
    if interval_s > 0:
        used, chosen_by = interval_s, "scenario"
    elif checkpoint.asynchronous and checkpoint.write_s > daly:
        used, chosen_by = checkpoint.write_s, "write time"
    else:
        used, chosen_by = daly, "daly"
    restart = Restart(detect_s=detect_s, overhead_s=overhead_s, reload_s=checkpoint.reload_s,
                      unsaved_s=checkpoint.unsaved_s)
    blocking = checkpoint.blocking_s(used)
    return Outcome(interval=Interval(young_s=young, daly_s=daly, used_s=used, chosen_by=chosen_by),
                   restart=restart, blocking_s=blocking,
                   goodput=goodput_fraction(used, blocking, restart.total_s, mtti_s),
                   waste=waste_split(used, blocking, restart.total_s, mtti_s))


def transfer_s(size_bytes: float, *, tier_Bps: float, clients: int, client_Bps: float) -> tuple[float, float]:
    """(seconds, bytes/s) to move ``size_bytes`` between ``clients`` nodes and a tier: the tier's aggregate
    bandwidth or the clients' combined bandwidth, whichever is lower."""
    rate = min(tier_Bps, clients * client_Bps)
    return size_bytes / rate, rate
