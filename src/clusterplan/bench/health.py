"""Node and link health: rank measurements against the median and name the outliers (pure, no torch).

A value is an outlier when it is both more than ``SLOW_FRACTION`` below the
median of its peers *and* its robust z-score, 0.6745 (median - x) / MAD
(Iglewicz and Hoaglin's modified z), exceeds ``ROBUST_Z``: the first keeps
small, harmless spreads quiet on a very uniform cluster (MAD near 0), the
second keeps a naturally noisy metric from flagging its ordinary tail. Only
slow values are flagged; fast ones are never a fault. docs/health.md has the
table of likely causes and the reasoning for links.

Links are judged in two steps. A host whose links are slow *as a set*, at
least ``CULPRIT_MIN_LINKS`` of them and more than ``CULPRIT_SHARE`` of those it
has, each slow against the links that do not touch it, is named as the likely
culprit; its links are then explained by it. The remaining links are judged
against the median of the links that touch no culprit.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

SLOW_FRACTION = 0.10      # flag only values more than 10 % below the median ...
ROBUST_Z = 3.5            # ... whose modified z-score 0.6745 (median - x) / MAD is above 3.5
MAD_SCALE = 0.6745        # Phi^-1(3/4): makes MAD / 0.6745 estimate sigma for normal data
CULPRIT_MIN_LINKS = 2     # a host is blamed for its links when at least 2 of them are slow ...
CULPRIT_SHARE = 0.5       # ... and more than half of the links it was measured on are slow
PAIR_SPREAD = 0.10        # two peers only: report a spread above 10 %, without naming the slow one


@dataclass(**FROZEN)
class Metric:
    """One per-node measurement: its label in messages, its unit and the usual reason it is low."""

    name: str
    label: str
    symbol: str
    cause: str


METRICS: Mapping[str, Metric] = {metric.name: metric for metric in (
    Metric(name="gemm_flops_per_s", label="GEMM", symbol="FLOP/s",
           cause="thermal or power throttling, or clocks capped?"),
    Metric(name="h2d_Bps", label="host-to-device", symbol="B/s",
           cause="PCIe link running at Gen4 or x8?"),
    Metric(name="d2h_Bps", label="device-to-host", symbol="B/s",
           cause="PCIe link running at Gen4 or x8?"),
    Metric(name="h2h_Bps", label="host memory copy", symbol="B/s",
           cause="memory channels missing or slow DIMMs, or another job on the node?"),
    Metric(name="intra_busbw_Bps", label="intra-node all_reduce busbw", symbol="B/s",
           cause="NVLink or NVSwitch degraded, or peer-to-peer disabled?"),
)}
LINK_CAUSE = "cable, optic or switch port?"
CULPRIT_CAUSE = "its NIC, cable or switch port?"


@dataclass(**FROZEN)
class NodeResult:
    """What one node measured; ``None`` where a check did not run (no GPU, a single local rank)."""

    host: str
    gemm_flops_per_s: float | None = None
    h2d_Bps: float | None = None
    d2h_Bps: float | None = None
    h2h_Bps: float | None = None
    intra_busbw_Bps: float | None = None

    def __post_init__(self) -> None:
        bad = [f"{name} = {getattr(self, name)}" for name in METRICS
               if getattr(self, name) is not None and not getattr(self, name) >= 0]
        if not self.host or bad:
            raise ConfigError(f"node {self.host!r}: needs a host name and values >= 0; got {', '.join(bad)}",
                              key="node")


@dataclass(**FROZEN)
class LinkResult:
    """The inter-node all_reduce bus bandwidth measured between two hosts."""

    hosts: tuple[str, str]
    busbw_Bps: float

    def __post_init__(self) -> None:
        a, b = self.hosts
        if a == b or not self.busbw_Bps >= 0:
            raise ConfigError(f"link {a} <-> {b}: needs two different hosts and busbw >= 0, got {self.busbw_Bps}",
                              key="link")

    @property
    def name(self) -> str:
        return f"{self.hosts[0]} <-> {self.hosts[1]}"


@dataclass(**FROZEN)
class Finding:
    """One flagged outlier: the subject (a host, or ``a <-> b``), the numbers and the likely cause."""

    kind: str               # "node", "link", "culprit" or "spread"
    subject: str
    metric: str             # a METRICS name, or "link_busbw_Bps"
    value: float
    median: float
    ratio: float            # value / median
    z: float | None         # modified z-score (inf when MAD = 0; None for a two-peer spread)
    cause: str
    message: str


@dataclass(**FROZEN)
class RankedNode:
    node: NodeResult
    ratios: Mapping[str, float]   # metric -> value / median of the nodes
    worst_ratio: float            # the lowest of them (1.0 when nothing was measured)


@dataclass(**FROZEN)
class RankedLink:
    link: LinkResult
    ratio: float                  # busbw / median of all links


@dataclass(**FROZEN)
class Health:
    """Nodes and links sorted worst-first, the medians, and the findings."""

    nodes: tuple[RankedNode, ...]
    links: tuple[RankedLink, ...]
    medians: Mapping[str, float]  # per metric, and "link_busbw_Bps"
    findings: tuple[Finding, ...]


def robust_z(value: float, values: Sequence[float]) -> float:
    """0.6745 (median - value) / MAD over ``values``: positive when slow; inf when MAD = 0 and value < median."""
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    if mad == 0:
        return math.inf if value < median else (-math.inf if value > median else 0.0)
    return MAD_SCALE * (median - value) / mad


def is_slow(value: float, reference: Sequence[float]) -> bool:
    """The outlier rule: more than SLOW_FRACTION below the median and a robust z above ROBUST_Z."""
    if not reference:
        return False
    median = statistics.median(reference)
    return value < (1 - SLOW_FRACTION) * median and robust_z(value, reference) > ROBUST_Z


def analyse(nodes: Sequence[NodeResult], links: Sequence[LinkResult] = (), *,
            gemm_label: str = "GEMM") -> Health:
    """Rank nodes and links against the median and flag the slow ones with a likely cause."""
    hosts = [node.host for node in nodes]
    if len(set(hosts)) != len(hosts):
        raise ConfigError(f"host names repeat: {sorted({h for h in hosts if hosts.count(h) > 1})}", key="nodes")
    medians: dict[str, float] = {}
    findings: list[Finding] = []
    for name, metric in METRICS.items():
        present = [(node.host, getattr(node, name)) for node in nodes if getattr(node, name) is not None]
        if not present:
            continue
        values = [value for _, value in present]
        medians[name] = statistics.median(values)
        label = gemm_label if name == "gemm_flops_per_s" else metric.label
        findings += _outliers(present, values, kind="node", metric=name, label=label, symbol=metric.symbol,
                              cause=metric.cause)
    link_findings, link_median = _link_findings(links)
    findings += link_findings
    if link_median is not None:
        medians["link_busbw_Bps"] = link_median
    ranked_nodes = sorted((_rank_node(node, medians) for node in nodes), key=lambda r: (r.worst_ratio, r.node.host))
    ranked_links = sorted((RankedLink(link=link, ratio=_ratio(link.busbw_Bps, link_median)) for link in links),
                          key=lambda r: (r.ratio, r.link.name))
    order = {"culprit": 0, "node": 1, "link": 2, "spread": 3}
    findings.sort(key=lambda f: (order[f.kind], f.ratio, f.subject))
    return Health(nodes=tuple(ranked_nodes), links=tuple(ranked_links), medians=medians, findings=tuple(findings))


def _outliers(present: Sequence[tuple[str, float]], values: Sequence[float], *, kind: str, metric: str,
              label: str, symbol: str, cause: str) -> list[Finding]:
    median = statistics.median(values)
    if len(values) == 2:
        return _spread(present, kind=kind, metric=metric, label=label, symbol=symbol)
    found = []
    for subject, value in present:
        if is_slow(value, values):
            shown, reference = _pair(value, median, symbol)
            found.append(Finding(kind=kind, subject=subject, metric=metric, value=value, median=median,
                                 ratio=_ratio(value, median), z=robust_z(value, values), cause=cause,
                                 message=f"{subject}: {label} {shown} vs median {reference}: {cause}"))
    return found


def _spread(present: Sequence[tuple[str, float]], *, kind: str, metric: str, label: str,
            symbol: str) -> list[Finding]:
    """Two peers: a median cannot tell which is slow, so say that they differ and by how much."""
    (slow, low), (fast, high) = sorted(present, key=lambda p: p[1])
    if not low < (1 - PAIR_SPREAD) * high:
        return []
    shown, other = _pair(low, high, symbol)
    what = "links" if kind == "link" else "nodes"
    slow_name, fast_name = (f"link {slow}", f"link {fast}") if kind == "link" else (slow, fast)
    return [Finding(kind="spread", subject=f"{slow} / {fast}", metric=metric, value=low, median=(low + high) / 2,
                    ratio=_ratio(low, high), z=None, cause=f"one of two {what} is slow; add a third to tell which",
                    message=f"{slow_name}: {label} {shown} vs {other} on {fast_name}: one of two {what} is slow; "
                            f"measure a third to tell which")]


def _link_findings(links: Sequence[LinkResult]) -> tuple[list[Finding], float | None]:
    if not links:
        return [], None
    median = statistics.median(link.busbw_Bps for link in links)
    culprits = _culprits(links)
    findings = []
    for host, (slow_links, total) in sorted(culprits.items()):
        rest = [link.busbw_Bps for link in links if host not in link.hosts]
        values = [link.busbw_Bps for link in slow_links]
        reference = statistics.median(rest)
        typical = statistics.median(values)
        shown, ref = _pair(min(values), reference, "B/s")
        if max(values) > min(values):
            shown = f"{shown.split()[0]}-{_pair(max(values), reference, 'B/s')[0]}"
        findings.append(Finding(
            kind="culprit", subject=host, metric="link_busbw_Bps", value=typical, median=reference,
            ratio=_ratio(typical, reference), z=robust_z(typical, rest), cause=CULPRIT_CAUSE,
            message=f"{host}: {len(slow_links)} of its {total} links slow, {shown} vs median {ref} "
                    f"of the other links: {CULPRIT_CAUSE}"))
    explained = [link for link in links if not culprits.keys() & set(link.hosts)]
    reference = [link.busbw_Bps for link in explained]
    if len(explained) == 2:
        present = [(link.name, link.busbw_Bps) for link in explained]
        return findings + _spread(present, kind="link", metric="link_busbw_Bps", label="busbw",
                                  symbol="B/s"), median
    ref_median = statistics.median(reference) if reference else median
    for link in explained:
        if is_slow(link.busbw_Bps, reference):
            shown, ref = _pair(link.busbw_Bps, ref_median, "B/s")
            findings.append(Finding(kind="link", subject=link.name, metric="link_busbw_Bps", value=link.busbw_Bps,
                                    median=ref_median, ratio=_ratio(link.busbw_Bps, ref_median),
                                    z=robust_z(link.busbw_Bps, reference), cause=LINK_CAUSE,
                                    message=f"link {link.name}: {shown} vs median {ref}: {LINK_CAUSE}"))
    return findings, median


def _culprits(links: Sequence[LinkResult]) -> dict[str, tuple[list[LinkResult], int]]:
    """Hosts most of whose links are slow against the links that do not touch them."""
    hosts = sorted({host for link in links for host in link.hosts})
    culprits = {}
    for host in hosts:
        own = [link for link in links if host in link.hosts]
        rest = [link.busbw_Bps for link in links if host not in link.hosts]
        slow = [link for link in own if is_slow(link.busbw_Bps, rest)]
        if len(slow) >= CULPRIT_MIN_LINKS and len(slow) > CULPRIT_SHARE * len(own):
            culprits[host] = (slow, len(own))
    return culprits


def _rank_node(node: NodeResult, medians: Mapping[str, float]) -> RankedNode:
    ratios = {name: _ratio(getattr(node, name), medians[name]) for name in METRICS
              if getattr(node, name) is not None and name in medians}
    return RankedNode(node=node, ratios=ratios, worst_ratio=min(ratios.values(), default=1.0))


def _ratio(value: float, median: float | None) -> float:
    if not median:
        return 1.0
    return value / median


def _pair(value: float, reference: float, symbol: str) -> tuple[str, str]:
    """Both numbers in the prefix that suits the reference: ("24.9 GB/s", "53.2 GB/s"), ("610 TFLOP/s", ...)."""
    prefix, scale = "", 1.0
    for candidate, size in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(reference) >= size:
            prefix, scale = candidate, size
            break
    return f"{_number(value / scale)} {prefix}{symbol}", f"{_number(reference / scale)} {prefix}{symbol}"


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"
