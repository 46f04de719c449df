"""``clusterplan accept``: the measuring half of an acceptance run (docs/accept.md).

Launched like ``bench nodes`` (torchrun, srun, mpirun; ranks from ``bench.launch``). Ranks are
grouped into nodes by host name or ``ranks_per_node`` (``bench.node_pairs``), and the run goes
through five phases, a barrier after each:

1. audit: the first rank of each node calls ``probe`` (the topology audit's collector, handed in by
   the caller: bench imports no audit code) and its result travels to rank 0 untouched;
2. device: every rank times one square GEMM and its copies (``bench.gemm``, ``bench.memcpy``), all GPUs
   at once; CPU ranks one after the other, since they share the cores;
3. intra-node: each node's ranks run all_reduce, all_gather, reduce_scatter and alltoall among
   themselves, all nodes at once (``bench.collective_run.measure`` on a node group);
4. node pairs: rounds of disjoint node pairs all_reduce over both nodes' ranks;
5. cluster: every rank runs the four collectives together.

A rank that dies or hangs makes the others fail within ``timeout_s``; each survivor then writes
"alive" into the job's store, and rank 0 names the ranks (and hosts) that did not within
``GRACE_S``. Rank 0 alone gets the ``AcceptRun`` back; the judging is ``plan.accept``'s.
"""

from __future__ import annotations

import datetime
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterplan.bench.collective_calls import has_reduce_scatter
from clusterplan.bench.collective_run import _first_line as first_line
from clusterplan.bench.collective_run import _join, _leave, measure, resolve_backend
from clusterplan.bench.collectives import BenchConfig, Group, rows_for
from clusterplan.bench.gemm import best_flops, measure_gemm, square
from clusterplan.bench.launch import Launch
from clusterplan.bench.memcpy import best_bandwidth, measure_memcpy
from clusterplan.bench.node_pairs import PAIRINGS, Node, group_nodes, pair_rounds
from clusterplan.bench.timing import Progress
from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

PHASES = ("audit", "device", "intra-node", "node pairs", "cluster")
ACCEPT_OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
GRACE_S = 10.0                     # how long rank 0 waits for the survivors of a failure to say so
# defaults (GPU, CPU): the sizes that matter for training on a GPU, small and quick on a CPU
SIZES = ((64 << 20, 256 << 20, 1 << 30), (256 << 10, 4 << 20))
GEMM_SIZE = (8192, 512)
GEMM_DTYPE = ("bf16", "fp32")
MEMCPY_BYTES = (256 << 20, 16 << 20)
ITERATIONS = (20, 5)
WARMUP = (5, 1)


@dataclass(**FROZEN)
class AcceptConfig:
    """What to run; ``None`` fields take the GPU or CPU default once the device is known."""

    ranks_per_node: int | None = None
    pairing: str = "auto"
    sizes: tuple[int, ...] | None = None
    iterations: int | None = None
    warmup: int | None = None
    backend: str = "auto"
    timeout_s: float = 300.0

    def __post_init__(self) -> None:
        checks = ((self.ranks_per_node is None or self.ranks_per_node >= 1, "--ranks-per-node", "must be >= 1"),
                  (self.pairing in PAIRINGS, "--pairing", f"must be one of {', '.join(PAIRINGS)}"),
                  (self.sizes is None or (self.sizes and min(self.sizes) >= 64), "--sizes", "need sizes >= 64 B"),
                  (self.iterations is None or self.iterations >= 1, "-n", "must be >= 1"),
                  (self.warmup is None or self.warmup >= 0, "-w", "must be >= 0"),
                  (self.backend in ("auto", "nccl", "gloo"), "--backend", "must be auto, nccl or gloo"),
                  (0 < self.timeout_s < 1e6, "--timeout", "must be a positive number of seconds"))
        for ok, key, message in checks:
            if not ok:
                raise ConfigError(message, key=key)


@dataclass(**FROZEN)
class Settings:
    """The resolved configuration the run used (recorded in the document)."""

    backend: str
    device_kind: str
    sizes: tuple[int, ...]
    gemm_size: int
    gemm_dtype: str
    memcpy_bytes: int
    iterations: int
    warmup: int
    pairing: str
    ranks_per_node: int | None


@dataclass(**FROZEN)
class CollectiveRun:
    """One collective on one group: seconds per call by size (out-of-place, the slowest rank's mean)."""

    phase: str                     # "intra-node", "node pairs" or "cluster"
    group: str                     # the node, the pair "a + b", or "cluster"
    op: str
    ranks: tuple[int, ...]
    num_nodes: int
    rows: tuple[tuple[int, float, int], ...]   # (size_bytes, time_s, wrong elements)


@dataclass(**FROZEN)
class AcceptRun:
    settings: Settings
    launcher: str
    world_size: int
    hosts: tuple[str, ...]         # by rank
    nodes: tuple[Node, ...]
    audits: Mapping[str, Any]      # node name -> what ``probe`` returned there
    devices: Mapping[int, Mapping[str, float | None]]   # rank -> {gemm_flops_per_s, h2d_Bps, d2h_Bps, h2h_Bps}
    collectives: tuple[CollectiveRun, ...]
    phases: tuple[tuple[str, float], ...]              # (phase, seconds), in order
    failure: Mapping[str, Any] | None                  # {during, detail, missing: [(rank, host)]}
    elapsed_s: float


def run_accept(config: AcceptConfig, launch: Launch, *, probe: Callable[[], Any],
               progress: Progress | None = None) -> AcceptRun | None:
    """Every phase on this rank; rank 0 gets the run (with ``failure`` set if a rank died or hung)."""
    import torch
    import torch.distributed as dist

    begin = time.perf_counter()
    backend, device_name = resolve_backend(config.backend, launch.local_rank)
    device = torch.device(device_name)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    settings = _settings(config, backend, device.type)
    host = socket.gethostname()
    state = {"during": f"the rendezvous of {launch.world_size} ranks (were all {launch.world_size} started?)",
             "phases": []}
    store = None
    try:
        _join(dist, backend, launch, device, datetime.timedelta(seconds=config.timeout_s))
        store = _store(dist)
        hosts: list = [None] * launch.world_size
        dist.all_gather_object(hosts, host)
        nodes = group_nodes(hosts, config.ranks_per_node)
        state["hosts"], state["nodes"] = tuple(hosts), nodes
        report = _phases(torch, dist, settings, device, launch.rank, nodes, probe, state, progress)
        gathered: list | None = [None] * launch.world_size if launch.rank == 0 else None
        dist.gather_object(report, gathered, dst=0)
    except (RuntimeError, OSError) as error:   # a peer died or hung: gloo's, the store's and torch's errors
        _leave(dist)
        failure = _survive(store, launch, host, state["during"], first_line(error), config.timeout_s)
        if launch.rank != 0:
            raise
        return _failed(settings, launch, state, failure, time.perf_counter() - begin)
    dist.destroy_process_group()
    if launch.rank != 0:
        return None
    return _assemble(settings, launch, tuple(hosts), nodes, gathered, state, time.perf_counter() - begin)


def _settings(config: AcceptConfig, backend: str, kind: str) -> Settings:
    pick = 0 if kind == "cuda" else 1
    return Settings(backend=backend, device_kind=kind, sizes=tuple(config.sizes or SIZES[pick]),
                    gemm_size=GEMM_SIZE[pick], gemm_dtype=GEMM_DTYPE[pick], memcpy_bytes=MEMCPY_BYTES[pick],
                    iterations=config.iterations or ITERATIONS[pick],
                    warmup=WARMUP[pick] if config.warmup is None else config.warmup, pairing=config.pairing,
                    ranks_per_node=config.ranks_per_node)


def _phases(torch: Any, dist: Any, settings: Settings, device: Any, rank: int, nodes: Sequence[Node],
            probe: Callable[[], Any], state: dict, progress: Progress | None) -> dict[str, Any]:
    mine = next(node for node in nodes if rank in node.ranks)
    pairing, rounds = pair_rounds(len(nodes), settings.pairing)
    report: dict[str, Any] = {"rank": rank, "audit": None, "device": None, "collectives": []}

    def phase(number: int, what: str) -> None:
        state["phases"].append((PHASES[number], time.perf_counter()))
        state["during"] = f"phase {number + 1} of {len(PHASES)}, {PHASES[number]}: {what}"
        if progress:
            progress(number, len(PHASES), f"{PHASES[number]}: {what}")

    phase(0, f"topology audit of {len(nodes)} nodes")
    if rank == mine.ranks[0]:
        report["audit"] = probe()
    _barrier(dist, device)
    phase(1, "GEMM and host-device copies on every GPU")
    if device.type == "cuda":       # every GPU at once, as training loads them
        report["device"] = _device_checks(settings, device)
        _barrier(dist, device)
    else:                           # CPU ranks share the cores: one rank at a time, so each is measured alone
        for turn in range(sum(len(node.ranks) for node in nodes)):
            if turn == rank:
                report["device"] = _device_checks(settings, device)
            _barrier(dist, device)
    emulate = not has_reduce_scatter(dist, device, torch.float32)
    phase(2, f"{', '.join(ACCEPT_OPS)} inside each node")
    groups = {node.name: dist.new_group(list(node.ranks)) for node in nodes}
    if len(mine.ranks) > 1:
        report["collectives"] += _collectives(dist, settings, device, rank, groups[mine.name], mine.ranks,
                                              "intra-node", mine.name, 1, ACCEPT_OPS, emulate)
    _barrier(dist, device)
    for number, pairs in enumerate(rounds):
        phase(3, f"{pairing} pairs, round {number + 1} of {len(rounds)}")
        pair_groups = {pair: dist.new_group(sorted(nodes[pair[0]].ranks + nodes[pair[1]].ranks)) for pair in pairs}
        for (a, b), group in pair_groups.items():
            if mine in (nodes[a], nodes[b]):
                ranks = tuple(sorted(nodes[a].ranks + nodes[b].ranks))
                report["collectives"] += _collectives(dist, settings, device, rank, group, ranks, "node pairs",
                                                      f"{nodes[a].name} + {nodes[b].name}", 2, ("all_reduce",),
                                                      emulate)
        _barrier(dist, device)
        for group in pair_groups.values():      # a round's groups go before the next round's come
            if group is not dist.GroupMember.NON_GROUP_MEMBER:
                dist.destroy_process_group(group)
    phase(4, f"{', '.join(ACCEPT_OPS)} over all {len(nodes)} nodes")
    world = tuple(range(sum(len(node.ranks) for node in nodes)))
    if len(world) > 1:
        report["collectives"] += _collectives(dist, settings, device, rank, None, world, "cluster", "cluster",
                                              len(nodes), ACCEPT_OPS, emulate)
    _barrier(dist, device)
    state["phases"].append(("end", time.perf_counter()))
    state["during"] = "the gathering of results on rank 0"
    return report


def _device_checks(settings: Settings, device: Any) -> dict[str, float | None]:
    where = f"cuda:{device.index}" if device.type == "cuda" else "cpu"
    gemm = measure_gemm(shapes=[square(settings.gemm_size)], dtypes=[settings.gemm_dtype],
                        iterations=settings.iterations, warmup=settings.warmup, device=where)
    copies = measure_memcpy(sizes=[settings.memcpy_bytes], iterations=settings.iterations, warmup=settings.warmup,
                            device=where)
    return {"gemm_flops_per_s": best_flops(gemm, settings.gemm_dtype),
            "h2d_Bps": best_bandwidth(copies, "h2d", "pinned"), "d2h_Bps": best_bandwidth(copies, "d2h", "pinned"),
            "h2h_Bps": best_bandwidth(copies, "h2h", "pageable")}


def _collectives(dist: Any, settings: Settings, device: Any, rank: int, process_group: Any, ranks: Sequence[int],
                 phase: str, name: str, num_nodes: int, ops: Sequence[str], emulate: bool) -> list[dict]:
    """Each op over ``ranks`` (this rank among them) at every size; the rows only from the group's first rank."""
    group = Group(rank=ranks.index(rank), world_size=len(ranks), backend=settings.backend, device=device,
                  process_group=process_group)
    results = []
    for op in ops:
        config = BenchConfig(op=op, min_bytes=min(settings.sizes), max_bytes=max(settings.sizes), step_factor=2,
                             iterations=settings.iterations, warmup=settings.warmup, average=3,
                             backend=settings.backend)
        wanted = set(settings.sizes)
        rows = [row for row in rows_for(config, len(ranks)) if row[0] in wanted or _nearest(row[0], wanted)]
        measured, _ = measure(config, group, rows, emulate_reduce_scatter=emulate if op == "reduce_scatter" else None)
        if group.rank == 0:
            results.append({"phase": phase, "group": name, "op": op, "ranks": tuple(ranks), "num_nodes": num_nodes,
                            "rows": tuple((r.size_bytes, r.out_of_place.time_s, r.out_of_place.wrong or 0)
                                          for r in measured)})
    return results


def _nearest(size: int, wanted: set[int]) -> bool:
    """Rounded to whole elements per rank, a size may differ a little from the one asked for."""
    return any(abs(size - target) <= target // 64 for target in wanted)


def _barrier(dist: Any, device: Any) -> None:
    if device.type == "cuda":
        dist.barrier(device_ids=[device.index])
    else:
        dist.barrier()


def _store(dist: Any) -> Any:
    """The job's key-value store (the rendezvous'), which outlives a broken process group."""
    try:
        return dist.distributed_c10d._get_default_store()
    except (AttributeError, RuntimeError, ValueError):
        return None


def _survive(store: Any, launch: Launch, host: str, during: str, detail: str, timeout_s: float) -> dict[str, Any]:
    """Say "alive" in the store; on rank 0, the ranks that did not say so within the grace period."""
    failure: dict[str, Any] = {"during": during, "detail": detail, "missing": []}
    if store is None:
        return failure
    try:
        store.set(f"accept/alive/{launch.rank}", host)
        if launch.rank != 0:
            return failure
        deadline = time.monotonic() + min(GRACE_S, timeout_s)
        for rank in range(launch.world_size):
            key = f"accept/alive/{rank}"
            left = max(deadline - time.monotonic(), 0.01)
            try:
                store.wait([key], datetime.timedelta(seconds=left))
            except (RuntimeError, OSError):
                failure["missing"].append(rank)
    except (RuntimeError, OSError):    # the store went with the rank that hosted it
        pass
    return failure


def _failed(settings: Settings, launch: Launch, state: dict, failure: dict, elapsed_s: float) -> AcceptRun:
    return AcceptRun(settings=settings, launcher=launch.launcher, world_size=launch.world_size,
                     hosts=state.get("hosts", ()), nodes=state.get("nodes", ()), audits={}, devices={},
                     collectives=(), phases=_durations(state["phases"]), failure=failure, elapsed_s=elapsed_s)


def _durations(marks: Sequence[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    """(phase, seconds) from the start marks; repeated marks of one phase (pair rounds) add up."""
    totals: dict[str, float] = {}
    for (name, start), (_, end) in zip(marks, marks[1:]):
        totals[name] = totals.get(name, 0.0) + end - start
    return tuple(totals.items())


def _assemble(settings: Settings, launch: Launch, hosts: tuple[str, ...], nodes: Sequence[Node],
              reports: Sequence[Mapping], state: dict, elapsed_s: float) -> AcceptRun:
    by_rank = {report["rank"]: report for report in reports}
    audits = {node.name: by_rank[node.ranks[0]]["audit"] for node in nodes}
    collectives = [CollectiveRun(phase=c["phase"], group=c["group"], op=c["op"], ranks=tuple(c["ranks"]),
                                 num_nodes=c["num_nodes"], rows=tuple(tuple(row) for row in c["rows"]))
                   for report in reports for c in report["collectives"]]
    return AcceptRun(settings=settings, launcher=launch.launcher, world_size=launch.world_size, hosts=hosts,
                     nodes=tuple(nodes), audits=audits,
                     devices={rank: report["device"] for rank, report in by_rank.items()},
                     collectives=tuple(collectives), phases=_durations(state["phases"]), failure=None,
                     elapsed_s=elapsed_s)

