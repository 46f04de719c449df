"""``clusterplan accept``: an acceptance run's measurements judged against the design's own predictions.

The one join of a measured run (``bench.accept.AcceptRun``) with the models: the collective model
(``perf.collectives.predict`` on the design's system, with the run's exact group and ranks per
node, or a calibration's fit of that group), the GEMM model's rate (peak x efficiency x k/(k+k0),
docs/training.md) and the host link's rate, and the topology audit (``audit.checks``) against the
design's node. Every check gets measured, predicted, their ratio, a verdict under the scenario's
``[accept]`` thresholds and, when it is not a pass, its likely cause (docs/accept.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clusterplan.audit.checks import Expected, audit_node
from clusterplan.bench.accept import AcceptRun, CollectiveRun
from clusterplan.bench.calibrate import Calibration
from clusterplan.catalog import Catalog
from clusterplan.design import Design, design
from clusterplan.perf.collectives import bus_factor, predict, system_from_design
from clusterplan.plan.scenario import priced
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec
from clusterplan.verdicts import AcceptThresholds, verdict, worst

NVLINK_LINK_Bps = 25e9       # NVLink 3 and 4: 25 GB/s per link per direction (A100: 12 links = 300 GB/s, H100: 18)
# ASSUMPTION: a pinned host-device copy reaches 0.8 of the PCIe link's rate per direction. PCIe's packet
# headers and flow control leave about 0.9 of the line rate for 256-byte payloads; the copy engines and
# read-request limits take NVIDIA's bandwidthTest to about 25 of 32 GB/s on PCIe 4.0 x16. Not measured here.
PCIE_EFFICIENCY = 0.8
CAUSES = {
    "gemm": "thermal or power throttling, or clocks capped? (`nvidia-smi -q -d PERFORMANCE,CLOCK`)",
    "h2d": "PCIe link at a lower generation or width, or the rank bound to the far NUMA node? "
           "(`nvidia-smi -q` GPU Link Info, `lspci -vv` LnkSta)",
    "h2h": "memory channels missing or slow DIMMs, or another job on the node?",
    "intra-node": "NVLink or NVSwitch degraded, or peer-to-peer disabled? (`nvidia-smi nvlink -s`, `topo -m`)",
    "node pairs": "a cable, optic or switch port of one of the two nodes? (compare each node's other pairs)",
    "cluster": "fabric congestion or oversubscription, or a slow node (see the node and pair checks)",
}
CAUSES["d2h"] = CAUSES["h2d"]
CPU_NOTE = ("ran on the CPU: the design's figures are for its GPUs; judge a CPU run against a calibration of "
            "this machine (--calibration)")


@dataclass(**FROZEN)
class Check:
    """One judged measurement (or audit finding) of one node, rank, pair or the whole cluster."""

    phase: str                   # "audit", "device", "intra-node", "node pairs", "cluster", "liveness"
    nodes: tuple[str, ...]       # the nodes it concerns ("cluster": every node)
    subject: str                 # "rank 3", "GPU2", "mlx5_1 port 1", "host/0 + host/1"
    check: str                   # "gemm fp32 512^3", "all_reduce", "pcie", ...
    size_bytes: int | None
    unit: str                    # "TFLOP/s", "GB/s" (busbw for collectives), "" for the audit
    measured: float | str | None
    predicted: float | str | None
    ratio: float | None          # measured / predicted (a rate), or predicted time / measured time
    verdict: str
    cause: str


@dataclass(**FROZEN)
class Acceptance:
    spec: Spec
    design: Design
    run: AcceptRun | None         # None for an audit of saved captures alone
    expectations: str             # "design" or "calibration <file>"
    thresholds: AcceptThresholds
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> str:
        return worst(check.verdict for check in self.checks)

    def node_verdicts(self) -> dict[str, str]:
        """Each node's worst verdict (a pair's check counts for both its nodes)."""
        nodes: dict[str, list[str]] = {}
        for check in self.checks:
            for node in check.nodes:
                nodes.setdefault(node, []).append(check.verdict)
        return {node: worst(verdicts) for node, verdicts in nodes.items()}


def accept(spec: Spec, run: AcceptRun | None, catalog: Catalog | None = None, *,
           captures: Mapping[str, Mapping[str, str | None]] | None = None, calibration: Calibration | None = None,
           calibration_source: str = "") -> Acceptance:
    """Judge ``run`` (and the audit ``captures`` by node, which replace the run's own) against ``spec``'s design."""
    built = design(spec, priced(spec, catalog))
    thresholds = spec.accept
    checks: list[Check] = []
    audits = dict(captures) if captures is not None else dict(run.audits) if run is not None else {}
    expected = expected_node(built)
    for node, node_captures in audits.items():
        checks += [Check(phase="audit", nodes=(node,), subject=f.subject, check=f.check, size_bytes=None, unit="",
                         measured=f.measured, predicted=f.expected, ratio=None, verdict=f.verdict, cause=f.cause)
                   for f in audit_node(node_captures or {}, expected, source=node)]
    if run is not None:
        checks += _liveness(run)
        checks += _devices(built, run, thresholds, calibration)
        checks += [check for collective in run.collectives
                   for check in _collective(built, run, collective, thresholds, calibration)]
    return Acceptance(spec=spec, design=built, run=run,
                      expectations=f"calibration {calibration_source}" if calibration is not None else "design",
                      thresholds=thresholds, checks=tuple(checks))


def expected_node(built: Design) -> Expected:
    """What one node of the design holds, as the audit compares it."""
    gpu, fabric = built.parts.gpu, built.parts.fabric
    return Expected(gpus_per_node=built.gpus_per_node,
                    nvlinks_per_pair=round(gpu.nvlink_bw_Bps / NVLINK_LINK_Bps) if gpu.intra_node != "pcie" else 0,
                    nics_per_node=built.nics_per_node, rail=built.topology.kind == "rail-optimized",
                    link_rate_gbps=fabric.link_rate_Bps * 8 / 1e9,
                    link_layer="InfiniBand" if fabric.technology == "infiniband" else "Ethernet")


def _liveness(run: AcceptRun) -> list[Check]:
    if run.failure is None:
        return []
    failure, hosts = run.failure, run.hosts
    node_of = {rank: node.name for node in run.nodes for rank in node.ranks}
    missing = failure.get("missing", [])
    subjects = [f"rank {rank} on {node_of.get(rank, hosts[rank] if rank < len(hosts) else 'an unknown host')}"
                for rank in missing] or ["a peer"]
    return [Check(phase="liveness", nodes=(node_of.get(rank, "cluster"),) if missing else ("cluster",),
                  subject=subject, check="alive", size_bytes=None, unit="", measured="no answer", predicted="alive",
                  ratio=None, verdict="fail",
                  cause=f"died or hung during {failure['during']} ({failure['detail']})")
            for rank, subject in zip(missing or [None], subjects)]


def _rate_check(phase: str, node: str, subject: str, name: str, unit: str, scale: float, measured: float | None,
                predicted: float | None, thresholds: AcceptThresholds, cpu: bool) -> Check:
    if measured is None:
        return Check(phase=phase, nodes=(node,), subject=subject, check=name, size_bytes=None, unit=unit,
                     measured=None, predicted=None, ratio=None, verdict="skip", cause="not measured on this device")
    if not predicted:
        return Check(phase=phase, nodes=(node,), subject=subject, check=name, size_bytes=None, unit=unit,
                     measured=measured / scale, predicted=None, ratio=None, verdict="skip",
                     cause="no prediction: the design has no figure for it; calibrate this machine (--calibration)")
    ratio = measured / predicted
    judged = verdict(ratio, *thresholds.ratios(None))
    cause = "" if judged == "pass" else CAUSES[name.split()[0]] + (f"; {CPU_NOTE}" if cpu else "")
    return Check(phase=phase, nodes=(node,), subject=subject, check=name, size_bytes=None, unit=unit,
                 measured=measured / scale, predicted=predicted / scale, ratio=ratio, verdict=judged, cause=cause)


def _devices(built: Design, run: AcceptRun, thresholds: AcceptThresholds,
             calibration: Calibration | None) -> list[Check]:
    settings, gpu = run.settings, built.parts.gpu
    rates = dict(calibration.rates) if calibration is not None else {}
    size = settings.gemm_size
    design_gemm = gpu.bf16_flops * gpu.gemm_efficiency * size / (size + gpu.gemm_k0) \
        if settings.gemm_dtype == "bf16" else None
    predicted = {"gemm": rates.get("gemm", design_gemm if calibration is None else None),
                 "h2d": rates.get("h2d", gpu.pcie_bw_Bps * PCIE_EFFICIENCY if calibration is None else None),
                 "d2h": rates.get("d2h", gpu.pcie_bw_Bps * PCIE_EFFICIENCY if calibration is None else None),
                 "h2h": rates.get("h2h")}
    node_of = {rank: node.name for node in run.nodes for rank in node.ranks}
    cpu = settings.device_kind == "cpu" and calibration is None
    checks = []
    for rank, measured in sorted(run.devices.items()):
        names = ("gemm", "h2h") if settings.device_kind == "cpu" else ("gemm", "h2d", "d2h")
        for name in names:
            label = f"gemm {settings.gemm_dtype} {size}^3" if name == "gemm" else name
            unit, scale = ("TFLOP/s", 1e12) if name == "gemm" else ("GB/s", 1e9)
            key = "gemm_flops_per_s" if name == "gemm" else f"{name}_Bps"
            checks.append(_rate_check("device", node_of[rank], f"rank {rank}", label, unit, scale, measured.get(key),
                                      predicted[name], thresholds, cpu))
    return checks


def _collective(built: Design, run: AcceptRun, collective: CollectiveRun, thresholds: AcceptThresholds,
                calibration: Calibration | None) -> list[Check]:
    n = len(collective.ranks)
    nodes = tuple(collective.group.split(" + ")) if collective.phase != "cluster" else tuple(
        node.name for node in run.nodes)
    fit = calibration.find(collective.op, n) if calibration is not None else None
    sizes = [size for size, _, _ in collective.rows]
    predicted, problem = _predicted_times(built, collective, sizes, fit, calibration)
    factor = bus_factor(collective.op, n)
    cpu = run.settings.device_kind == "cpu" and calibration is None
    checks = []
    for (size, time_s, wrong), expect_s in zip(collective.rows, predicted):
        measured = size / time_s * factor / 1e9
        if wrong:
            judged, ratio, cause = "fail", None, f"{wrong} wrong elements: a corrupting link or GPU (rerun, then " \
                                                 "isolate the node)"
        elif expect_s is None:
            judged, ratio, cause = "skip", None, problem
        else:
            ratio = expect_s / time_s
            judged = verdict(ratio, *thresholds.ratios(size))
            cause = "" if judged == "pass" else CAUSES[collective.phase] + (f"; {CPU_NOTE}" if cpu else "")
        checks.append(Check(phase=collective.phase, nodes=nodes, subject=collective.group, check=collective.op,
                            size_bytes=size, unit="GB/s", measured=measured,
                            predicted=size / expect_s * factor / 1e9 if expect_s else None, ratio=ratio,
                            verdict=judged, cause=cause))
    return checks


def _predicted_times(built: Design, collective: CollectiveRun, sizes: Sequence[int], fit,
                     calibration: Calibration | None) -> tuple[list[float | None], str]:
    """Seconds per size from the calibration's fit of this group, or the model on the design."""
    n = len(collective.ranks)
    if calibration is not None:
        if fit is None:
            return [None] * len(sizes), f"the calibration has no fit of {collective.op} on {n} ranks"
        return [fit.time_s(size) for size in sizes], ""
    try:
        prediction = predict(collective.op, sizes, system_from_design(built), n,
                             ranks_per_node=n // collective.num_nodes)
    except ValueError as error:
        return [None] * len(sizes), f"no prediction for this group: {error}"
    return [float(t) for t in prediction.time_s], ""
