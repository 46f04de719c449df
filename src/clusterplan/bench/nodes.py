"""``clusterplan bench nodes``: every node's GEMM, memcpy and intra-node all_reduce, then node pairs.

Launched like any torch.distributed job (torchrun, srun, mpirun; ranks from
``bench.launch``). Ranks are grouped into nodes by host name, or, with
``ranks_per_node``, in runs of consecutive ranks (several "nodes" on one host,
for testing). The job runs in phases separated by barriers:

1. node checks: the lowest rank of each node runs a short GEMM and memcpy;
2. intra-node: each node's ranks all_reduce among themselves (all nodes at once);
3. links: rounds of disjoint node pairs; in a round every pair all_reduces over
   the ranks of its two nodes at the same time (``torch.distributed.new_group``).
   ``"all"`` covers every pair in k - 1 rounds (k even; k rounds when odd, the
   circle method); ``"ring"`` measures the k neighbour pairs (i, i + 1 mod k) in
   2 rounds (3 when k is odd); ``"auto"`` is "all" up to ``RING_ABOVE`` nodes.

Times are the slowest rank's mean over the timed iterations; busbw = S / t x
2(n - 1) / n as nccl-tests defines it. Results are gathered to rank 0, which
alone gets a ``NodesResult`` back (with the ``bench.health`` analysis).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.bench import health
from clusterplan.bench.launch import Launch
from clusterplan.errors import ConfigError
from clusterplan.perf.collectives import bus_factor
from clusterplan.schema import FROZEN

SCHEMA = "clusterplan.nodes/1"
PAIRINGS = ("auto", "all", "ring")
RING_ABOVE = 16                 # "auto": every pair up to 16 nodes (15 rounds, 120 links), neighbours above
# defaults (GPU, CPU): short checks, a few seconds per phase
GEMM_SIZE = (8192, 512)
GEMM_DTYPE = ("bf16", "fp32")
ALL_REDUCE_BYTES = (512 << 20, 4 << 20)
MEMCPY_BYTES = (256 << 20, 16 << 20)
ITERATIONS = (20, 5)
WARMUP = (5, 1)

Progress = Callable[[str], None]


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
class Node:
    """A node: its name and its ranks (the first runs the node checks)."""

    name: str
    ranks: tuple[int, ...]


def group_nodes(hosts: Sequence[str], ranks_per_node: int | None = None) -> tuple[Node, ...]:
    """Ranks by host name (in order of first rank), or runs of ``ranks_per_node`` named ``host/i``."""
    if ranks_per_node is None:
        by_host: dict[str, list[int]] = {}
        for rank, host in enumerate(hosts):
            by_host.setdefault(host, []).append(rank)
        return tuple(Node(name=host, ranks=tuple(ranks)) for host, ranks in by_host.items())
    if len(hosts) % ranks_per_node:
        raise ConfigError(f"{len(hosts)} ranks do not split into nodes of {ranks_per_node}", key="--ranks-per-node")
    return tuple(Node(name=f"{hosts[first]}/{first // ranks_per_node}",
                      ranks=tuple(range(first, first + ranks_per_node)))
                 for first in range(0, len(hosts), ranks_per_node))


def all_pair_rounds(num_nodes: int) -> list[list[tuple[int, int]]]:
    """Every pair once, in rounds of disjoint pairs (the circle method of round-robin tournaments)."""
    players: list[int | None] = list(range(num_nodes)) + ([None] if num_nodes % 2 else [])
    size = len(players)
    rounds = []
    for _ in range(size - 1):
        pairs = [(players[i], players[size - 1 - i]) for i in range(size // 2)]
        rounds.append(sorted((min(a, b), max(a, b)) for a, b in pairs if a is not None and b is not None))
        players = [players[0], players[-1], *players[1:-1]]
    return [r for r in rounds if r]


def ring_rounds(num_nodes: int) -> list[list[tuple[int, int]]]:
    """Neighbour pairs (i, i + 1 mod k) coloured into 2 rounds (k even) or 3 (k odd) of disjoint pairs."""
    if num_nodes < 2:
        return []
    if num_nodes == 2:
        return [[(0, 1)]]
    edges = [(i, (i + 1) % num_nodes) for i in range(num_nodes)]
    last = edges.pop() if num_nodes % 2 else None
    rounds = [[(min(e), max(e)) for e in edges[start::2]] for start in (0, 1)]
    if last:
        rounds.append([(min(last), max(last))])
    return [sorted(r) for r in rounds if r]


def pair_rounds(num_nodes: int, pairing: str) -> tuple[str, list[list[tuple[int, int]]]]:
    """The pairing actually used ("all" or "ring") and its rounds."""
    if pairing == "auto":
        pairing = "all" if num_nodes <= RING_ABOVE else "ring"
    return pairing, all_pair_rounds(num_nodes) if pairing == "all" else ring_rounds(num_nodes)


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
    """Run every phase in this process's rank; rank 0 gets the result, the others ``None``."""
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
    _init(dist, config, launch)
    try:
        say = progress if (progress and launch.rank == 0) else (lambda text: None)
        hosts: list[str] = [""] * launch.world_size
        dist.all_gather_object(hosts, socket.gethostname())
        nodes = group_nodes(hosts, config.ranks_per_node)
        mine = next(node for node in nodes if launch.rank in node.ranks)
        say(f"{len(nodes)} nodes, {launch.world_size} ranks: node checks")
        checks = _node_checks(config, device) if launch.rank == mine.ranks[0] else None
        _barrier(dist, device)
        say("intra-node all_reduce")
        intra = _intra(torch, dist, config, device, nodes, mine)
        _barrier(dist, device)
        pairing, rounds = pair_rounds(len(nodes), config.pairing)
        links = {}
        for number, pairs in enumerate(rounds):
            say(f"links: round {number + 1} of {len(rounds)}, {len(pairs)} pair{'s' * (len(pairs) > 1)}")
            links.update(_round(torch, dist, config, device, nodes, pairs, number, mine))
            _barrier(dist, device)
        report = {"rank": launch.rank, "checks": checks, "intra_s": intra, "links": links}
        gathered = [None] * launch.world_size if launch.rank == 0 else None
        dist.gather_object(report, gathered, dst=0)
    finally:
        dist.destroy_process_group()
    if launch.rank != 0:
        return None
    return _assemble(config, launch, "cuda" if cuda else "cpu", pairing, rounds, nodes, gathered,
                     time.perf_counter() - begin)


def _init(dist: Any, config: NodesConfig, launch: Launch) -> None:
    from datetime import timedelta

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
    from clusterplan.bench.gemm import best_flops, measure_gemm, square
    from clusterplan.bench.memcpy import best_bandwidth, measure_memcpy

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


def _finite(value: float | None) -> float | None:
    import math

    return value if value is not None and math.isfinite(value) else None


def _scaled(value: float | None, scale: float) -> float | None:
    return None if value is None else value / scale


def nodes_document(result: NodesResult) -> dict[str, Any]:
    """The result as ``clusterplan.nodes/1`` (docs/health.md): nodes and links worst-first, then findings."""
    config, analysis = result.config, result.health
    by_name = {m.node.name: m for m in result.nodes}
    links = {link.nodes: link for link in result.links}
    return {
        "schema": SCHEMA, "version": __version__, "launcher": result.launcher, "world_size": result.world_size,
        "backend": config.backend, "device": result.device_kind, "num_nodes": len(result.nodes),
        "ranks_per_node": config.ranks_per_node, "pairing": result.pairing, "num_rounds": result.num_rounds,
        "elapsed_s": result.elapsed_s,
        "checks": {"gemm": {"dtype": config.gemm_dtype, "m": config.gemm_size, "n": config.gemm_size,
                            "k": config.gemm_size},
                   "memcpy_bytes": config.memcpy_bytes, "all_reduce_bytes": config.all_reduce_bytes,
                   "all_reduce_dtype": "float32", "iterations": config.iterations, "warmup": config.warmup},
        "thresholds": {"slow_fraction": health.SLOW_FRACTION, "robust_z": health.ROBUST_Z,
                       "culprit_min_links": health.CULPRIT_MIN_LINKS, "culprit_share": health.CULPRIT_SHARE},
        "medians": {"gemm_tflops": _scaled(analysis.medians.get("gemm_flops_per_s"), 1e12),
                    **{name.replace("_Bps", "_GBps"): _scaled(analysis.medians.get(name), 1e9)
                       for name in ("h2d_Bps", "d2h_Bps", "h2h_Bps", "intra_busbw_Bps", "link_busbw_Bps")}},
        "nodes": [_node_row(by_name[ranked.node.host], ranked) for ranked in analysis.nodes],
        "links": [{"nodes": list(ranked.link.hosts), "ranks": list(links[ranked.link.hosts].ranks),
                   "round": links[ranked.link.hosts].round, "time_s": links[ranked.link.hosts].time_s,
                   "busbw_GBps": ranked.link.busbw_Bps / 1e9, "ratio": ranked.ratio} for ranked in analysis.links],
        "findings": [{"kind": f.kind, "subject": f.subject, "metric": f.metric, "value": f.value,
                      "median": f.median, "ratio": f.ratio, "z": _finite(f.z), "cause": f.cause,
                      "message": f.message} for f in analysis.findings],
    }


def _node_row(m: NodeMeasurement, ranked: health.RankedNode) -> dict[str, Any]:
    return {"name": m.node.name, "ranks": list(m.node.ranks), "gemm_tflops": _scaled(m.gemm_flops_per_s, 1e12),
            "h2d_GBps": _scaled(m.h2d_Bps, 1e9), "d2h_GBps": _scaled(m.d2h_Bps, 1e9),
            "h2h_GBps": _scaled(m.h2h_Bps, 1e9), "intra_time_s": m.intra_time_s,
            "intra_busbw_GBps": _scaled(m.intra_busbw_Bps, 1e9), "ratios": dict(ranked.ratios),
            "worst_ratio": ranked.worst_ratio}


def render_nodes(doc: Mapping[str, Any], stream: TextIO) -> None:
    """Nodes, then links, worst-first, then the findings (or a line saying there are none)."""
    write = stream.write
    checks = doc["checks"]
    gemm = checks["gemm"]
    write(f"# clusterplan bench nodes: {doc['num_nodes']} nodes, {doc['world_size']} ranks, {doc['backend']} on "
          f"{doc['device']}, {doc['elapsed_s']:.1f} s\n")
    write(f"# checks: {gemm['dtype']} GEMM {gemm['m']}^3, memcpy {_size(checks['memcpy_bytes'])}, all_reduce "
          f"{_size(checks['all_reduce_bytes'])} float32, {checks['iterations']} iterations after "
          f"{checks['warmup']} warm-up\n")
    write("# vs median: a node's lowest value / the median of the nodes over its checks (a link's busbw / "
          "the links' median)\n#\n")
    write(f"# {'node':<24} {'ranks':>5} {'TFLOP/s':>9} {'h2d GB/s':>9} {'d2h GB/s':>9} {'h2h GB/s':>9} "
          f"{'intra busbw':>11} {'vs median':>9}\n")
    for row in doc["nodes"]:
        write(f"  {row['name']:<24} {len(row['ranks']):>5} {_num(row['gemm_tflops']):>9} {_num(row['h2d_GBps']):>9} "
              f"{_num(row['d2h_GBps']):>9} {_num(row['h2h_GBps']):>9} {_num(row['intra_busbw_GBps']):>11} "
              f"{row['worst_ratio']:>9.0%}\n")
    write(f"#\n# links: {doc['pairing']} pairs, {doc['num_rounds']} round{'s' * (doc['num_rounds'] != 1)}\n")
    if doc["links"]:
        write(f"# {'link':<45} {'ranks':>5} {'round':>5} {'time (ms)':>10} {'busbw GB/s':>11} {'vs median':>9}\n")
    for row in doc["links"]:
        name = f"{row['nodes'][0]} <-> {row['nodes'][1]}"
        write(f"  {name:<45} {len(row['ranks']):>5} {row['round'] + 1:>5} {row['time_s'] * 1e3:>10.3f} "
              f"{row['busbw_GBps']:>11.2f} {row['ratio']:>9.0%}\n")
    t = doc["thresholds"]
    write(f"#\n# findings (slow = over {t['slow_fraction']:.0%} below the median and robust z > {t['robust_z']}):\n")
    for finding in doc["findings"]:
        write(f"  {finding['message']}\n")
    if not doc["findings"]:
        write("  none: every node and link is within the thresholds\n")


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value >= 10 else f"{value:.3g}"


def _size(size: int) -> str:
    from clusterplan.units import format_size

    return format_size(size)

