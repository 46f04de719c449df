"""``clusterplan size``: the cheapest and the fastest way to a trained model, own, rent or both (docs/size.md).

It searches GPU type x GPU count (one NVLink domain, then powers of two of domains up to a cap: each GPU on its
default server, plan/size_platform.py) x fabric x procurement
mode. Each (GPU, count, fabric) is one scenario (the user's, with that cluster and the job): its owned cost and
its training come from the same functions ``plan`` and ``train`` use (``own``, ``training``), so a
candidate's figures are the ones those commands print for that scenario. The modes only price and date it
(plan/size_modes.py). Candidates are then filtered by the deadline and the budget, and the Pareto frontier
of (days to the trained model, cost) is drawn.
"""

from __future__ import annotations

import datetime
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from clusterplan.catalog import Catalog
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.names import SIZE_MODES
from clusterplan.plan.core import gpu_offers, own
from clusterplan.plan.scenario import priced, resolved
from clusterplan.plan.size_modes import Base, Candidate, candidates
from clusterplan.plan.size_platform import Platform, platform
from clusterplan.plan.training import training
from clusterplan.plan.workload import workload_model
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec

DEFAULT_GPUS = ("h100-sxm", "h200-sxm", "b200", "mi300x", "a100-80gb-sxm", "a100-40gb-sxm")
DEFAULT_FABRICS = ("ib-ndr400", "ib-ndr200", "roce-400g")


@dataclass(**FROZEN)
class Question:
    """What ``size`` is asked, resolved: the job, the search space, the start, the deadline and the budget."""

    model: str                        # the model's name
    model_config: str                 # the [workload]'s config.json when the question names no preset, else ""
    tokens: float
    gpus: tuple[str, ...]
    fabrics: tuple[str, ...]
    modes: tuple[str, ...]
    platforms: tuple[Platform, ...]   # one per GPU: its server, NVLink domain, NICs, cooling and counts
    start: datetime.date
    deadline_days: float | None
    budget_usd: float | None

    @property
    def counts(self) -> tuple[int, ...]:
        """Every GPU count searched, of any GPU."""
        return tuple(sorted({count for built in self.platforms for count in built.counts}))


@dataclass(**FROZEN)
class Sizing:
    """Every candidate, the frontier, the recommendations, and what was ruled out and why."""

    spec: Spec
    question: Question
    candidates: tuple[Candidate, ...]
    frontier: tuple[Candidate, ...]
    cheapest: Candidate | None        # the cheapest that meets the deadline (and the budget), never interruptible
    fastest: Candidate | None         # the fastest within the budget, never interruptible
    excluded: dict[str, int]          # reason -> candidates (memory, design, no offer, ..., deadline, budget)
    search_s: float                   # seconds in the layout search and the rest (for benchmarks/size_speed.py)
    rest_s: float
    spot: Candidate | None = None     # interruptible, on its own line: the cheapest meeting the deadline, else the fastest

    def meets(self, candidate: Candidate) -> bool:
        return not verdict(candidate, self.question)

    @property
    def nearest(self) -> tuple[Candidate, ...]:
        """The modelled candidates closest to the deadline: the three fastest."""
        modelled = [c for c in self.candidates if not c.reason]
        return tuple(sorted(modelled, key=lambda c: (c.done_days, c.cost_usd))[:3])


def question(spec: Spec, catalog: Catalog, today: datetime.date) -> Question:
    """The ``[size]`` section (and the workload it defaults to) made explicit and checked; errors name the key."""
    size = spec.size
    config = "" if size.model else spec.workload.model_config
    if not (size.model or spec.workload.model or config):
        raise ConfigError("no model: give --model or [size] model", key="size.model")
    try:   # an unknown model is an error naming it here, before any search
        model = workload_model(replace(spec.workload, model=size.model or spec.workload.model,
                                       model_config=config)).name
    except ConfigError as error:
        raise ConfigError(error.message, key="size.model" if size.model else error.key) from None
    tokens = size.tokens or spec.workload.tokens
    if tokens <= 0:
        raise ConfigError("must be > 0 tokens", key="size.tokens")
    gpus, fabrics = size.gpus or DEFAULT_GPUS, size.fabrics or DEFAULT_FABRICS
    platforms = tuple(platform(spec, catalog, gpu, size.max_gpus, key=f"size.gpus[{index}]")
                      for index, gpu in enumerate(gpus))
    for index, fabric in enumerate(fabrics):
        catalog.get("fabrics", fabric, key=f"size.fabrics[{index}]")
    start = _date(size.start, "size.start") if size.start else today
    deadline = size.deadline_days or None
    if size.deadline_date:
        deadline = (_date(size.deadline_date, "size.deadline_date") - start).days
        if deadline <= 0:
            raise ConfigError(f"{size.deadline_date} is not after the start, {start.isoformat()}",
                              key="size.deadline_date")
    return Question(model=model, model_config=config, tokens=tokens, gpus=tuple(gpus), fabrics=tuple(fabrics),
                    modes=tuple(size.modes or SIZE_MODES), platforms=platforms, start=start, deadline_days=deadline,
                    budget_usd=size.budget_usd or None)


def _date(text: str, key: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"must be a date YYYY-MM-DD, got {text!r}", key=key) from None


def size(spec: Spec, catalog: Catalog | None = None, *, today: datetime.date | None = None,
         progress: Callable[[int, int], None] | None = None) -> Sizing:
    """Search, price, date and rank every candidate of ``spec``'s ``[size]`` question; ``progress`` is told
    (done, total) after each (GPU, count, fabric)."""
    catalog = priced(spec, catalog)
    spec = resolved(spec, catalog)
    asked = question(spec, catalog, today or datetime.date.today())
    found: list[Candidate] = []
    search_s = rest_s = 0.0
    total = len(asked.fabrics) * sum(len(built.counts) for built in asked.platforms)
    for built in asked.platforms:
        gpu = built.gpu
        offers = tuple(gpu_offers(catalog, gpu))
        for fabric in asked.fabrics:
            for count in built.counts:
                started = time.perf_counter()
                base, reason, searched_s = _base(spec, catalog, asked, built, fabric, count, offers)
                if base is None:
                    found += [Candidate(gpu=gpu, num_gpus=count, fabric=fabric, mode=mode, reason=reason)
                              for mode in asked.modes]
                else:
                    found += candidates(base, asked.modes, catalog)
                search_s += searched_s
                rest_s += time.perf_counter() - started - searched_s
                if progress:
                    progress(len(found) // len(asked.modes), total)
    started = time.perf_counter()
    result = ranked(spec, asked, found)
    return replace(result, search_s=search_s, rest_s=rest_s + time.perf_counter() - started)


def scenario(spec: Spec, asked: Question, built: Platform, fabric: str, count: int) -> Spec:
    """The user's scenario with the candidate's cluster and the job: what ``plan``/``train`` would be given.

    The server, NICs and cooling are the GPU's platform (plan/size_platform.py) and the fabric as few tiers as
    it needs (an explicit tier count written for the user's cluster size would block the larger candidates)."""
    cluster = replace(spec.cluster, gpu=built.gpu, server=built.server, gpus_per_node=built.gpus_per_node,
                      num_nodes=count // built.gpus_per_node)
    network = replace(spec.network, fabric=fabric, tiers=0, nics_per_node=built.nics_per_node)
    workload = replace(spec.workload, model="" if asked.model_config else asked.model, model_config=asked.model_config,
                       tokens=asked.tokens, gpus=0)
    return replace(spec, cluster=cluster, network=network, facility=replace(spec.facility, cooling=built.cooling),
                   workload=workload)


def _base(spec: Spec, catalog: Catalog, asked: Question, built: Platform, fabric: str, count: int,
          offers: tuple) -> tuple[Base | None, str, float]:
    """The owned cluster and the training of one (GPU, count, fabric), or why there is none."""
    gpu = built.gpu
    candidate_spec = scenario(spec, asked, built, fabric, count)
    try:
        built, costs = own(candidate_spec, catalog)
    except (ConfigError, InfeasiblePlan):
        return None, "design", 0.0
    started = time.perf_counter()
    try:
        job = training(candidate_spec, catalog, built, costs.cost_per_gpu_hour_usd, offers, top=1)
    except InfeasiblePlan:   # goodput 0: interruptions take all of the job's time
        return None, "failures", time.perf_counter() - started
    searched_s = time.perf_counter() - started
    if job.best is None or job.reliability is None:
        return None, "memory", searched_s
    return Base(gpu=gpu, num_gpus=count, fabric=fabric, costs=costs, job=job, offers=offers), "", searched_s


def verdict(candidate: Candidate, asked: Question) -> str:
    """Why ``candidate`` is out: its structural reason, else the deadline (time to capacity counted), else the
    budget (the money committed); "" = it qualifies."""
    if candidate.reason:
        return candidate.reason
    if asked.deadline_days is not None and candidate.done_days > asked.deadline_days:
        return "deadline"
    if asked.budget_usd is not None and candidate.cost_usd > asked.budget_usd:
        return "budget"
    return ""


def frontier(modelled: list[Candidate]) -> tuple[Candidate, ...]:
    """The Pareto frontier of (days to the trained model, cost): none is both sooner and cheaper."""
    out: list[Candidate] = []
    for candidate in sorted(modelled, key=lambda c: (c.done_days, c.cost_usd)):
        if not out or candidate.cost_usd < out[-1].cost_usd:
            out.append(candidate)
    return tuple(out)


def ranked(spec: Spec, asked: Question, found: list[Candidate]) -> Sizing:
    """Frontier, recommendations and the count of candidates ruled out by each reason. Interruptible (spot)
    candidates of a multi-node job are never on the frontier nor a recommendation: the cheapest meeting the
    deadline is reported on its own line."""
    modelled = [c for c in found if not c.reason]
    qualifying = [c for c in modelled if not verdict(c, asked)]
    affordable = [c for c in modelled if asked.budget_usd is None or c.cost_usd <= asked.budget_usd]
    spot = (min((c for c in qualifying if c.interruptible), key=lambda c: (c.cost_usd, c.done_days), default=None)
            or min((c for c in modelled if c.interruptible), key=lambda c: (c.done_days, c.cost_usd), default=None))
    modelled, qualifying, affordable = ([c for c in group if not c.interruptible]
                                        for group in (modelled, qualifying, affordable))
    if asked.budget_usd is not None and modelled and not affordable:
        cheapest = min(c.cost_usd for c in modelled)
        raise ConfigError(f"${asked.budget_usd:,.0f} is below every candidate (the cheapest costs "
                          f"${cheapest:,.0f})", key="size.budget_usd")
    excluded = Counter(verdict(c, asked) for c in found)
    excluded.pop("", None)
    return Sizing(spec=spec, question=asked, candidates=tuple(found), frontier=frontier(modelled),
                  cheapest=min(qualifying, key=lambda c: (c.cost_usd, c.done_days), default=None),
                  fastest=min(affordable, key=lambda c: (c.done_days, c.cost_usd), default=None),
                  excluded=dict(sorted(excluded.items())), search_s=0.0, rest_s=0.0, spot=spot)
