"""A scenario's workload on its cluster: the layout search, the job's reliability at the best layout, and
the time and cost to train, raw and effective (docs/training.md, docs/reliability.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from clusterplan.catalog import Catalog, CloudOffer
from clusterplan.cost.cloud import NO_CHOICE, CloudChoice, Rented, cloud_choice, rented
from clusterplan.design import Design
from clusterplan.perf.evidence import Band, table, training_band
from clusterplan.perf.model import Transformer
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.search import Search, search
from clusterplan.perf.step import Prediction
from clusterplan.plan.reliability import job_reliability
from clusterplan.plan.spot import spot_goodputs
from clusterplan.plan.workload import job_gpus, resolve, workload_model
from clusterplan.reliability import Reliability, wall_clock_s
from clusterplan.reliability.whole_run import Recipe, WholeRun, ramp_ratio, whole_run
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec
from clusterplan.units import format_usd


@dataclass(**FROZEN)
class Training:
    """A workload on a cluster: the model, the best layouts, and time- and cost-to-train.

    Raw figures assume the job never stops; effective ones divide them by the goodput of
    ``reliability`` (failures, checkpoints and restarts: docs/reliability.md), i.e. they count the
    wall-clock time, and the GPU-hours billed, of a run that fails and restarts.
    """

    model: Transformer
    num_gpus: int
    options: Options
    search: Search
    tokens: float
    costs_usd: Mapping[str, float]   # "own" and each cloud offer id -> raw cost to train (empty without a budget)
    reliability: Reliability | None  # the job at the best layout's tokens/s; None without a layout or storage
    band: Band                       # the evidence behind the step time: its regime, n and band (docs/evidence.md)
    offer_goodputs: Mapping[str, float] = field(default_factory=dict)   # spot offer id -> goodput with reclaims
    rentals: Mapping[str, Rented] = field(default_factory=dict)   # offer id -> the effective run rented (whole terms)
    warnings: tuple[str, ...] = ()   # the job against the cluster's life and cost (training_warnings)
    whole_run: WholeRun | None = None   # the run's time by cause (docs/reliability.md#whole-run); None without tokens
    whole_run_band: Band | None = None  # what the causes leave unexplained on published whole runs (docs/evidence.md)
    cloud: CloudChoice = NO_CHOICE   # the headline offer, the spot line's and those short of capacity (cloud_choice)

    @property
    def best(self) -> Prediction | None:
        return self.search.best[0] if self.search.best else None

    @property
    def time_to_train_s(self) -> float | None:
        return raw_time_to_train_s(self.tokens, self.best)

    @property
    def goodput(self) -> float | None:
        return self.reliability.goodput if self.reliability is not None else None

    @property
    def effective_time_to_train_s(self) -> float | None:
        raw = self.time_to_train_s
        return wall_clock_s(raw, self.goodput) if raw is not None else None

    @property
    def effective_costs_usd(self) -> dict[str, float]:
        """``costs_usd`` of the wall-clock run: the owned cost / goodput, and each offer renting the effective
        run (the job fails alike; a spot offer's goodput also counts its reclaims; a reservation bills whole
        terms, cost/cloud.py ``rented``)."""
        return {key: self.rentals[key].total_usd if key in self.rentals
                else usd / self.offer_goodputs.get(key, self.goodput) for key, usd in self.costs_usd.items()}

    @property
    def ranked_costs_usd(self) -> dict[str, float]:
        """The costs the offers are ranked by: effective where the goodput is known, else raw."""
        return self.effective_costs_usd if self.goodput is not None else dict(self.costs_usd)

    def cloud_cost_ranges(self, *, effective: bool) -> tuple[dict[str, float], dict[str, float]]:
        """(low, high) of each offer's cost to train at the ends of the step time's evidence band: the raw run, or
        ``effective`` the wall-clock one, rented by the one rule (a reservation's whole terms do not shrink with a
        faster run)."""
        low: dict[str, float] = {}
        high: dict[str, float] = {}
        for key, rent in self.rentals.items():
            run_s = rent.run_s if effective else self.time_to_train_s
            for out, seconds in zip((low, high), self.band.time_range(run_s)):
                out[key] = rented(rent.offer, num_gpus=self.num_gpus, run_s=seconds,
                                  resale_fraction=rent.resale_fraction).total_usd
        return low, high

    @property
    def whole_run_time_to_train_s(self) -> float | None:
        """The wall clock of the whole run: steady state plus every modelled cause (``whole_run``)."""
        return self.whole_run.wall_clock_s if self.whole_run is not None else None

    @property
    def whole_run_cost_usd(self) -> float | None:
        """The owned cluster's cost of the whole run's billed GPU-hours (every reserved GPU, idle or not): the
        raw cost x billed / steady-state time."""
        if self.whole_run is None:
            return None
        return self.costs_usd["own"] * self.whole_run.billed_s / self.whole_run.steady_s


def raw_time_to_train_s(tokens: float, best: Prediction | None) -> float | None:
    """``tokens`` at the ``best`` layout's tokens/s; None without a token budget or a layout."""
    return tokens / best.tokens_per_s if best and tokens else None


def training(spec: Spec, catalog: Catalog, built: Design, own_usd_per_gpu_hour: float,
             offers: Sequence[CloudOffer] = (), *, top: int = 10) -> Training:
    """Predict ``spec.workload`` on ``built``; costs at the own cluster's rate and each offer's price.

    With a feasible layout and storage to checkpoint to, the job's reliability is computed at the best
    layout's tokens/s (its data-loading need), its run lasting the effective time to train where there is a
    token budget (goodput does not depend on the run's length: failure rates are constant), else
    ``reliability.days``. ``catalog`` gives the failure rates.
    """
    job = resolve(spec.workload, built)
    found = search(job.model, hardware(built, spec.workload.gemm_efficiency, job.domain_gpus), job.options,
                   job.num_gpus, job.fixed, top=top, global_batches=job.global_batches)
    best = found.best[0] if found.best else None
    raw_s = raw_time_to_train_s(spec.workload.tokens, best)
    reliability, offer_goodputs = None, {}
    if best and built.storage_units:   # without storage there is nothing to checkpoint to
        reliability = job_reliability(spec, catalog, built, job.model, job.num_gpus,
                                      tokens_per_s=best.tokens_per_s, useful_s=raw_s)
        offer_goodputs = spot_goodputs(spec, catalog, built, job.model, job.num_gpus, offers,
                                       tokens_per_s=best.tokens_per_s, useful_s=raw_s)
    resale = spec.cloud.resale_fraction
    costs_usd = _costs_usd(raw_s, job.num_gpus, own_usd_per_gpu_hour, offers, resale)
    goodput = reliability.goodput if reliability is not None else 1.0   # without it, the raw run
    rentals = {} if raw_s is None else {
        offer.id: rented(offer, num_gpus=job.num_gpus, run_s=raw_s / offer_goodputs.get(offer.id, goodput),
                         resale_fraction=resale) for offer in offers}
    run = (run_by_cause(recipe(spec), job.model, best, reliability, steady_s=raw_s, seq_len=job.options.seq_len)
           if raw_s else None)
    done = Training(model=job.model, num_gpus=job.num_gpus, options=job.options, search=found,
                    tokens=spec.workload.tokens, costs_usd=costs_usd, reliability=reliability,
                    offer_goodputs=offer_goodputs, rentals=rentals,
                    band=evidence(built, job.model, job.options, job.num_gpus),
                    whole_run=run, whole_run_band=whole_run_band() if run is not None else None)
    return replace(done, cloud=cloud_choice(done.ranked_costs_usd, [rent.offer for rent in rentals.values()],
                                            num_gpus=job.num_gpus, always_on=False, spot=bool(offer_goodputs)))


def recipe(spec: Spec) -> Recipe:
    """The scenario's whole-run keys ([reliability], docs/reliability.md#whole-run)."""
    chosen = spec.reliability
    return Recipe(ramp_tokens_fraction=chosen.ramp_tokens_fraction, ramp_batch_fraction=chosen.ramp_batch_fraction,
                  long_context_tokens_fraction=chosen.long_context_tokens_fraction,
                  long_context_seq_len=chosen.long_context_seq_len, eval_interval_steps=chosen.eval_interval_steps,
                  eval_steps=chosen.eval_steps, pause_fraction=chosen.pause_fraction,
                  held_fraction=chosen.held_fraction)


def run_by_cause(chosen: Recipe, model: Transformer, best: Prediction, reliability: Reliability | None, *,
                 steady_s: float, seq_len: int) -> WholeRun:
    """The whole run of ``best``'s layout: its step split into the part that scales with the batch and the part
    that does not (pipeline bubble, exposed gradient reduction, optimizer step) for the ramp-up, the model FLOPs
    per token at the long-context length over the main one (causal attention), and the goodput model's losses (none without
    storage: no checkpoints are modelled there)."""
    step = best.step
    fixed_s = step.pp_bubble + step.dp_comm + step.optimizer
    ramp = ramp_ratio(batch_scaled_s=step.total - fixed_s, fixed_s=fixed_s, batch_fraction=chosen.ramp_batch_fraction)
    long_seq = chosen.long_context_seq_len
    long_ratio = (model.causal_flops_per_token(long_seq) / model.causal_flops_per_token(seq_len)
                  if long_seq > seq_len else 1.0)
    waste = reliability.outcome.waste if reliability is not None else None
    return whole_run(chosen, steady_s=steady_s, ramp_ratio_=ramp, long_context_ratio=long_ratio,
                     failure_waste=waste.lost_work + waste.restart if waste else 0.0,
                     checkpoint_waste=waste.checkpoint if waste else 0.0)


def whole_run_band() -> Band:
    """The "whole run" regime: signed errors of the causes' wall clock against published whole runs (its low and
    high the extremes where n < 10: docs/evidence.md); a zero-width band before any is written."""
    row = table().get("whole_run")
    if row is None:
        return Band(kind="whole run", regime="whole run", n=0, median=0.0, low=0.0, high=0.0,
                    out_of_domain=("no published whole run in the band table",))
    return Band(kind="whole run", regime="whole run (published GPU-hours)", n=row["n"], median=row["median"],
                low=row["low"], high=row["high"])


def evidence(built: Design, model: Transformer, options: Options, num_gpus: int) -> Band:
    """The validated regime of a job on ``built`` and its band (out of domain: why, and the widest band)."""
    return training_band(gpu=built.parts.gpu.id, precision=options.precision, num_gpus=num_gpus,
                         params=model.params, attention=options.attention, technology=built.parts.fabric.technology,
                         seq_len=options.seq_len, experts=model.experts, domain_gpus=built.domain_gpus,
                         routing="dropless" if options.moe_dropless else "tokendrop", graphs=options.cuda_graphs,
                         schedule=options.pipeline_schedule)


def _costs_usd(seconds: float | None, num_gpus: int, own_usd_per_gpu_hour: float,
               offers: Sequence[CloudOffer], resale_fraction: float = 0.0) -> dict[str, float]:
    """The GPU-hours of ``seconds`` on ``num_gpus`` at the own cluster's rate ("own"), and each offer rented for
    that run (a reservation: its whole terms)."""
    if seconds is None:
        return {}
    gpu_hours = seconds / 3600 * num_gpus
    return {"own": gpu_hours * own_usd_per_gpu_hour,
            **{offer.id: rented(offer, num_gpus=num_gpus, run_s=seconds, resale_fraction=resale_fraction).total_usd
               for offer in offers}}


def training_warnings(job: Training, *, years: int, tco_usd: float) -> tuple[str, ...]:
    """Where the token budget does not fit the cluster: the time to train (effective where goodput is known)
    past the ``years`` the cluster is costed over, and the cost to train on it past its TCO."""
    seconds = job.effective_time_to_train_s if job.goodput is not None else job.time_to_train_s
    if seconds is None:
        return ()
    effective = " effective" if job.goodput is not None else ""
    life_s = years * 365.25 * 86400
    found = []
    if seconds > life_s:
        found.append(f"training {job.tokens / 1e9:,.0f}B tokens takes {seconds / 86400:,.0f} days{effective}, "
                     f"{seconds / life_s:,.1f}x the cluster's {years}-year life (finance.years): fewer tokens, "
                     f"more GPUs or a longer horizon")
    cost_usd = (job.effective_costs_usd if job.goodput is not None else job.costs_usd)["own"]
    if cost_usd > tco_usd:
        found.append(f"training {job.tokens / 1e9:,.0f}B tokens costs {format_usd(cost_usd)}{effective} on the own "
                     f"cluster, more than its {years}-year TCO of {format_usd(tco_usd)}")
    return tuple(found)


def checked_reliability(spec: Spec, catalog: Catalog, built: Design, job: Training) -> tuple[Reliability | None, bool]:
    """The job's reliability for the design checks, and whether its data loading is the predicted one.

    The training prediction's where it has one; where no layout fits, the job's at the per-GPU read
    profile (which the design checks already hold against the whole cluster); None without storage.
    """
    if job.reliability is not None:
        return job.reliability, True
    if not built.storage_units:
        return None, False
    model = workload_model(spec.workload)
    return job_reliability(spec, catalog, built, model, job_gpus(spec.workload, built)), False
