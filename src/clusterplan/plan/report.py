"""Everything the HTML report shows, composed once: the plan, the collectives per group size, the training
prediction per job size, and the sensitivity analysis (docs/report.md)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace

from clusterplan.catalog import Catalog
from clusterplan.cost.sensitivity import Sensitivity
from clusterplan.errors import ConfigError
from clusterplan.perf.collectives import size_sweep
from clusterplan.plan.collectives import Collectives, Measured, group
from clusterplan.plan.core import Plan, planned
from clusterplan.plan.scenario import priced, resolved
from clusterplan.plan.size import Sizing, size
from clusterplan.plan.training import Training, training
from clusterplan.plan.sensitivity import check_sampling, sensitivity
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec

COLLECTIVE_SIZES = (2**10, 16 * 2**30)   # 1 KiB .. 16 GiB, factor 2, as nccl-tests -b 1K -e 16G -f 2


@dataclass(**FROZEN)
class SweepPoint:
    """The workload on ``gpus`` GPUs (its best layout only); ``job`` None where ``reason`` says why not."""

    gpus: int
    job: Training | None
    reason: str = ""


@dataclass(**FROZEN)
class Report:
    plan: Plan
    collectives: tuple[Collectives, ...]     # one node, the whole cluster, the measured run's group
    sweep: tuple[SweepPoint, ...] | None     # None without a workload
    sensitivity: Sensitivity
    sizing: Sizing | None = None             # when the scenario has a [size] section


def report(spec: Spec, catalog: Catalog | None = None, *, samples: int, seed: int, offer: str | None = None,
           measured: Measured | None = None, progress: Callable[[int], None] | None = None,
           today: dt.date | None = None) -> Report:
    """The report of ``spec``: ``measured`` drawn beside the prediction for its own group; ``today``: as ``plan``'s."""
    check_sampling(samples, seed)
    catalog = priced(spec, catalog)
    spec = resolved(spec, catalog)
    whole = planned(spec, catalog, today=today)
    return Report(plan=whole, collectives=report_collectives(whole, measured), sweep=training_sweep(whole, catalog),
                  sensitivity=sensitivity(spec, catalog, samples=samples, seed=seed, offer=offer, progress=progress),
                  sizing=size(spec, catalog) if spec.size.defined else None)


def group_sizes(num_gpus: int, gpus_per_node: int, measured_ranks: int | None) -> list[int]:
    """One node, the whole cluster, and the measured run's rank count, each once, smallest first."""
    sizes = {min(gpus_per_node, num_gpus), num_gpus}
    if measured_ranks:
        sizes.add(measured_ranks)
    return sorted(sizes)


def report_collectives(whole: Plan, measured: Measured | None) -> tuple[Collectives, ...]:
    """Predicted all_reduce (or the measured run's collective) for each group size; measured rows attached."""
    built = whole.design
    op, ranks = (measured.op or "all_reduce", measured.num_ranks) if measured else ("all_reduce", None)
    if ranks and not (1 <= ranks <= built.num_gpus
                      and (ranks <= built.gpus_per_node or ranks % built.gpus_per_node == 0)):
        raise ConfigError(f"the run has {ranks} ranks; the cluster has {built.num_gpus} GPUs in nodes of "
                          f"{built.gpus_per_node}", source=measured.source)
    sizes = size_sweep(*COLLECTIVE_SIZES, factor=2.0)
    measured_group = ranks or built.num_gpus
    return tuple(group(whole.spec, built, op=op, sizes=sizes, gpus=gpus,
                       measured=measured if measured and measured.rows and gpus == measured_group else None)
                 for gpus in group_sizes(built.num_gpus, built.gpus_per_node, ranks))


def job_sizes(num_gpus: int, gpus_per_node: int, job_gpus: int) -> list[int]:
    """One node doubling up to the whole cluster, the whole cluster, and the plan's job, each once, smallest first."""
    sizes, gpus = {num_gpus, job_gpus}, min(gpus_per_node, num_gpus)
    while gpus < num_gpus:
        sizes.add(gpus)
        gpus *= 2
    return sorted(sizes)


def training_sweep(whole: Plan, catalog: Catalog) -> tuple[SweepPoint, ...] | None:
    """The workload predicted on each job size (its best layout only), or None without a workload."""
    if whole.training is None:
        return None
    spec, built = whole.spec, whole.design
    offers = [rental.cost.offer for rental in whole.rentals]
    points = []
    for gpus in job_sizes(built.num_gpus, built.gpus_per_node, whole.training.num_gpus):
        if gpus == whole.training.num_gpus:   # the plan's own job, already predicted
            points.append(SweepPoint(gpus=gpus, job=whole.training))
            continue
        sized = replace(spec, workload=replace(spec.workload, gpus=gpus))
        try:
            job = training(sized, catalog, built, whole.costs.cost_per_gpu_hour_usd, offers, top=1)
        except ConfigError as error:   # a layout degree held fixed that this size cannot hold
            points.append(SweepPoint(gpus=gpus, job=None, reason=error.message))
            continue
        points.append(SweepPoint(gpus=gpus, job=job))
    return tuple(points)
