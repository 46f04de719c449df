"""Parallel layouts: one validated ``Layout``, the ``Layouts`` grid a search prices at once, and the rules.

A layout puts tp x pp x dp x cp GPUs to work (tensor, pipeline, data and context
parallelism), with ep, the expert-parallel size of a mixture-of-experts model (its routed
experts sharded over ep of the dp data-parallel ranks: ep divides dp and the experts;
1 for a dense model) and etp, the experts' own tensor-parallel size (0: tp, Megatron's default; 1:
whole experts, the expert-parallel group folded over the tp x dp ranks, so ep x etp divides tp x dp), a
micro-batch size, interleaved pipeline stages, a recomputation
choice and a ZeRO stage. ``Layout`` checks its own values once; the rules that need
the model, the batch or the GPU count are one ordered table (``RULES``) that
``layouts`` applies to a whole grid, counting what each removes, and
``violations`` applies to one layout.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from clusterplan.errors import ConfigError
from clusterplan.names import RECOMPUTE
from clusterplan.perf.hardware import Options
from clusterplan.perf.model import Transformer
from clusterplan.perf.numeric import maximum, minimum
from clusterplan.schema import FROZEN

DEGREES = ("tp", "pp", "dp", "cp", "mbs", "virtual_stages", "ep")   # whole numbers >= 1
ZERO_STAGES = (0, 1, 2, 3)


def _domain_problems(values) -> list[str]:
    """What is wrong with each of ``values``' layout choices (None: not given), one phrase per offending value."""
    problems = []
    for name in DEGREES:
        value = getattr(values, name)
        if value is not None and not (type(value) is int and value >= 1) and not _whole(value, 1):
            problems.append(f"{name}({value!r}) must be a whole number >= 1")
    recompute, zero = values.recompute, values.zero
    if recompute is not None and recompute not in RECOMPUTE:
        problems.append(f"recompute({recompute!r}) must be one of {', '.join(RECOMPUTE)}")
    if zero is not None and not (_whole(zero, 0) and zero in ZERO_STAGES):
        problems.append(f"zero({zero!r}) must be 0, 1, 2 or 3")
    etp = values.etp
    if etp is not None and not _whole(etp, 0):
        problems.append(f"etp({etp!r}) must be a whole number >= 0 (0 = tp)")
    return problems


def _whole(value, least: int) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= least


@dataclass(**FROZEN)
class Layout:
    """How one training job spreads over its tp x pp x dp x cp GPUs, and what each GPU keeps."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    mbs: int = 1                  # micro-batch size, sequences
    virtual_stages: int = 1       # interleaved pipeline chunks per GPU (1 = plain 1F1B)
    recompute: str = "none"       # one of clusterplan.names.RECOMPUTE
    zero: int = 0                 # ZeRO stage (3 = FSDP full sharding)
    ep: int = 1                   # expert-parallel size: ranks the routed experts are sharded over
    etp: int = 0                  # expert tensor-parallel size: 0 = tp (Megatron's default), 1 = whole experts

    def __post_init__(self) -> None:
        problems = _domain_problems(self)
        if not problems:
            problems = [rule.describe(self) for rule in RULES if rule.intrinsic and rule.broken(self, None)]
        if problems:
            raise ConfigError("; ".join(problems), key="layout")

    @property
    def num_gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp


@dataclass(**FROZEN, eq=False)
class Layouts:
    """Many layouts, one numpy array per field of ``Layout`` (equal lengths): the grid a search prices at once."""

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    cp: np.ndarray
    mbs: np.ndarray
    virtual_stages: np.ndarray
    recompute: np.ndarray         # names, as Layout.recompute
    zero: np.ndarray
    ep: np.ndarray
    etp: np.ndarray

    def __len__(self) -> int:
        return len(self.tp)

    @property
    def num_gpus(self) -> np.ndarray:
        return self.tp * self.pp * self.dp * self.cp

    def row(self, index: int) -> Layout:
        """Layout ``index``, in plain Python numbers."""
        return Layout(tp=int(self.tp[index]), pp=int(self.pp[index]), dp=int(self.dp[index]),
                      cp=int(self.cp[index]), mbs=int(self.mbs[index]),
                      virtual_stages=int(self.virtual_stages[index]), recompute=str(self.recompute[index]),
                      zero=int(self.zero[index]), ep=int(self.ep[index]), etp=int(self.etp[index]))

    def select(self, keep) -> Layouts:
        """The layouts where ``keep`` (a boolean mask or indices) says."""
        return Layouts(**{f.name: getattr(self, f.name)[keep] for f in fields(self)})


@dataclass(**FROZEN)
class Constraints:
    """The layout choices a search holds fixed; None leaves a choice to the search."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    cp: int | None = None
    mbs: int | None = None
    virtual_stages: int | None = None
    recompute: str | None = None
    zero: int | None = None
    ep: int | None = None
    etp: int | None = None

    def __post_init__(self) -> None:
        problems = _domain_problems(self)
        if problems:
            raise ConfigError("; ".join(problems), key="layout")


@dataclass(**FROZEN)
class Job:
    """What the rules need besides the layout."""

    model: Transformer
    options: Options
    num_gpus: int


@dataclass(**FROZEN)
class Rule:
    """A reason to reject a layout; ``broken`` takes a Layout or Layouts (bool or bool array) and the job."""

    reason: str
    names: tuple[str, ...]                 # the layout's values the rule reads
    broken: Callable
    intrinsic: bool = False                # needs nothing but the layout: Layout checks it itself

    def describe(self, layout) -> str:
        return f"{self.reason}: " + ", ".join(f"{name}({getattr(layout, name)})" for name in self.names)


def expert_tp(layout):
    """The routed experts' tensor-parallel size: etp, or tp where etp is 0."""
    return np.where(layout.etp == 0, layout.tp, layout.etp) if isinstance(layout.tp, np.ndarray) else (
        layout.etp or layout.tp)


def _micro_batches(layout, job: Job):
    return job.options.global_batch // maximum(layout.dp * layout.mbs, 1)


def _dualpipe(job: Job) -> bool:
    return job.options.pipeline_schedule == "dualpipe"


def dualpipe_micro_batches_ok(micro_batches, pp):
    """DualPipe splits a step's micro-batches between its two directions and needs at least two per stage to reach
    its steady phase (the reference code asserts num_chunks >= 2 x num_ranks): an even count, at least 2 x pp."""
    return (micro_batches % 2 == 0) & (micro_batches >= 2 * pp)


# In the order the search applies them: each rejected layout is counted under the first rule it breaks.
RULES = (
    Rule(reason="tp x pp x cp x dp does not equal the GPU count", names=("tp", "pp", "cp", "dp"),
         broken=lambda lay, job: lay.tp * lay.pp * lay.cp * lay.dp != job.num_gpus),
    Rule(reason="attention heads not divisible by tp", names=("tp",),
         broken=lambda lay, job: job.model.heads % lay.tp != 0),
    Rule(reason="kv heads not divisible by tp", names=("tp",),
         broken=lambda lay, job: job.model.query_groups % minimum(lay.tp, job.model.query_groups) != 0),
    # a stage's chunks may hold one layer fewer than the busiest stage's (Llama 3's 126 layers on 16 x 8 chunks)
    Rule(reason="more pipeline chunks (pp x virtual stages) than layers", names=("pp", "virtual_stages"),
         broken=lambda lay, job: job.model.layers + lay.pp < lay.pp * lay.virtual_stages),
    Rule(reason="virtual stages need pipeline parallelism", names=("virtual_stages", "pp"), intrinsic=True,
         broken=lambda lay, job: (lay.virtual_stages > 1) & (lay.pp == 1)),
    Rule(reason="sequence not divisible by 2 x cp", names=("cp",),
         broken=lambda lay, job: ((job.options.seq_len % (2 * lay.cp)) != 0) & (lay.cp > 1)),
    Rule(reason="global batch not divisible by dp x micro-batch", names=("dp", "mbs"),
         broken=lambda lay, job: (job.options.global_batch % maximum(lay.dp * lay.mbs, 1)) != 0),
    Rule(reason="interleaving needs micro-batches divisible by pp", names=("virtual_stages", "pp", "dp", "mbs"),
         broken=lambda lay, job: (lay.virtual_stages > 1) & (_micro_batches(lay, job) % lay.pp != 0)),
    # DualPipe (DeepSeek-V3): each rank holds two chunks, one per direction, and each direction takes half the
    # micro-batches
    Rule(reason="DualPipe needs an even pp", names=("pp",),
         broken=lambda lay, job: _dualpipe(job) & (lay.pp % 2 != 0)),
    Rule(reason="DualPipe runs no virtual stages", names=("virtual_stages",),
         broken=lambda lay, job: _dualpipe(job) & (lay.virtual_stages > 1)),
    Rule(reason="DualPipe needs an even number of micro-batches, at least 2 x pp", names=("pp", "dp", "mbs"),
         broken=lambda lay, job: _dualpipe(job) & np.logical_not(
             dualpipe_micro_batches_ok(_micro_batches(lay, job), lay.pp))),
    Rule(reason="ZeRO-3 with pipeline parallelism", names=("zero", "pp"), intrinsic=True,
         broken=lambda lay, job: (lay.zero == 3) & (lay.pp > 1)),
    Rule(reason="ZeRO needs data or context parallelism", names=("zero", "dp", "cp"), intrinsic=True,
         broken=lambda lay, job: (lay.zero > 0) & (lay.dp * lay.cp == 1)),
    Rule(reason="expert parallelism needs a mixture-of-experts model", names=("ep",),
         broken=lambda lay, job: (lay.ep > 1) & (job.model.moe_layers == 0)),
    Rule(reason="experts not divisible by ep", names=("ep",),
         broken=lambda lay, job: (job.model.experts % lay.ep) != 0),
    Rule(reason="expert tensor parallelism needs a mixture-of-experts model", names=("etp",),
         broken=lambda lay, job: (lay.etp > 0) & (job.model.moe_layers == 0)),
    Rule(reason="etp is 0 (tp) or 1, and 1 only with tp > 1", names=("etp", "tp"), intrinsic=True,
         broken=lambda lay, job: (lay.etp > 1) | ((lay.etp == 1) & (lay.tp == 1))),
    # Megatron-Core takes the expert-parallel group from the data-parallel ranks, and with whole experts
    # (etp 1) from the tensor-parallel ones too (parallel folding: ep x etp x expert dp = tp x dp)
    Rule(reason="dp (tp x dp with whole experts) not divisible by ep", names=("dp", "ep", "etp"), intrinsic=True,
         broken=lambda lay, job: ((lay.tp * lay.dp) % (lay.ep * expert_tp(lay))) != 0),
    Rule(reason="ZeRO-3 with expert parallelism", names=("zero", "ep"), intrinsic=True,
         broken=lambda lay, job: (lay.zero == 3) & (lay.ep > 1)),
)


def violations(layout: Layout, model: Transformer, options: Options, num_gpus: int) -> tuple[str, ...]:
    """Every rule ``layout`` breaks for ``model`` on ``num_gpus`` GPUs, naming its values; () when it may run."""
    job = Job(model=model, options=options, num_gpus=num_gpus)
    return tuple(rule.describe(layout) for rule in RULES if rule.broken(layout, job))


def layouts(model: Transformer, num_gpus: int, gpus_per_node: int, options: Options,
            constraints: Constraints = Constraints()) -> tuple[Layouts, dict[str, int]]:
    """Every layout of ``num_gpus`` GPUs that ``constraints`` allows, and the count each rule rejected."""
    grid = _grid(model, num_gpus, gpus_per_node, constraints)
    job = Job(model=model, options=options, num_gpus=num_gpus)
    keep = np.ones(len(grid), bool)
    rejected: dict[str, int] = {}
    for rule in RULES:
        bad = rule.broken(grid, job) & keep
        count = int(np.count_nonzero(bad))
        if count:
            rejected[rule.reason] = rejected.get(rule.reason, 0) + count
        keep &= ~bad
    return grid.select(keep), rejected


def _grid(model: Transformer, num_gpus: int, gpus_per_node: int, constraints: Constraints) -> Layouts:
    """Every combination of the free choices; dp is what the GPUs leave (0 where it differs from a fixed dp)."""
    def choices(name, free):
        value = getattr(constraints, name)
        return [value] if value is not None else free

    powers = [2 ** i for i in range(15)]
    divisors = [d for d in range(1, num_gpus + 1) if num_gpus % d == 0]
    recompute = [RECOMPUTE.index(name) for name in choices("recompute", list(RECOMPUTE))]
    # tp inside one NVLink domain, its groups tiling it (a rack of 72 takes 1-8, 64 of it 1-64)
    axes = (choices("tp", [t for t in powers if t <= min(gpus_per_node, model.heads) and gpus_per_node % t == 0]),
            choices("pp", [p for p in divisors if p <= model.layers]),
            choices("cp", [1, 2, 4]),
            choices("mbs", [1, 2, 4, 8, 16]),
            choices("virtual_stages", [1, 2, 3, 4, 6, 8]),
            recompute,
            choices("zero", [0, 1, 3]),
            # expert parallelism for a mixture-of-experts model only: a dense model's grid is what it was
            choices("ep", [e for e in powers if e <= num_gpus and model.experts % e == 0]
                    if model.moe_layers else [1]),
            choices("etp", [0, 1] if model.moe_layers else [0]))
    # itertools.product's order, built by numpy (a list of tuples made a fifth of a search's time)
    mesh = np.meshgrid(*(np.asarray(axis, dtype=np.int64) for axis in axes), indexing="ij")
    rows = np.stack([values.ravel() for values in mesh], axis=1).reshape(-1, 9)
    tp, pp, cp, mbs, virtual_stages, recompute_index, zero, ep, etp = rows.T
    dp = num_gpus // np.maximum(tp * pp * cp, 1)
    if constraints.dp is not None:
        dp = np.where(dp == constraints.dp, dp, 0)
    return Layouts(tp=tp, pp=pp, dp=dp, cp=cp, mbs=mbs, virtual_stages=virtual_stages,
                   recompute=np.asarray(RECOMPUTE)[recompute_index], zero=zero, ep=ep, etp=etp)
