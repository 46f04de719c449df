"""A workload on a cluster: the model, the layout search, and time- and cost-to-train (docs/training.md).

The step model itself is in stage.py, memory.py, compute.py, communication.py and step.py; the layouts
in layout.py and the search in search.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from clusterplan.errors import ConfigError
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.layout import Constraints
from clusterplan.perf.model import Transformer, from_hf_config, preset, with_seq_len
from clusterplan.perf.search import Search, search
from clusterplan.perf.step import Prediction


def workload_model(workload, default: str = "") -> Transformer:
    """The ``[workload]``'s model: a preset, a Hugging Face config.json, or else the preset ``default``."""
    if workload.model_config:
        try:
            text = Path(workload.model_config).read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"cannot read {workload.model_config}: {error.strerror}",
                              key="workload.model_config") from None
        return from_hf_config(text, source=str(workload.model_config))
    if workload.model or default:
        return preset(workload.model or default)
    raise ConfigError("no model: give --model, --model-config or [workload] model", key="workload.model")


def job_gpus(workload, built) -> int:
    """The GPUs the job uses: ``workload.gpus`` in whole nodes, or the whole cluster."""
    gpus = workload.gpus or built.num_gpus
    if gpus > built.num_gpus:
        raise ConfigError(f"the cluster has {built.num_gpus} GPUs, got {gpus}", key="workload.gpus")
    if gpus % built.gpus_per_node:
        raise ConfigError(f"{gpus} GPUs are not whole nodes of {built.gpus_per_node}", key="workload.gpus")
    return gpus


def from_workload(workload, built):
    """(model, options, the layout choices it fixes, GPU count) for a scenario's ``[workload]`` on its design.

    The workload's 0 (and "", and -1 for zero) mean "search"; here they become None.
    """
    model = with_seq_len(workload_model(workload), workload.seq_len)
    gpus = job_gpus(workload, built)
    for key in ("tp", "pp", "dp", "cp"):
        value = getattr(workload, key)
        if value and gpus % value:
            raise ConfigError(f"{value} does not divide the {gpus} GPUs", key=f"workload.{key}")
    if workload.tp and model.heads % workload.tp:
        raise ConfigError(f"the model's {model.heads} attention heads are not divisible by tp = {workload.tp}",
                          key="workload.tp")
    fixed_product = (workload.tp or 1) * (workload.pp or 1) * (workload.dp or 1) * (workload.cp or 1)
    if all((workload.tp, workload.pp, workload.dp)) and fixed_product != gpus:
        raise ConfigError(f"tp x pp x dp x cp = {fixed_product}, not the {gpus} GPUs", key="workload.dp")
    batch = workload.global_batch or max(1, round(4 * 2**20 / model.seq_len))
    opts = Options(seq_len=model.seq_len, global_batch=batch, precision=workload.precision,
                   attention=workload.attention, sequence_parallel=workload.sequence_parallel,
                   tp_overlap=workload.tp_overlap,
                   sharding=workload.sharding, sparsity_speedup=workload.sparsity_speedup)
    fixed = Constraints(tp=workload.tp or None, pp=workload.pp or None, dp=workload.dp or None,
                        cp=workload.cp or None, mbs=workload.mbs or None,
                        virtual_stages=workload.virtual_stages or None, recompute=workload.recompute or None,
                        zero=workload.zero if workload.zero >= 0 else None)
    return model, opts, fixed, gpus


@dataclass(frozen=True, slots=True)
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
    costs_usd: dict          # "own" and each cloud offer id -> raw cost to train (empty without a token budget)
    reliability: object = None   # reliability.Reliability of the job at the best layout's tokens/s; None without one

    @property
    def best(self) -> Prediction | None:
        return self.search.best[0] if self.search.best else None

    @property
    def time_to_train_s(self) -> float | None:
        best = self.best
        return self.tokens / best.tokens_per_s if best and self.tokens else None

    @property
    def goodput(self) -> float | None:
        return self.reliability.goodput if self.reliability is not None else None

    @property
    def effective_time_to_train_s(self) -> float | None:
        raw = self.time_to_train_s
        return raw / self.goodput if raw is not None else None

    @property
    def effective_costs_usd(self) -> dict:
        """``costs_usd`` of the wall-clock GPU-hours: each raw cost / goodput (owned or rented, the job fails alike)."""
        return {key: usd / self.goodput for key, usd in self.costs_usd.items()}


def training(spec, built, own_usd_per_gpu_hour: float, offers=(), *, top: int = 10) -> Training:
    """Predict ``spec.workload`` on ``built``; costs at the own cluster's rate and each offer's price.

    With a feasible layout, the job's reliability is computed at the best layout's tokens/s (its data-loading
    need). Its run length, for the expected interruptions, is the effective time-to-train when there is a
    token budget (goodput does not depend on the run's length: failure rates are constant), else
    ``reliability.days``.
    """
    model, opts, fixed, gpus = from_workload(spec.workload, built)
    found = search(model, hardware(built, spec.workload.gemm_efficiency), opts, gpus, fixed, top=top)
    reliability = None
    if found.best and built.storage_units:   # without storage there is nothing to checkpoint to
        from clusterplan.reliability import goodput

        reliability = goodput(spec, built, model, gpus, tokens_per_s=found.best[0].tokens_per_s)
    job = Training(model=model, num_gpus=gpus, options=opts, search=found, tokens=spec.workload.tokens,
                   costs_usd={}, reliability=reliability)
    if reliability is not None and job.tokens:
        from clusterplan.reliability.failures import DAY_S

        job = replace(job, reliability=replace(reliability, days=job.effective_time_to_train_s / DAY_S))
    seconds = job.time_to_train_s
    if seconds is not None:
        gpu_hours = seconds / 3600 * gpus
        job.costs_usd["own"] = gpu_hours * own_usd_per_gpu_hour
        for offer in offers:
            job.costs_usd[offer.id] = gpu_hours * offer.price_usd
    return job
