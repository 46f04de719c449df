"""Storage for the training job: capacity, data-loading bandwidth, and a burst buffer for checkpoints.

The checkpoint tier is judged by what its finite write bandwidth costs in
goodput: the goodput the job would have with an instant write, less the
goodput it has. When that exceeds ``reliability.target_overhead`` and no
burst buffer is configured, the smallest burst buffer of the
``storage.burst_buffer`` tier that brings it under the target is recommended
(or none, when the nodes' storage clients are the limit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from clusterplan.catalog import StorageTier
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class BurstBuffer:
    """A burst buffer of ``units`` building blocks and the goodput the job reaches with it."""

    tier: str
    units: int
    tb: float
    write_Bps: float
    usd: float
    goodput: float


@dataclass(**FROZEN)
class StorageNeeds:
    dataset_tb: float
    checkpoints_tb: float          # checkpoints kept x checkpoint size
    usable_tb: float               # the main tier
    read_Bps: float                # what data loading needs
    read_basis: str                # how read_Bps was found
    read_available_Bps: float      # main tier to the job's nodes
    checkpoint_tier: str           # where checkpoints are written first
    ideal_goodput: float           # with an instant checkpoint write
    storage_cost: float            # ideal_goodput - goodput
    target_overhead: float
    burst_buffer_tb: float         # configured (0 = none)
    drain_Bps: float               # burst buffer to main tier, one checkpoint per interval (0 without one)
    main_write_Bps: float          # main tier from the job's nodes
    recommended: BurstBuffer | None
    client_limited: bool           # no burst buffer meets the target: the nodes' storage clients are too slow

    @property
    def capacity_tb(self) -> float:
        return self.dataset_tb + self.checkpoints_tb


def read_need(*, tokens_per_s: float | None, bytes_per_token: float, read_Bps_per_gpu: float,
              num_gpus: int) -> tuple[float, str]:
    """Data-loading bandwidth: tokens/s x bytes per token when the training model gives tokens/s, else the
    scenario's per-GPU read profile."""
    if tokens_per_s is not None:
        return tokens_per_s * bytes_per_token, "tokens_per_s x reliability.bytes_per_token"
    return read_Bps_per_gpu * num_gpus, "storage.read_Bps_per_gpu x GPUs"


def size_burst_buffer(goodput_at: Callable[[float], float], *, ideal_goodput: float, target: float,
                      tier: StorageTier, num_nodes: int, checkpoint_bytes: float) -> BurstBuffer | None:
    """The fewest blocks of ``tier`` whose write bandwidth keeps the storage cost within ``target``.

    ``goodput_at(write_Bps)`` is the job's goodput when checkpoints are written at ``write_Bps``. The
    buffer holds at least two checkpoints (one being written, one complete); None when even the
    bandwidth of the nodes' storage clients leaves the cost above the target.
    """
    def rate(units: int) -> float:
        return min(units * tier.unit_write_Bps, num_nodes * tier.client_Bps)

    least = max(1, math.ceil(2 * checkpoint_bytes / 1e12 / tier.unit_capacity_tb))
    most = max(least, math.ceil(num_nodes * tier.client_Bps / tier.unit_write_Bps))
    if ideal_goodput - goodput_at(rate(most)) > target:
        return None
    while least < most:  # the cost never rises with more blocks
        middle = (least + most) // 2
        if ideal_goodput - goodput_at(rate(middle)) <= target:
            most = middle
        else:
            least = middle + 1
    tb = most * tier.unit_capacity_tb
    return BurstBuffer(tier=tier.id, units=most, tb=tb, write_Bps=rate(most), usd=tb * tier.price_usd,
                       goodput=goodput_at(rate(most)))
