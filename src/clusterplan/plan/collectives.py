"""What nccl-tests would measure on the planned cluster: one collective over a size sweep, one group.

``clusterplan collectives`` prints one ``Collectives``; the report draws one per group size
(a node, the whole cluster, and the measured run's group).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clusterplan.bench.calibrate import Calibration, calibrated
from clusterplan.catalog import Catalog
from clusterplan.design import Design, design
from clusterplan.errors import ConfigError
from clusterplan.perf.collectives import Prediction, element_count, predict, system_from_design
from clusterplan.perf.evidence import Band, collective_band
from clusterplan.plan.scenario import priced
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec
from clusterplan.units import format_size

MAX_SIZES = 10_000


@dataclass(**FROZEN)
class Measured:
    """A measured run read from an nccl-tests log or a ``clusterplan.bench/1`` document."""

    op: str | None
    num_ranks: int | None
    rows: Mapping[int, dict]      # out-of-place {time_s, algbw_GBps, busbw_GBps} by size in bytes
    source: str


@dataclass(**FROZEN)
class Collectives:
    """The predicted rows of ``op`` on ``prediction.num_ranks`` GPUs of ``design``, and the measured ones beside."""

    spec: Spec
    design: Design
    prediction: Prediction
    dtype: str
    counts: tuple[int, ...]         # elements per row, as nccl-tests prints them
    measured: Measured | None
    calibrated: bool | None         # None: no calibration asked; False: the file has no fit for this group
    bands: tuple[Band, ...] = ()    # per row: the evidence behind its predicted time (docs/evidence.md)


def collectives(spec: Spec, catalog: Catalog | None = None, *, op: str, sizes: Sequence[int], gpus: int | None = None,
                dtype: str = "float", measured: Measured | None = None,
                calibration: Calibration | None = None) -> Collectives:
    """``op`` over ``sizes`` on ``gpus`` GPUs (default: all) of the cluster ``spec`` describes."""
    built = design(spec, priced(spec, catalog))
    if len(sizes) > MAX_SIZES:
        raise ConfigError(f"{len(sizes)} sizes; use a larger -f or -i", key="-f/-i")
    hbm = built.parts.gpu.hbm_bytes
    if max(sizes) > hbm:
        raise ConfigError(f"{format_size(max(sizes))} does not fit the {hbm / 2**30:.0f} GiB of one {built.parts.gpu.id}",
                          key="-e")
    gpus = gpus or built.num_gpus
    if not 1 <= gpus <= built.num_gpus:
        raise ConfigError(f"must be between 1 and the cluster's {built.num_gpus} GPUs, got {gpus}", key="--gpus")
    if gpus > built.gpus_per_node and gpus % built.gpus_per_node:
        raise ConfigError(f"{gpus} GPUs do not fill whole nodes of {built.gpus_per_node}", key="--gpus")
    if gpus > built.domain_gpus and gpus % built.domain_gpus:
        raise ConfigError(f"{gpus} GPUs do not fill whole NVLink domains of {built.domain_gpus}", key="--gpus")
    if measured is not None and measured.op and measured.op != op:
        raise ConfigError(f"the file is a {measured.op} run, not {op}; pass --op {measured.op}",
                          source=measured.source)
    return group(spec, built, op=op, sizes=sizes, gpus=gpus, dtype=dtype, measured=measured, calibration=calibration)


def group(spec: Spec, built: Design, *, op: str, sizes: Sequence[int], gpus: int, dtype: str = "float",
          measured: Measured | None = None, calibration: Calibration | None = None) -> Collectives:
    """The prediction for one group of ``gpus`` on ``built``; sizes below one element per rank are left out."""
    rows = [(size, count) for size, count in (element_count(op, size, dtype, gpus) for size in sizes) if size > 0]
    if not rows:
        raise ConfigError(f"every size is below one {dtype} per rank", key="-b")
    prediction = predict(op, [size for size, _ in rows], system_from_design(built), gpus)
    fitted = None
    if calibration is not None:
        fit = calibration.find(op, gpus)
        fitted = fit is not None
        prediction = calibrated(prediction, fit) if fit is not None else prediction
    nodes = prediction.num_nodes
    bands = tuple(collective_band(gpu=built.parts.gpu.id, num_nodes=nodes, size_bytes=size,
                                  technology=built.parts.fabric.technology,
                                  domain_gpus=built.domain_gpus if built.domain_gpus > built.gpus_per_node else 0)
                  for size, _ in rows)
    return Collectives(spec=spec, design=built, prediction=prediction, dtype=dtype,
                       counts=tuple(count for _, count in rows), measured=measured, calibrated=fitted, bands=bands)
