"""A scenario's ``[workload]`` resolved on its design: the model, the job's GPUs, the options and the layout
degrees held fixed (docs/training.md). The training model searches the rest."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clusterplan.design import Design
from clusterplan.errors import ConfigError
from clusterplan.files import read_input_text
from clusterplan.jobs import Workload
from clusterplan.perf.hardware import Options
from clusterplan.perf.hf import from_hf_config
from clusterplan.perf.layout import Constraints, dualpipe_micro_batches_ok
from clusterplan.perf.model import Transformer, with_seq_len
from clusterplan.perf.presets import preset
from clusterplan.perf.software import with_software
from clusterplan.schema import FROZEN

TOKENS_PER_BATCH = 4 * 2**20   # the global batch when the scenario gives none: about 4M tokens
# The largest global batch the search tries: Llama 3 405B's final 16M tokens per step (Dubey et al. 2024, §3.4.1)
MAX_TOKENS_PER_BATCH = 16 * 2**20
# DeepSeek LLM's compute-optimal batch, B_opt = 0.2920 C^0.3271 tokens for C FLOPs (Bi et al. 2024, arXiv:2401.02954)
OPTIMAL_BATCH_COEFFICIENT, OPTIMAL_BATCH_EXPONENT = 0.2920, 0.3271
CHINCHILLA_TOKENS_PER_PARAM = 20   # the budget assumed without one (Hoffmann et al. 2022)


@dataclass(**FROZEN)
class Job:
    """The training job a ``[workload]`` asks for on a design."""

    model: Transformer            # at the workload's sequence length
    num_gpus: int
    options: Options
    fixed: Constraints            # the layout choices held fixed; the search chooses the rest
    global_batches: tuple[int, ...]   # the global batches the search may choose (one when the scenario fixes it)
    domain_gpus: int = 0          # GPUs of each NVLink domain the job uses; 0 = all (docs/nvl72.md)


def workload_model(workload: Workload, default: str = "") -> Transformer:
    """The ``[workload]``'s model (a preset, a Hugging Face config.json or a snapshot folder holding one, or
    else the preset ``default``) trained at ``workload.seq_len`` (0 keeps the model's own)."""
    return with_seq_len(_named_model(workload, default), workload.seq_len)


def _named_model(workload: Workload, default: str) -> Transformer:
    if workload.model_config:
        path, name = config_file(Path(workload.model_config))
        text = read_input_text(path, what=str(path), key="workload.model_config", source="")
        return from_hf_config(text, source=str(path), name=name)
    if workload.model or default:
        return preset(workload.model or default)
    raise ConfigError("no model: give --model, --model-config or [workload] model", key="workload.model")


def config_file(path: Path) -> tuple[Path, str]:
    """(the config.json, the model's name where the folder says it) of a file or a Hugging Face snapshot
    folder (``models--org--name/snapshots/<commit>/``); "" leaves the name to the config."""
    if not path.is_dir():
        return path, ""
    if not (path / "config.json").is_file():
        raise ConfigError(f"{path} is a folder without a config.json", key="workload.model_config")
    cached = next((part for part in reversed(path.resolve().parts) if part.startswith("models--")), "")
    return path / "config.json", "/".join(cached.split("--")[1:]) if cached else ""


def job_gpus(workload: Workload, design: Design) -> int:
    """The GPUs the job uses: ``workload.gpus`` in whole nodes, or the whole cluster."""
    gpus = workload.gpus or design.num_gpus
    if gpus > design.num_gpus:
        raise ConfigError(f"the cluster has {design.num_gpus} GPUs, got {gpus}", key="workload.gpus")
    if gpus % design.gpus_per_node:
        raise ConfigError(f"{gpus} GPUs are not whole nodes of {design.gpus_per_node}", key="workload.gpus")
    return gpus


def job_domain_gpus(gpus: int, design: Design) -> int:
    """The GPUs of each NVLink domain a job of ``gpus`` uses; 0 = the whole domain (always so on HGX).

    On a rack-scale domain (72 GPUs of 18 trays) a job uses whole domains where it can; else, when it is smaller,
    one domain; else the most whole trays of each domain that divide it (a 1,024-GPU job takes 64 of each 72:
    16 trays of 18, the other two spare, as NVIDIA's 2,496-GPU GB200 MLPerf runs took 39 x 64).
    """
    domain, per_server = design.domain_gpus, design.gpus_per_node
    if domain == per_server or gpus % domain == 0:
        return 0
    if gpus < domain:
        return gpus
    used = next(count for count in range(domain, 0, -per_server) if gpus % count == 0)
    if gpus // used > design.num_domains:
        raise ConfigError(f"{gpus:,} GPUs take {used} of each {domain}-GPU NVLink domain, {gpus // used} domains; "
                          f"the cluster has {design.num_domains}", key="workload.gpus")
    return used


def _check_tp(tp: int, used: int, domain: int) -> None:
    """A fixed tp must tile the GPUs the job uses of each NVLink domain (or span whole ones): a group straddling
    two domains would run over the scale-out fabric at its slowest member's link."""
    if tp and used % tp and tp % used:
        raise ConfigError(f"tp = {tp} does not tile the {used} GPUs the job uses of each {domain}-GPU NVLink "
                          f"domain (its groups would straddle domains); use a divisor of {used}", key="workload.tp")


def resolve(workload: Workload, design: Design) -> Job:
    """The job ``workload`` asks for on ``design``; fixed degrees that cannot hold are errors naming the key."""
    model = workload_model(workload)
    gpus = job_gpus(workload, design)
    domain_gpus = job_domain_gpus(gpus, design)
    for key in ("tp", "pp", "dp", "cp"):
        value = getattr(workload, key)
        if value and gpus % value:
            raise ConfigError(f"{value} does not divide the {gpus} GPUs", key=f"workload.{key}")
    if workload.tp and model.heads % workload.tp:
        raise ConfigError(f"the model's {model.heads} attention heads are not divisible by tp = {workload.tp}",
                          key="workload.tp")
    _check_expert_parallel(workload, model, gpus)
    _check_dualpipe(workload, gpus)
    if workload.cuda_graphs == "full" and model.moe_layers and workload.moe_routing == "dropless":
        raise ConfigError("a whole-iteration CUDA graph needs static shapes: a dropless router's token counts change "
                          "every step (set workload.moe_routing = \"tokendrop\", or capture router or "
                          "attention+router)",
                          key="workload.cuda_graphs")
    _check_tp(workload.tp, domain_gpus or design.domain_gpus, design.domain_gpus)
    fixed_product = (workload.tp or 1) * (workload.pp or 1) * (workload.dp or 1) * (workload.cp or 1)
    if all((workload.tp, workload.pp, workload.dp)) and fixed_product != gpus:
        raise ConfigError(f"tp x pp x dp x cp = {fixed_product}, not the {gpus} GPUs", key="workload.dp")
    batches = (workload.global_batch,) if workload.global_batch else global_batches(model, workload.tokens)
    batch = batches[0]
    options = Options(seq_len=model.seq_len, global_batch=batch, precision=workload.precision,
                      attention=workload.attention, sequence_parallel=workload.sequence_parallel,
                      tp_overlap=workload.tp_overlap, sharding=workload.sharding,
                      overlap_grad_reduce=workload.overlap_grad_reduce,
                      sparsity_speedup=workload.sparsity_speedup, moe_overlap=workload.moe_overlap,
                      grad_reduce=workload.grad_reduce, expert_imbalance=workload.expert_imbalance,
                      moe_dispatcher=workload.moe_dispatcher, moe_dropless=workload.moe_routing == "dropless",
                      cuda_graphs=workload.cuda_graphs, pipeline_schedule=workload.pipeline_schedule)
    options = with_software(options, workload.software)   # an older stack's switches (docs/training.md)
    # the scenario's 0 (and "", and -1 for zero) mean "search"
    fixed = Constraints(tp=workload.tp or None, pp=workload.pp or None, dp=workload.dp or None,
                        cp=workload.cp or None, mbs=workload.mbs or None,
                        virtual_stages=workload.virtual_stages or None, recompute=workload.recompute or None,
                        zero=workload.zero if workload.zero >= 0 else None, ep=workload.ep or None,
                        etp=workload.etp if workload.etp >= 0 else None)
    return Job(model=model, num_gpus=gpus, options=options, fixed=fixed, global_batches=batches,
               domain_gpus=domain_gpus)


def _check_dualpipe(workload: Workload, gpus: int) -> None:
    """DualPipe splits a step's micro-batches between its two directions and needs at least two per stage: with the
    batch, the micro-batch and the data-parallel size all fixed (dp given, or tp, pp and cp), their micro-batches
    must be even, and at least 2 x pp where pp is fixed (perf.layout ``dualpipe_micro_batches_ok``)."""
    others = workload.tp * workload.pp * workload.cp
    dp = workload.dp or (gpus // others if others else 0)
    if workload.pipeline_schedule != "dualpipe" or not (workload.global_batch and workload.mbs and dp):
        return
    micro_batches, rest = divmod(workload.global_batch, dp * workload.mbs)
    if not rest and not dualpipe_micro_batches_ok(micro_batches, workload.pp or 2):
        raise ConfigError(f"DualPipe needs an even number of micro-batches (half each direction), at least 2 x pp "
                          f"({2 * (workload.pp or 2)}); global batch {workload.global_batch} / (dp {dp} x "
                          f"micro-batch {workload.mbs}) = {micro_batches}", key="workload.global_batch")


def _check_expert_parallel(workload: Workload, model: Transformer, gpus: int) -> None:
    """A fixed ``workload.ep`` (or whole experts, ``workload.etp`` 1) needs a mixture-of-experts model whose
    experts and the data-parallel ranks (tp x dp with whole experts) it divides; a value that cannot hold is an
    error naming the key."""
    ep, whole = workload.ep, workload.etp == 1
    if whole and not model.moe_layers:
        raise ConfigError(f"etp = 1 needs a mixture-of-experts model; {model.name} is dense", key="workload.etp")
    if whole and workload.tp == 1:
        raise ConfigError("etp = 1 (whole experts) needs tp > 1; tp 1 is etp 0's layout", key="workload.etp")
    if not ep or ep == 1:
        return
    if not model.moe_layers:
        raise ConfigError(f"ep = {ep} needs a mixture-of-experts model; {model.name} is dense", key="workload.ep")
    if model.experts % ep:
        raise ConfigError(f"ep = {ep} does not divide the model's {model.experts} experts", key="workload.ep")
    folds = workload.etp != 0      # whole experts, fixed or searched (-1): the group may fold over tp x dp
    others = (1 if folds else workload.tp or 1) * (workload.pp or 1) * (workload.cp or 1)
    if gpus % (others * ep):
        ranks = "pp x cp" if folds else "tp x pp x cp"
        raise ConfigError(f"ep = {ep} does not divide the data-parallel ranks the {gpus} GPUs leave "
                          f"({ranks} = {others})", key="workload.ep")


def global_batches(model: Transformer, tokens: float) -> tuple[int, ...]:
    """The global batches (sequences) the search may choose: about 4M tokens, doubling while the batch stays
    within 16M tokens and the run's compute-optimal batch (docs/training.md).

    The compute-optimal batch is DeepSeek LLM's fit at C = model FLOPs per token x ``tokens`` (without a
    budget, Chinchilla's 20 tokens per parameter); the 4M-token default is always a candidate.
    """
    budget = tokens or CHINCHILLA_TOKENS_PER_PARAM * model.params
    flops = model.model_flops_per_token(model.seq_len) * budget
    ceiling = min(MAX_TOKENS_PER_BATCH, OPTIMAL_BATCH_COEFFICIENT * flops ** OPTIMAL_BATCH_EXPONENT)
    first = max(1, round(TOKENS_PER_BATCH / model.seq_len))
    batches = [first]
    while batches[-1] * 2 * model.seq_len <= ceiling * (1 + 1e-9):
        batches.append(batches[-1] * 2)
    return tuple(batches)
