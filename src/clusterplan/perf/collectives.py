"""Collective communication: nccl-tests' bus-bandwidth factors and an NCCL-like time model.

The factor table is shared with the benchmark (nccl-tests semantics,
docs/collectives.md): algbw = S / t with GB = 1e9 B, busbw = algbw x factor,
S the full buffer as nccl-tests counts it.

The model prices every (algorithm, protocol) that NCCL could use for a size
and keeps the fastest, as NCCL's tuner does:

    time = latency(algorithm, protocol, ranks, nodes) + S x factor / busbw   (ring, direct)
    time = latency(...) + S / algbw + fill                                    (tree, NVLS)

A tree (and NVLS tree) is a pipeline: each channel's data moves up and down
a chain of hops in chunks, and every hop but the slowest one adds one chunk's
time at its own per-channel speed before the pipeline runs full (``_fill``):

    fill = min(chunk(S), S / channels) x channels x sum(1 / hop bandwidth, all hops but the slowest)

with the chunk NCCL sizes per message (``perf.pipeline``: halved while each channel holds few chunks per
hop of the tree's depth) and NCCL's channels (``System.channels``).
A plain tree's network rate is also bounded by what its channels move (``perf.tree``: about half a ring
channel's, its thread blocks split between the reduce up and the broadcast down).

Latencies are NCCL's own tuning constants (src/graph/tuning.cc, NCCL 2.30);
bandwidths come from the cluster's links with calibrated efficiencies
(catalog fields ``intra_efficiency``, ``nvls_efficiency`` and the fabric's
``efficiency``). Everything is vectorised over message sizes with numpy.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from clusterplan.perf import ecmp, pipeline, tree
from clusterplan.perf.numeric import minimum
from clusterplan.schema import FROZEN

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv")
ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree", "pat", "direct")
PROTOCOLS = ("LL", "LL128", "Simple")


def bus_factor(op: str, num_ranks: int) -> float:
    """nccl-tests' busbw / algbw factor for ``op`` on ``num_ranks`` ranks."""
    n = num_ranks
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    if op in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    raise ValueError(f"unknown collective {op!r}; expected one of {', '.join(OPS)}")


# NCCL tuning constants, microseconds, per protocol (LL, LL128, Simple).
BASE_LATENCY_US = {"ring": (6.6, 14.0, 8.4), "tree": (6.8, 14.0, 8.4), "nvls": (0.0, 0.0, 0.0),
                   "nvls_tree": (0.0, 0.0, 0.0), "pat": (8.0, 8.0, 8.0), "direct": (6.6, 14.0, 8.4)}
NVLINK_LATENCY_US = {"ring": (0.6, 1.9, 3.4), "tree": (0.6, 1.25, 4.0), "nvls": (0.0, 0.0, 25.0),
                     "nvls_tree": (0.0, 0.0, 25.0), "pat": (0.0, 0.0, 4.0), "direct": (0.6, 1.9, 3.4)}
PCI_LATENCY_US = {"ring": (1.0, 2.5, 5.7), "tree": (1.0, 1.9, 4.0), "direct": (1.0, 2.5, 5.7)}
NET_LATENCY_US = {"ring": (2.7, 4.0, 14.0), "tree": (5.0, 8.5, 14.0), "nvls": (0.0, 0.0, 18.0),
                  "nvls_tree": (0.0, 0.0, 20.9), "pat": (5.0, 8.5, 14.0), "direct": (2.7, 4.0, 14.0)}
# Share of link bandwidth each protocol carries: LL sends 8-byte flag+data words (half),
# LL128 120 of every 128 bytes (NCCL caps it at 0.92), Simple all of it.
PROTOCOL_BANDWIDTH = (0.5, 0.92, 1.0)
# ... except LL on a tree, which NCCL rates at 1 / 3.8 of the link (tuning.cc: "busBw * 1.0 / 3.8"): its
# 8-byte lines are reduced and forwarded at every hop of the chain.
TREE_LL_BANDWIDTH = 1 / 3.8
# ... and LL on a ring at 1 / 4 across nodes or in an all-reduce or reduce, else 1 / 3 (tuning.cc's LLRatio:
# "nNodes > 1 || coll == AllReduce || coll == Reduce ? 1.0/4.0 : 1.0/3.0"), indexed by that condition
RING_LL_BANDWIDTH = (1 / 3, 1 / 4)
RING_PLATEAU = 1.4      # NCCL: multi-node Simple ring all-reduce latency x 1.4
# PAT (NCCL 2.23+): all_gather / reduce_scatter with one GPU per node in log2(nodes) steps (Bruck-like); NCCL
# rates it at 0.75 of the ring's bandwidth and log2(nodes) x net latency / 3.5 + 2.8 us per rank (tuning.cc)
PAT_BANDWIDTH = 0.75
PAT_RANK_US = 2.8
NET_OVERHEAD_US = 1.0   # NCCL: host overhead per network step (x 3 for Simple)


@dataclass(**FROZEN)
class System:
    """What the collective model needs to know of a cluster, in SI units."""

    gpus_per_node: int
    intra_node: str                 # "nvswitch", "mesh" or "pcie"
    intra_bw_Bps: float             # per GPU per direction: NVLink total, or PCIe
    intra_efficiency: float
    nvls: bool
    nvls_efficiency: float
    nics_per_node: int
    link_rate_Bps: float            # per NIC
    net_efficiency: float
    net_latency_s: float            # added to NCCL's network latency per step
    hop_latency_s: float
    nodes_per_leaf: int             # nodes whose NICs share a leaf (per rail when rail-optimised)
    tiers: int
    bisection_fraction: float       # cross-leaf bandwidth share (1 / oversubscription)
    adaptive_routing: bool = True   # False: switches hash each flow onto one uplink (ECMP), as plain RoCE does
    rail_optimized: bool = False    # each of a node's NICs on its own leaf (rail), not all on one

    @property
    def node_net_bw_Bps(self) -> float:
        return self.nics_per_node * self.link_rate_Bps

    @property
    def channels(self) -> int:
        """NCCL's channels (parallel rings or trees) on a multi-node communicator. ASSUMPTION from NCCL's topology
        search (src/graph/search.cc): two rings or trees per NIC, each duplicated once, at most 32 (MAXCHANNELS /
        2): 16 on p4de's 4 NICs, 32 on 8. A count by NIC, not by line rate: a faster NIC never adds channels (each
        adds a chunk to a tree's pipeline fill), so more bandwidth never slows a collective. Counting one ring per
        ~12 GB/s of network bandwidth instead fitted the nccl-tests tables no better (all points' MAPE 16.1 %
        against 16.0 %) and broke that."""
        return min(32, max(2, 4 * self.nics_per_node))


def system_from_design(design, domain_gpus: int = 0) -> System:
    """The collective view of a planned cluster (``clusterplan.design.Design``).

    The model's "node" is the NVLink (scale-up) domain: one server on HGX, a whole rack of compute trays on a
    rack-scale system (GB200 NVL72: 72 GPUs and their 72 NICs). ``domain_gpus`` is how many GPUs of each domain a
    job uses (default: all of them); the domain's NICs follow its GPUs (docs/nvl72.md).
    """
    gpu, fabric, topology = design.parts.gpu, design.parts.fabric, design.topology
    intra = gpu.nvlink_bw_Bps if gpu.intra_node != "pcie" else gpu.pcie_bw_Bps
    rail = topology.kind == "rail-optimized"
    per_leaf = topology.endpoints_per_leaf if rail else topology.endpoints_per_leaf // design.nics_per_node
    servers = design.domain_gpus // design.gpus_per_node   # servers per domain: 1 on HGX
    domain = domain_gpus or design.domain_gpus
    nics = design.nics_per_node * domain // design.gpus_per_node if servers > 1 else design.nics_per_node
    return System(gpus_per_node=domain, intra_node=gpu.intra_node, intra_bw_Bps=intra,
                  intra_efficiency=gpu.intra_efficiency, nvls=gpu.nvls, nvls_efficiency=gpu.nvls_efficiency,
                  nics_per_node=nics, link_rate_Bps=fabric.link_rate_Bps,
                  net_efficiency=fabric.efficiency, net_latency_s=fabric.latency_s,
                  hop_latency_s=fabric.hop_latency_s, nodes_per_leaf=max(1, per_leaf // servers),
                  tiers=topology.tiers, bisection_fraction=topology.bisection_fraction,
                  adaptive_routing=fabric.adaptive_routing, rail_optimized=rail)


@dataclass(frozen=True, slots=True)
class Prediction:
    """Predicted time and bandwidths per size, with the algorithm and protocol chosen."""

    op: str
    num_ranks: int
    num_nodes: int
    size_bytes: object   # numpy arrays, one entry per size
    time_s: object
    algbw_GBps: object
    busbw_GBps: object
    algorithm: tuple[str, ...]
    protocol: tuple[str, ...]


def placement(system: System, num_ranks: int, ranks_per_node: int | None = None) -> tuple[int, int]:
    """(nodes, ranks per node) for ``num_ranks`` GPUs, packed onto whole nodes unless ``ranks_per_node`` says.

    A group with fewer ranks per node than the node has GPUs (a data-parallel group
    strided across nodes, say) runs beside the node's other groups and gets their
    share of its NICs.
    """
    local = min(num_ranks, system.gpus_per_node) if ranks_per_node is None else ranks_per_node
    if not 1 <= local <= system.gpus_per_node or num_ranks % local:
        raise ValueError(f"{num_ranks} GPUs do not fill nodes of {system.gpus_per_node} with {local} per node")
    return num_ranks // local, local


def predict(op: str, size_bytes, system: System, num_ranks: int, ranks_per_node: int | None = None,
            algorithms: tuple[str, ...] = ()) -> Prediction:
    """Fastest NCCL-like (algorithm, protocol) time for each size of ``op`` on ``num_ranks`` GPUs; ``algorithms``
    (as NCCL_ALGO restricts NCCL's choice, e.g. ("ring",)) limits the candidates, () = every one."""
    sizes = np.asarray(size_bytes, dtype=float)
    factor = bus_factor(op, num_ranks)
    nodes, local = placement(system, num_ranks, ranks_per_node)
    if num_ranks == 1:
        zero = np.zeros_like(sizes)
        return Prediction(op=op, num_ranks=1, num_nodes=1, size_bytes=sizes, time_s=zero, algbw_GBps=zero,
                          busbw_GBps=zero, algorithm=("none",) * sizes.size, protocol=("none",) * sizes.size)
    candidates = _candidates(op, system, num_ranks, nodes, local)
    if algorithms:
        unknown = set(algorithms) - set(ALGORITHMS)
        if unknown:
            raise ValueError(f"unknown algorithm {sorted(unknown)[0]!r}; expected one of {', '.join(ALGORITHMS)}")
        candidates = tuple(c for c in candidates if c.algorithm in algorithms) or candidates
    times = _times_s(candidates, sizes)
    best = times.argmin(axis=0)
    time_s = times[best, np.arange(sizes.size)]
    algbw = np.divide(sizes, time_s, out=np.zeros_like(sizes), where=time_s > 0) / 1e9
    return Prediction(op=op, num_ranks=num_ranks, num_nodes=nodes, size_bytes=sizes, time_s=time_s,
                      algbw_GBps=algbw, busbw_GBps=algbw * factor,
                      algorithm=tuple(candidates[i].algorithm for i in best),
                      protocol=tuple(candidates[i].protocol for i in best))


def predict_time_s(op: str, size_bytes: float, system: System, num_ranks: int,
                   ranks_per_node: int | None = None) -> float:
    """``predict``'s time for one size, without its arrays: what the step model asks of one layout."""
    nodes, local = placement(system, num_ranks, ranks_per_node)
    if num_ranks == 1:
        return 0.0
    candidates = _candidates(op, system, num_ranks, nodes, local)
    return float(min(_time_s(candidate, size_bytes) for candidate in candidates))


def predict_times_s(op: str, size_bytes, system: System, num_ranks: int, ranks_per_node: int) -> np.ndarray:
    """``predict``'s times only, for an array of sizes: what the layout search asks of a grid of layouts
    (naming the chosen algorithm of every size took a quarter of a search)."""
    sizes = np.asarray(size_bytes, dtype=float)
    nodes, local = placement(system, num_ranks, ranks_per_node)
    if num_ranks == 1:
        return np.zeros_like(sizes)
    return _times_s(_candidates(op, system, num_ranks, nodes, local), sizes).min(axis=0)


def _times_s(candidates: tuple[Candidate, ...], sizes: np.ndarray) -> np.ndarray:
    """Each candidate's time for each size: one row per candidate."""
    times = np.empty((len(candidates), sizes.size))
    for row, candidate in enumerate(candidates):
        times[row] = _time_s(candidate, sizes)
    return times


@dataclass(**FROZEN)
class Candidate:
    """One (algorithm, protocol) NCCL could run: its latency, bandwidth and, for a tree, its pipeline fill."""

    algorithm: str
    protocol: str
    latency_s: float
    bandwidth_Bps: float
    bytes_per_size: float                 # bytes the bandwidth carries per byte of S (the bus factor, or 1)
    fill_s_per_byte: float = 0.0          # a tree's: seconds per byte of one chunk on every channel (``_fill``)
    channels: int = 1
    chunk_bytes: float = 0.0              # before NCCL's halving
    halving: tuple[tuple[float, float], ...] = ()   # perf.pipeline.thresholds: how NCCL shrinks the chunk
    unhalved_from_bytes: float = 0.0      # from this S on the chunk is whole (perf.pipeline.unhalved_from_bytes)

    def without_fill(self) -> Candidate:
        return Candidate(algorithm=self.algorithm, protocol=self.protocol, latency_s=self.latency_s,
                         bandwidth_Bps=self.bandwidth_Bps, bytes_per_size=self.bytes_per_size)


def _time_s(candidate: Candidate, sizes):
    """One candidate's time for ``sizes`` (a float or an array)."""
    bandwidth_Bps = candidate.bandwidth_Bps
    if candidate.algorithm in ("tree", "nvls_tree"):
        bandwidth_Bps = bandwidth_Bps * tree.correction(candidate.protocol, sizes)
    time_s = candidate.latency_s + sizes * candidate.bytes_per_size / bandwidth_Bps
    if candidate.fill_s_per_byte:
        if type(sizes) is not np.ndarray and sizes >= candidate.unhalved_from_bytes:
            chunk = candidate.chunk_bytes     # the common case of one large size, without the halving's loops
        else:
            chunk = pipeline.chunk_bytes(sizes, candidate.channels, candidate.chunk_bytes, candidate.halving)
        time_s = time_s + minimum(sizes, chunk * candidate.channels) * candidate.fill_s_per_byte
    return time_s


def _fill(hops_Bps: list[float], protocol_share: float) -> float:
    """Seconds per byte of S that fills one chunk on every channel, of a pipeline over ``hops_Bps``: each
    channel moves S / channels in chunks, and a chunk crosses every hop but the slowest before the pipeline
    runs at the slowest one's pace."""
    slowest = min(hops_Bps)
    others = sum(1 / bandwidth for bandwidth in hops_Bps) - 1 / slowest
    return others / protocol_share


def _tree_net_algbw(system: System, node_net_Bps: float, nodes: int, channel_bound: bool = True) -> float:
    """A double binary tree's network algbw: each node moves S in and out on two nodes, 2 S on more, at the
    smaller of what its NICs carry and (``channel_bound``: a plain tree) what its channels can move. ECMP
    collisions (``ecmp.slowdown``) slow the network's share only: hashing flows onto uplinks does not slow the
    GPUs' thread blocks. A plain tree channel's thread block splits between the reduce going up and the broadcast
    coming down (NCCL runTreeSplit), so a channel carries a node's tree traffic at ``tree.CHANNEL_Bps``, about
    half a ring channel's (docs/collectives.md, tree throughput); the NVLS tree reduces inside the NVSwitch and
    has no such bound (``channel_bound=False``)."""
    node_Bps = node_net_Bps / ecmp.slowdown(system, nodes, True)
    if channel_bound:
        node_Bps = min(node_Bps, system.channels * tree.CHANNEL_Bps)
    return node_Bps / (1 if nodes == 2 else 2)


@functools.lru_cache(maxsize=4096)
def _candidates(op: str, system: System, n: int, nodes: int, local: int) -> tuple[Candidate, ...]:
    """A ``Candidate`` for every usable (algorithm, protocol) (cached: pure)."""
    intra_ring = system.intra_bw_Bps * system.intra_efficiency          # ring busbw inside a node
    peer = intra_ring / (system.gpus_per_node - 1) if system.intra_node == "mesh" else intra_ring
    spans_leaves = nodes > system.nodes_per_leaf
    hops = 2 * system.tiers - 1 if spans_leaves else 1
    cross = system.bisection_fraction if spans_leaves else 1.0
    node_net = system.node_net_bw_Bps * local / system.gpus_per_node * system.net_efficiency * cross
    extra_net_us = (system.net_latency_s + (hops - 1) * system.hop_latency_s) * 1e6
    intra_table = PCI_LATENCY_US if system.intra_node == "pcie" else NVLINK_LATENCY_US
    factor = bus_factor(op, n)
    channels = system.channels
    out = []

    def latency(algorithm: str, p: int) -> float:
        base = BASE_LATENCY_US[algorithm][p]
        intra = intra_table.get(algorithm, NVLINK_LATENCY_US[algorithm])[p]
        inter = NET_LATENCY_US[algorithm][p] + extra_net_us * (2 if p == 2 else 1)
        if nodes > 1:
            intra = max(intra, NET_OVERHEAD_US * (3 if p == 2 else 1))
        if algorithm == "ring":
            steps = 2 * (n - 1) if op == "all_reduce" else n - 1
            inter_steps = (2 if op == "all_reduce" else 1) * (nodes - 1)
            us = base + (steps - inter_steps) * intra + inter_steps * inter
            if nodes > 1 and p == 2 and op == "all_reduce":
                us *= RING_PLATEAU
        elif algorithm == "tree":
            us = base + 2 * ((local - 1) * intra + math.log2(nodes) * inter)
        elif algorithm == "nvls":
            us = intra
        elif algorithm == "nvls_tree":
            us = intra + 2 * math.log2(nodes) * inter
        elif algorithm == "pat":
            us = base + math.log2(nodes) * inter / 3.5 + n * PAT_RANK_US
        else:  # direct: all peers at once
            us = base + (inter if nodes > 1 else intra)
        return us * 1e-6

    def add(algorithm: str, bandwidth_Bps: float, per_factor: float, protocols=(0, 1, 2), hops=()) -> None:
        for p in protocols:
            share = TREE_LL_BANDWIDTH if algorithm == "tree" and p == 0 else PROTOCOL_BANDWIDTH[p]
            if algorithm == "ring" and p == 0:
                share = RING_LL_BANDWIDTH[nodes > 1 or op in ("all_reduce", "reduce")]
            pipelined = {}
            if hops and algorithm == "nvls_tree":
                pipelined = dict(chunk_bytes=pipeline.NVLS_CHUNK_BYTES)
            elif hops:
                pipelined = dict(chunk_bytes=pipeline.TREE_CHUNK_BYTES[PROTOCOLS[p]],
                                 halving=pipeline.thresholds(PROTOCOLS[p], nodes, local))
            if hops:
                pipelined.update(fill_s_per_byte=_fill(list(hops), share), channels=channels,
                                 unhalved_from_bytes=pipeline.unhalved_from_bytes(
                                     channels, pipelined["chunk_bytes"], pipelined.get("halving", ())))
            out.append(Candidate(algorithm=algorithm, protocol=PROTOCOLS[p], latency_s=latency(algorithm, p),
                                 bandwidth_Bps=bandwidth_Bps * share, bytes_per_size=per_factor, **pipelined))

    if op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"):
        ring = intra_ring if nodes == 1 else min(intra_ring, node_net / ecmp.slowdown(system, nodes, False))
        add("ring", ring, factor)
    if op in ("all_gather", "reduce_scatter") and nodes > 1 and local == 1:
        # PAT's peers are 2^k ranks away: its flows leave the leaf as a tree's do
        pat = min(intra_ring, node_net / ecmp.slowdown(system, nodes, True))
        add("pat", pat * PAT_BANDWIDTH, factor, (2,))
    if op == "all_reduce" and nodes > 1:
        up_down = 2 * max(1, math.ceil(math.log2(nodes)))       # network hops of a chunk, up and down the tree
        tree_net = _tree_net_algbw(system, node_net, nodes)
        chain = [peer] * (2 * (local - 1)) + [tree_net] * up_down
        add("tree", min(peer, tree_net), 1.0, hops=chain)
        if system.nvls:
            nvls = system.intra_bw_Bps * system.nvls_efficiency
            nvls_net = _tree_net_algbw(system, node_net, nodes, channel_bound=False)
            add("nvls_tree", min(nvls, nvls_net), 1.0, (2,), hops=[nvls, *[nvls_net] * up_down, nvls])
    if op == "all_reduce" and nodes == 1 and system.nvls and local > 2:
        add("nvls", system.intra_bw_Bps * system.nvls_efficiency, 1.0, (2,))
    if op == "alltoall":
        inside = (local - 1) / n / intra_ring if local > 1 else 0.0
        outside = (n - local) / n / (node_net / local) if nodes > 1 else 0.0
        add("direct", 1.0 / max(inside, outside), 1.0)
    if op == "sendrecv":
        add("direct", peer if nodes == 1 else min(peer, node_net / local), 1.0)
    return tuple(out)


DTYPE_BYTES = {"float": 4, "half": 2, "bfloat16": 2, "double": 8, "int8": 1, "int32": 4, "fp8": 1}
PER_RANK_COUNT = ("all_gather", "reduce_scatter", "alltoall")  # nccl-tests prints these counts per rank


def size_sweep(min_bytes: int, max_bytes: int, *, factor: float = 2.0, increment: int = 0) -> list[int]:
    """Sizes from ``min_bytes`` to ``max_bytes``, times ``factor`` (or plus ``increment``), as nccl-tests -b/-e/-f/-i."""
    if min_bytes <= 0 or max_bytes < min_bytes:
        raise ValueError(f"sizes must satisfy 0 < min ({min_bytes}) <= max ({max_bytes})")
    if increment <= 0 and factor <= 1:
        raise ValueError(f"the step factor must be > 1, got {factor:g}")
    sizes, size = [], float(min_bytes)
    while size <= max_bytes:
        sizes.append(int(size))
        size = size + increment if increment > 0 else size * factor
    return sizes


def element_count(op: str, size_bytes: int, dtype: str, num_ranks: int) -> tuple[int, int]:
    """(size rounded as nccl-tests does, printed element count) for one row."""
    width = DTYPE_BYTES[dtype]
    if op in PER_RANK_COUNT:
        count = size_bytes // (width * num_ranks)
        return count * width * num_ranks, count
    count = size_bytes // width
    return count * width, count
