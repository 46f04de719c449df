"""The reliability of a scenario's training job: the scenario's settings and the catalog's failure rates
joined for the reliability model, and ``clusterplan reliability``'s result (docs/reliability.md)."""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.catalog import Catalog
from clusterplan.checks import reliability_checks
from clusterplan.design import Design, design
from clusterplan.perf.model import Transformer
from clusterplan.plan.reliability_inputs import reliability_settings, scenario_rates
from clusterplan.plan.scenario import priced
from clusterplan.plan.workload import job_gpus, workload_model
from clusterplan.reliability import Reliability, by_job_size, goodput
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec

DEFAULT_MODEL = "llama2-13b"   # when the scenario's [workload] names no model


@dataclass(**FROZEN)
class ReliabilityResult:
    """``clusterplan reliability``: the job at its GPUs, the same job at each size, and the storage warnings."""

    spec: Spec
    job: Reliability
    sizes: tuple[Reliability, ...]
    warnings: tuple[str, ...]


def job_reliability(spec: Spec, catalog: Catalog, built: Design, model: Transformer, num_gpus: int, *,
                    tokens_per_s: float | None = None, useful_s: float | None = None) -> Reliability:
    """``model`` trained on ``num_gpus`` of ``built``: data loading at ``tokens_per_s`` (else the per-GPU
    profile), over the wall-clock run of ``useful_s`` (else ``reliability.days``)."""
    return goodput(reliability_settings(spec), built, scenario_rates(spec, catalog), model=model.name,
                   params=model.params, num_gpus=num_gpus, tokens=spec.workload.tokens, tokens_per_s=tokens_per_s,
                   useful_s=useful_s)


def reliability(spec: Spec, catalog: Catalog | None = None) -> ReliabilityResult:
    """The scenario's job (``DEFAULT_MODEL`` when its ``[workload]`` names none) at its GPUs and at every
    size from one node to the whole cluster, with the storage checks of the job at its GPUs."""
    catalog = priced(spec, catalog)
    built = design(spec, catalog)
    model = workload_model(spec.workload, default=DEFAULT_MODEL)
    job = job_reliability(spec, catalog, built, model, job_gpus(spec.workload, built))
    sizes = by_job_size(reliability_settings(spec), built, scenario_rates(spec, catalog), model=model.name,
                        params=model.params, tokens=spec.workload.tokens)
    return ReliabilityResult(spec=spec, job=job, sizes=sizes, warnings=tuple(reliability_checks(job)))
