"""``clusterplan bench nodes``: every node's GEMM, memcpy and intra-node all_reduce, then node pairs.

Launched like any torch.distributed job (torchrun, srun, mpirun; ranks from
``bench.launch``). Ranks are grouped into nodes by host name, or, with
``ranks_per_node``, in runs of consecutive ranks (several "nodes" on one host,
for testing). The job runs in phases separated by barriers:

1. node checks: the lowest rank of each node runs a short GEMM and memcpy;
2. intra-node: each node's ranks all_reduce among themselves (all nodes at once);
3. links: rounds of disjoint node pairs (``bench.node_pairs``); in a round every
   pair all_reduces over the ranks of its two nodes at the same time
   (``torch.distributed.new_group``).

Times are the slowest rank's mean over the timed iterations; busbw = S / t x
2(n - 1) / n as nccl-tests defines it. Results are gathered to rank 0, which
alone gets a ``NodesResult`` back (with the ``bench.health`` analysis; its
document is ``bench.nodes_document``).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from clusterplan.bench import health
from clusterplan.bench.fp8 import device_gemm_problem
from clusterplan.bench.gemm import best_flops, measure_gemm, square
from clusterplan.bench.launch import Launch
from clusterplan.bench.memcpy import best_bandwidth, measure_memcpy
from clusterplan.bench.node_pairs import PAIRINGS, Node, group_nodes, pair_rounds
from clusterplan.bench.timing import Progress
from clusterplan.errors import ConfigError
from clusterplan.perf.collectives import bus_factor
from clusterplan.schema import FROZEN

# defaults (GPU, CPU): short checks, a few seconds per phase
GEMM_SIZE = (8192, 512)
GEMM_DTYPE = ("bf16", "fp32")
ALL_REDUCE_BYTES = (512 << 20, 4 << 20)
MEMCPY_BYTES = (256 << 20, 16 << 20)
ITERATIONS = (20, 5)
WARMUP = (5, 1)


@dataclass(**FROZEN)
class NodesConfig:
    """What to run; ``None`` fields take the GPU or CPU default when the job starts."""

    ranks_per_node: int | None = None
    pairing: str = "auto"
    gemm_size: int | None = None
    gemm_dtype: str | None = None
    memcpy_bytes: int | None = None
    all_reduce_bytes: int | None = None
    iterations: int | None = None
    warmup: int | None = None
    backend: str | None = None     # default: nccl with CUDA, else gloo
    timeout_s: float = 600.0

    def __post_init__(self) -> None:
        problems = []
        if self.ranks_per_node is not None and self.ranks_per_node < 1:
            problems.append(f"--ranks-per-node must be >= 1, got {self.ranks_per_node}")
        if self.pairing not in PAIRINGS:
            problems.append(f"--pairing must be one of {', '.join(PAIRINGS)}, got {self.pairing!r}")
        for name in ("gemm_size", "memcpy_bytes", "all_reduce_bytes", "iterations"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.warmup is not None and self.warmup < 0:
            problems.append(f"warmup must be >= 0, got {self.warmup}")
        if self.all_reduce_bytes is not None and self.all_reduce_bytes % 4:
            problems.append(f"all_reduce_bytes must be a multiple of 4 (float32), got {self.all_reduce_bytes}")
        if self.timeout_s <= 0:
            problems.append(f"--timeout must be > 0, got {self.timeout_s}")
        if problems:
            raise ConfigError("; ".join(problems), key="bench nodes")

    def resolved(self, cuda: bool) -> NodesConfig:
        pick = 0 if cuda else 1
        defaults = {"gemm_size": GEMM_SIZE, "gemm_dtype": GEMM_DTYPE, "memcpy_bytes": MEMCPY_BYTES,
                    "all_reduce_bytes": ALL_REDUCE_BYTES, "iterations": ITERATIONS, "warmup": WARMUP,
                    "backend": ("nccl", "gloo")}
        return replace(self, **{name: value[pick] for name, value in defaults.items()
                                if getattr(self, name) is None})


@dataclass(**FROZEN)
class NodeMeasurement:
    node: Node
    gemm_flops_per_s: float | None
    h2d_Bps: float | None
    d2h_Bps: float | None
    h2h_Bps: float | None
    intra_time_s: float | None
    intra_busbw_Bps: float | None


@dataclass(**FROZEN)
class LinkMeasurement:
    nodes: tuple[str, str]
    ranks: tuple[int, ...]
    round: int
    time_s: float
    busbw_Bps: float


@dataclass(**FROZEN)
class NodesResult:
    config: NodesConfig            # resolved
    launcher: str
    world_size: int
    device_kind: str               # "cuda" or "cpu"
    pairing: str                   # "all" or "ring"
    num_rounds: int
    nodes: tuple[NodeMeasurement, ...]
    links: tuple[LinkMeasurement, ...]
    health: health.Health
    elapsed_s: float


def run_nodes(config: NodesConfig, launch: Launch, *, progress: Progress | None = None) -> NodesResult | None:
    """Run every phase in this process's rank; rank 0 gets the result, the others ``None``.

    ``progress`` is called on every rank with (phase, phases, what runs now).
    """
    import torch
    import torch.distributed as dist

    begin = time.perf_counter()
    if config.ranks_per_node and launch.world_size % config.ranks_per_node:
        raise ConfigError(f"{launch.world_size} ranks do not split into nodes of {config.ranks_per_node}",
                          key="--ranks-per-node")
    if config.backend == "nccl" and not torch.cuda.is_available():
        raise ConfigError("nccl needs CUDA GPUs, and this machine has none; use gloo", key="--backend")
    cuda = torch.cuda.is_available() and config.backend in (None, "nccl")
    config = config.resolved(cuda)
    device = torch.device("cuda", launch.local_rank % torch.cuda.device_count()) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    if config.gemm_dtype == "fp8":      # every rank says it, before the rendezvous
        problem = device_gemm_problem(torch, device, torch.cuda.get_device_name(device) if cuda else "the CPU")
        if problem:
            raise ConfigError(problem, key="--gemm-dtype")
    _init(dist, config, launch)
    try:
        hosts: list[str] = [""] * launch.world_size
        dist.all_gather_object(hosts, socket.gethostname())
        nodes = group_nodes(hosts, config.ranks_per_node)
        pairing, rounds = pair_rounds(len(nodes), config.pairing)
        report = _phases(torch, dist, config, device, launch.rank, nodes, rounds, progress or (lambda *_: None))
        gathered = [None] * launch.world_size if launch.rank == 0 else None
        dist.gather_object(report, gathered, dst=0)
    finally:
        dist.destroy_process_group()
    if launch.rank != 0:
        return None
    return _assemble(config, launch, "cuda" if cuda else "cpu", pairing, rounds, nodes, gathered,
                     time.perf_counter() - begin)


def _phases(torch: Any, dist: Any, config: NodesConfig, device: Any, rank: int, nodes: Sequence[Node],
            rounds: Sequence[Sequence[tuple[int, int]]], progress: Progress) -> dict[str, Any]:
    """This rank's node checks (on a node's first rank), intra-node all_reduce and links, barrier after each."""
    mine = next(node for node in nodes if rank in node.ranks)
    phases = 2 + len(rounds)
    progress(0, phases, f"{len(nodes)} nodes, {sum(len(node.ranks) for node in nodes)} ranks: node checks")
    checks = _node_checks(config, device) if rank == mine.ranks[0] else None
    _barrier(dist, device)
    progress(1, phases, "intra-node all_reduce")
    intra = _intra(torch, dist, config, device, nodes, mine)
    _barrier(dist, device)
    links = {}
    for number, pairs in enumerate(rounds):
        progress(2 + number, phases,
                 f"links: round {number + 1} of {len(rounds)}, {len(pairs)} pair{'s' * (len(pairs) > 1)}")
        links.update(_round(torch, dist, config, device, nodes, pairs, number, mine))
        _barrier(dist, device)
    return {"rank": rank, "checks": checks, "intra_s": intra, "links": links}


def _init(dist: Any, config: NodesConfig, launch: Launch) -> None:
    timeout = timedelta(seconds=config.timeout_s)
    if launch.world_size == 1:
        dist.init_process_group(config.backend, store=dist.HashStore(), rank=0, world_size=1, timeout=timeout)
    else:
        dist.init_process_group(config.backend, init_method=launch.init_method, rank=launch.rank,
                                world_size=launch.world_size, timeout=timeout)


def _barrier(dist: Any, device: Any) -> None:
    if device.type == "cuda":
        dist.barrier(device_ids=[device.index])
    else:
        dist.barrier()


def _node_checks(config: NodesConfig, device: Any) -> dict[str, float | None]:
    where = f"cuda:{device.index}" if device.type == "cuda" else "cpu"
    gemm = measure_gemm(shapes=[square(config.gemm_size)], dtypes=[config.gemm_dtype], iterations=config.iterations,
                        warmup=config.warmup, device=where)
    copies = measure_memcpy(sizes=[config.memcpy_bytes], iterations=config.iterations, warmup=config.warmup,
                            device=where)
    return {"gemm_flops_per_s": best_flops(gemm, config.gemm_dtype),
            "h2d_Bps": best_bandwidth(copies, "h2d", "pinned"), "d2h_Bps": best_bandwidth(copies, "d2h", "pinned"),
            "h2h_Bps": best_bandwidth(copies, "h2h", "pageable")}


def time_all_reduce(torch: Any, dist: Any, tensor: Any, group: Any, iterations: int, warmup: int) -> float:
    """Mean seconds of one all_reduce of ``tensor`` over ``group``, as this rank sees it."""
    for _ in range(max(warmup, 1)):     # at least one: it also lines the ranks up
        dist.all_reduce(tensor, group=group)
    if tensor.is_cuda:
        torch.cuda.synchronize(tensor.device)
    begin = time.perf_counter()
    for _ in range(iterations):
        dist.all_reduce(tensor, group=group)
    if tensor.is_cuda:
        torch.cuda.synchronize(tensor.device)
    return (time.perf_counter() - begin) / iterations


def _buffer(torch: Any, config: NodesConfig, device: Any) -> Any:
    return torch.ones(config.all_reduce_bytes // 4, dtype=torch.float32, device=device)


def _intra(torch: Any, dist: Any, config: NodesConfig, device: Any, nodes: Sequence[Node],
           mine: Node) -> float | None:
    """Every rank creates every node's group (torch requires it); each node times its own."""
    groups = {node.name: dist.new_group(list(node.ranks)) for node in nodes if len(node.ranks) > 1}
    if mine.name not in groups:
        return None
    return time_all_reduce(torch, dist, _buffer(torch, config, device), groups[mine.name], config.iterations,
                           config.warmup)


def _round(torch: Any, dist: Any, config: NodesConfig, device: Any, nodes: Sequence[Node],
           pairs: Sequence[tuple[int, int]], number: int, mine: Node) -> dict[tuple[int, int, int], float]:
    groups = {pair: dist.new_group(sorted(nodes[pair[0]].ranks + nodes[pair[1]].ranks)) for pair in pairs}
    index = nodes.index(mine)
    timed = {}
    for pair, group in groups.items():
        if index in pair:
            timed[(number, *pair)] = time_all_reduce(torch, dist, _buffer(torch, config, device), group,
                                                     config.iterations, config.warmup)
    for group in groups.values():
        if group is not dist.GroupMember.NON_GROUP_MEMBER:
            dist.destroy_process_group(group)
    return timed


def _assemble(config: NodesConfig, launch: Launch, device_kind: str, pairing: str,
              rounds: Sequence[Sequence[tuple[int, int]]], nodes: Sequence[Node], reports: Sequence[Mapping],
              elapsed_s: float) -> NodesResult:
    by_rank = {report["rank"]: report for report in reports}
    size = config.all_reduce_bytes
    measured = []
    for node in nodes:
        checks = by_rank[node.ranks[0]]["checks"] or {}
        times = [by_rank[rank]["intra_s"] for rank in node.ranks if by_rank[rank]["intra_s"] is not None]
        intra = max(times) if times else None
        busbw = size / intra * bus_factor("all_reduce", len(node.ranks)) if intra else None
        measured.append(NodeMeasurement(node=node, gemm_flops_per_s=checks.get("gemm_flops_per_s"),
                                        h2d_Bps=checks.get("h2d_Bps"), d2h_Bps=checks.get("d2h_Bps"),
                                        h2h_Bps=checks.get("h2h_Bps"), intra_time_s=intra, intra_busbw_Bps=busbw))
    links = []
    for number, pairs in enumerate(rounds):
        for a, b in pairs:
            ranks = tuple(sorted(nodes[a].ranks + nodes[b].ranks))
            slowest = max(by_rank[rank]["links"][(number, a, b)] for rank in ranks)
            links.append(LinkMeasurement(nodes=(nodes[a].name, nodes[b].name), ranks=ranks, round=number,
                                         time_s=slowest,
                                         busbw_Bps=size / slowest * bus_factor("all_reduce", len(ranks))))
    analysis = health.analyse(
        [health.NodeResult(host=m.node.name, gemm_flops_per_s=m.gemm_flops_per_s, h2d_Bps=m.h2d_Bps,
                           d2h_Bps=m.d2h_Bps, h2h_Bps=m.h2h_Bps, intra_busbw_Bps=m.intra_busbw_Bps)
         for m in measured],
        [health.LinkResult(hosts=link.nodes, busbw_Bps=link.busbw_Bps) for link in links],
        gemm_label=f"{config.gemm_dtype} GEMM")
    return NodesResult(config=config, launcher=launch.launcher, world_size=launch.world_size,
                       device_kind=device_kind, pairing=pairing, num_rounds=len(rounds), nodes=tuple(measured),
                       links=tuple(links), health=analysis, elapsed_s=elapsed_s)
