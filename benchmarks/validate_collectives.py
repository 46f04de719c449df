"""Predicted vs measured all-reduce (and AG/RS) bus bandwidth on every run in shared/data/validation.

Usage: python benchmarks/validate_collectives.py [--data DIR] [--rows]

Each run's hardware is described below as a collective System built from
catalog GPU and fabric entries plus the run's own NIC count and line rate
(the fabric efficiency and extra latency of EFA are calibrated on the p4de
and p6-b200 runs and say so). Errors are |predicted - measured| / measured of
busbw, by size band and overall. A table row's measurement is its out-of-place column, replaced by its
in-place one only where the out-of-place timing stalled (``stalled``: more than twice the in-place time and
longer than the out-of-place time of each neighbouring size; NVIDIA/nccl-tests #309's 8-node run: 8 MiB in
1272 us out-of-place, 321 us in-place, 204 and 378 us at the sizes either side).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import statistics
import sys
from pathlib import Path

import numpy as np

from typing import NamedTuple

from clusterplan.catalog import load_catalog
from clusterplan.perf.collectives import System, predict
from clusterplan.perf.evidence import collective_regime
import baseline
from bands import print_regimes, print_summary
from validation_data import PROJECT, shared

DATA = shared()
KiB, MiB, GiB = 2**10, 2**20, 2**30
BANDS = (("< 64 KiB", 0, 64 * KiB), ("64 KiB - 64 MiB", 64 * KiB, 64 * MiB), (">= 64 MiB", 64 * MiB, float("inf")))
EFA = dict(efficiency=0.91, latency_s=65e-6, technology="efa")  # calibrated: p4de tree plateau 41.8 of 50 GB/s
EFA_V4 = dict(efficiency=0.91, latency_s=10e-6, technology="efa")  # ASSUMPTION: EFA v4 latency; bandwidth as EFA
# p5's EFA v2: 20 us a network hop, aws-ofi-nccl's own tuner model for P5 (aws/aws-ofi-nccl
# src/tuner/nccl_ofi_model.cpp, net_lat, 2026-08); efficiency calibrated on the 2 x p5 table's 16 GiB end (algbw
# 259.8 of 400 GB/s)
EFA_V2 = dict(efficiency=0.72, latency_s=20e-6, technology="efa")
# calibrated on the A3 Mega table: small-message time 123 us = NCCL tree latency + 2 x 46 us; 8 GiB algbw 181 of
# 200 GB/s on the model's tree with LL128 (x 0.92)
TCPXO = dict(efficiency=0.98, latency_s=46e-6, technology="ethernet")


class Run(NamedTuple):
    """A run's collective System, and its GPU and fabric technology (the regime of its points)."""

    system: System
    gpu: str
    technology: str


def system(gpu_id: str, *, nics: int, gbps: float, fabric: str = "ib-ndr400", gpus_per_node: int = 8,
           nvls: bool | None = None, nvlink_GBps: float | None = None, technology: str = "",
           **fabric_overrides) -> Run:
    catalog = load_catalog()
    gpu = catalog.get("gpus", gpu_id)
    entry = dataclasses.replace(catalog.get("fabrics", fabric), **fabric_overrides)
    intra = nvlink_GBps * 1e9 if nvlink_GBps else (gpu.nvlink_bw_Bps if gpu.intra_node != "pcie" else gpu.pcie_bw_Bps)
    built = System(gpus_per_node=gpus_per_node, intra_node=gpu.intra_node if not nvlink_GBps else "nvswitch",
                   intra_bw_Bps=intra, intra_efficiency=gpu.intra_efficiency,
                   nvls=gpu.nvls if nvls is None else nvls, nvls_efficiency=gpu.nvls_efficiency or 0.60,
                   nics_per_node=nics, link_rate_Bps=gbps * 1e9 / 8, net_efficiency=entry.efficiency,
                   net_latency_s=entry.latency_s, hop_latency_s=entry.hop_latency_s, nodes_per_leaf=64, tiers=2,
                   bisection_fraction=1.0)
    return Run(system=built, gpu=gpu_id, technology=technology or entry.technology)


# (dataset/test id prefix, hardware) -> Run
TABLE_RUNS = {
    "awsome-distributed-training@7217859f#1": system("a100-80gb-sxm", nics=4, gbps=100, fabric="roce-100g", **EFA),
    "awsome-distributed-training@7217859f#2": system("h100-sxm", nics=32, gbps=100, fabric="roce-100g", **EFA_V2),
    "oci-hpc-oke@1402938#1": system("a100-40gb-sxm", nics=16, gbps=100, fabric="roce-100g"),
    "oci-hpc-oke@61d210a#1": system("a100-40gb-sxm", nics=16, gbps=100, fabric="roce-100g"),
    "oci-hpc-oke@61d210a#2": system("mi300x", nics=8, gbps=400, fabric="roce-400g"),
    "gcp-a3-mega-tcpxo@346b825#1": system("h100-sxm", nics=8, gbps=200, fabric="roce-200g", nvls=False, **TCPXO),
    # NVIDIA/nccl-tests #309: HGX H100 with 8 x 400 Gb/s InfiniBand a node, the catalog's NDR fabric as it is
    **{f"nccl-tests#309@{run}": system("h100-sxm", nics=8, gbps=400, fabric="ib-ndr400")
       for run in ("qoofyk#2n", "qoofyk#4n", "gj-aion#2n", "gj-aion#4n", "gj-aion#8n", "gj-aion#2n-ring")},
}
TABLE_ALGORITHMS = {"nccl-tests#309@gj-aion#2n-ring": ("ring",)}   # NCCL_ALGO the run set; others: NCCL's choice
TABLES = ("nccl_tests_allreduce_tables.csv",)     # in the shared folder; the project's own in PROJECT



def summary_system(row: dict) -> Run | None:
    """The System for one row of nccl_busbw_summary_points.csv (None: not enough hardware facts)."""
    gpu, hardware, collective = row["gpu"], row["hardware"], row["collective"]
    off = "NVLS_ENABLE=0" in collective  # a configuration of the run, not its outcome
    if gpu == "H200":
        if "RoCE" in hardware:
            return system("h200-sxm", nics=8, gbps=400, fabric="roce-400g")
        return system("h200-sxm", nics=8, gbps=400, nvls=not off)
    if gpu == "B200":
        return system("b200", nics=8, gbps=400, nvls=not off, **EFA_V4)
    if gpu == "H100":
        return system("h100-sxm", nics=8, gbps=400, nvls=True)
    if gpu == "H800":
        return system("h100-sxm", nics=8, gbps=400, nvls=True, nvlink_GBps=200)   # H800: 400 GB/s NVLink bidirectional
    if gpu.startswith("A100"):
        return system("a100-80gb-sxm", nics=8, gbps=200)
    if gpu == "H100 PCIe":
        return system("h100-pcie", nics=1, gbps=200, nvlink_GBps=300)  # NVLink bridge: 600 GB/s bidirectional
    return None


def parse_size(text: str) -> float | None:
    text = text.strip()
    for suffix, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * scale
    return None


STALL_RATIO = 2.0   # an out-of-place timing this many times the in-place one (and a spike in its sweep) stalled


def stalled(out_of_place_us: float, in_place_us: float, smaller_us: float | None, larger_us: float | None) -> bool:
    """Whether an out-of-place timing is a one-off stall, not the collective's time: more than ``STALL_RATIO``
    times the in-place timing of the same size, run just after it, and a spike in its sweep: longer than the next
    larger size's out-of-place timing (twice the message) and the next smaller one's; at the top of a sweep, where
    no larger size is, more than ``STALL_RATIO`` times the next smaller one's (a bandwidth-bound half-size message
    takes about half as long, so merely exceeding it would say nothing)."""
    if out_of_place_us <= STALL_RATIO * in_place_us:
        return False
    if larger_us is None:
        return smaller_us is not None and out_of_place_us > STALL_RATIO * smaller_us
    return out_of_place_us > larger_us and (smaller_us is None or out_of_place_us > smaller_us)


def table_busbw(rows: list[dict]) -> list[float]:
    """Each nccl-tests table row's measured busbw, in the rows' order: its out-of-place column, or its in-place
    one where the out-of-place timing ``stalled`` (against the same run's next smaller and larger sizes)."""
    sweeps: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        sweeps.setdefault(row["test_id"], []).append(index)
    measured = [float(row["oop_busbw_GBps"]) for row in rows]
    for indexes in sweeps.values():
        indexes.sort(key=lambda i: float(rows[i]["size_bytes"]))
        times = [float(rows[i]["oop_time_us"]) for i in indexes]
        for k, i in enumerate(indexes):
            smaller = times[k - 1] if k > 0 else None
            larger = times[k + 1] if k + 1 < len(times) else None
            if stalled(times[k], float(rows[i]["ip_time_us"]), smaller, larger):
                measured[i] = float(rows[i]["ip_busbw_GBps"])
    return measured


class Point(NamedTuple):
    """One comparable measurement: its source, size and ranks, measured busbw, run, collective and the
    algorithms its run forced (NCCL_ALGO); ``calibration``: a point a model constant is fitted on."""

    dataset: str
    tool: str
    size_bytes: float
    ranks: int
    measured_GBps: float
    run: Run
    op: str
    algorithms: tuple[str, ...]
    calibration: bool = False


def points(data: Path):
    """Every comparable measurement (``Point``)."""
    tables = [data / name for name in TABLES] + [PROJECT / "nccl_tests_tables.csv"]
    rows = [row for table in tables for row in csv.DictReader(open(table))]
    for row, measured in zip(rows, table_busbw(rows), strict=True):
        yield Point(row["test_id"], "nccl-tests", float(row["size_bytes"]), int(row["num_ranks"]), measured,
                    TABLE_RUNS[row["test_id"]], "all_reduce", TABLE_ALGORITHMS.get(row["test_id"], ()))
    for row in csv.DictReader(open(data / "nccl_busbw_summary_points.csv")):
        op = {"all-gather": "all_gather", "reduce-scatter": "reduce_scatter"}.get(row["collective"], "all_reduce")
        hw = summary_system(row)
        ranks = int(row["num_gpus"])
        sizes = [parse_size(s) for s in row["payload"].split("/")]
        values = [v for v in row["busbw_GBps"].replace("~", "").split("/") if v.strip()]
        if hw is None or not values:
            continue
        if None in sizes:  # "large", "(not stated)", "up to 1G": the plateau
            sizes = [16 * GiB]
        for size, value in zip(sizes, values):
            yield Point(row["dataset"], row["tool"], size, ranks, float(value.split("-")[0]), hw, op, ())
    yield from infiniband_points()


# The points ``perf/tree.py``'s CHANNEL_Bps is fitted on: NCCL_ALGO=Tree on two B200 nodes (gpu_id, algorithm,
# nodes). They stay in the tables and bands, and out of the InfiniBand goal's figures (``infiniband_clusters``).
CALIBRATION = (("b200", "tree", 2),)


def infiniband_points():
    """The project's multi-node InfiniBand points (nccl_busbw_infiniband.csv): each row names its catalog GPU,
    fabric and NICs per node, and the algorithm its run forced (NCCL_ALGO), which the prediction is held to."""
    for row in csv.DictReader(open(PROJECT / "nccl_busbw_infiniband.csv")):
        catalog = load_catalog()
        gbps = catalog.get("fabrics", row["fabric"]).link_rate_Bps * 8 / 1e9
        hw = system(row["gpu_id"], nics=int(row["nics_per_node"]), gbps=gbps, fabric=row["fabric"])
        algorithms = (row["algorithm"],) if row["algorithm"] else ()
        fitted = (row["gpu_id"], row["algorithm"], int(row["num_nodes"])) in CALIBRATION
        yield Point(row["dataset"], row["tool"], float(row["size_bytes"]), int(row["num_gpus"]),
                    float(row["busbw_GBps"]), hw, row["collective"], algorithms, fitted)


class Residual(NamedTuple):
    """One comparable point: its run and tool, regime inputs and the signed error of its time."""

    label: str
    gpu: str
    technology: str
    num_nodes: int
    size_bytes: float
    error: float                  # predicted / measured time - 1 = measured / predicted busbw - 1
    calibration: bool = False     # a point a model constant is fitted on (``CALIBRATION``)

    @property
    def busbw_error(self) -> float:
        """|predicted - measured| / measured of busbw."""
        return abs(1 / (1 + self.error) - 1)


def residuals(data: Path = DATA) -> tuple[Residual, ...]:
    """Every point with a measured bus bandwidth above the table's resolution, predicted (once per data folder:
    the tables, the goal, the before/after and the band table all read these)."""
    return _residuals(Path(data).resolve())


@functools.lru_cache(maxsize=4)
def _residuals(data: Path) -> tuple[Residual, ...]:
    out = []
    for point in points(data):
        if point.measured_GBps <= 0.005:  # printed as 0.00: below the table's resolution
            continue
        hw = point.run
        predicted = float(predict(point.op, np.array([point.size_bytes]), hw.system, point.ranks,
                                  algorithms=point.algorithms).busbw_GBps[0])
        out.append(Residual(label=f"{point.dataset} [{point.tool}]", gpu=hw.gpu, technology=hw.technology,
                            num_nodes=-(-point.ranks // hw.system.gpus_per_node), size_bytes=point.size_bytes,
                            error=point.measured_GBps / predicted - 1, calibration=point.calibration))
    return tuple(out)


def regime_of(point: Residual) -> tuple[str, ...]:
    return collective_regime(gpu=point.gpu, num_nodes=point.num_nodes, size_bytes=point.size_bytes)


def _cell(errors: list[float], count: bool = True) -> str:
    text = f"{statistics.median(errors):.1%} / {statistics.mean(errors):.1%}"
    return f"{text} ({len(errors)})" if count else text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rows", action="store_true", help="print every point")
    parser.add_argument("--write-baseline", metavar="MODEL",
                        help="save these residuals as the 'before' of later runs (MODEL: the commit they come from)")
    args = parser.parse_args(argv)
    errors: dict[str, list[tuple[float, float]]] = {}
    signed: dict[str, list[float]] = {}
    by_regime: list[tuple[tuple[str, ...], float]] = []
    every_point = residuals(args.data)
    for point in every_point:
        error = point.busbw_error
        errors.setdefault(point.label, []).append((point.size_bytes, error))
        signed.setdefault(point.label, []).append(point.error)
        if point.label.endswith("[nccl-tests]"):
            by_regime.append((regime_of(point), point.error))
        if args.rows:
            print(f"{point.label[:40]:40} {point.gpu:14} {point.num_nodes:4} {int(point.size_bytes):>12} "
                  f"time error {point.error:+7.1%}")
    print(f"{'run':58} {'n':>3} " + " ".join(f"{name:>20}" for name, _, _ in BANDS) + f" {'all':>14}")
    every = [e for values in errors.values() for e in values]
    for name, values in [*errors.items(), ("ALL RUNS", every),
                         ("ALL nccl-tests RUNS", [e for k, v in errors.items() if "[nccl-tests]" in k for e in v])]:
        cells = []
        for _, low, high in BANDS:
            band = [e for s, e in values if low <= s < high]
            cells.append(_cell(band) if band else "-")
        print(f"{name[:58]:58} {len(values):3} " + " ".join(f"{c:>20}" for c in cells)
              + f" {_cell([e for _, e in values], count=False):>14}")
    print("cells: median / mean of |predicted - measured| / measured of busbw (number of points)")
    print_infiniband(infiniband_clusters(every_point))
    print()
    print_summary("Signed error of the predicted time (predicted / measured - 1), per source", signed)
    print_regimes("... per regime (nccl-tests points, the band table's: GPU, span, message size)", by_regime)
    changes = changes_of(every_point)
    if args.write_baseline:
        print(f"baseline written: {baseline.write('collectives', changes, args.write_baseline)}")
    else:
        print_change(changes)
    return 0


class Cluster(NamedTuple):
    """One source's multi-node InfiniBand points at >= 64 MiB, as the goal counts them."""

    label: str
    errors: tuple[float, ...]     # |predicted - measured| / measured of busbw, calibration points left out
    most_nodes: int               # the most nodes of any of the source's points
    calibration: int              # its points at >= 64 MiB a model constant is fitted on, left out of ``errors``

    @property
    def median(self) -> float:
        return statistics.median(self.errors)


def infiniband_clusters(points: tuple[Residual, ...]) -> tuple[Cluster, ...]:
    """The issue's goal: multi-node InfiniBand busbw at >= 64 MiB, per cluster (source), in the points' order;
    the points a model constant is fitted on (``CALIBRATION``) are left out of it."""
    errors: dict[str, list[float]] = {}
    fitted: dict[str, int] = {}
    nodes: dict[str, int] = {}
    for p in points:
        nodes[p.label] = max(nodes.get(p.label, 0), p.num_nodes)
        if p.technology == "infiniband" and p.num_nodes > 1 and p.size_bytes >= 64 * MiB:
            if p.calibration:
                fitted[p.label] = fitted.get(p.label, 0) + 1
            else:
                errors.setdefault(p.label, []).append(p.busbw_error)
    return tuple(Cluster(label=label, errors=tuple(values), most_nodes=nodes[label],
                         calibration=fitted.get(label, 0)) for label, values in errors.items())


def print_infiniband(clusters: tuple[Cluster, ...]) -> None:
    """The goal per cluster and over them (``infiniband_clusters``)."""
    if not clusters:
        return
    print("multi-node InfiniBand busbw >= 64 MiB, |predicted - measured| / measured per cluster: "
          "median (max, points, most nodes)")
    for cluster in clusters:
        print(f"  {cluster.label[:62]:62} {cluster.median:6.1%} ({max(cluster.errors):5.1%}, "
              f"{len(cluster.errors):3}, {cluster.most_nodes:3})")
    every = [e for cluster in clusters for e in cluster.errors]
    fitted = sum(cluster.calibration for cluster in clusters)
    print(f"multi-node InfiniBand busbw >= 64 MiB: median |error| {statistics.median(every):.1%} over "
          f"{len(every)} points, median of the {len(clusters)} clusters' medians "
          f"{statistics.median([cluster.median for cluster in clusters]):.1%}, max {max(every):.1%} "
          f"(goal: median <= 15 %; the {fitted} points tree.CHANNEL_Bps is fitted on left out)")


def print_change(changes: list[tuple[str, str, str, float]], kinds: tuple[str, ...] = ("source", "regime")) -> None:
    """Before (the saved baseline) and after, per source and per regime: n, median signed error, max |error|."""
    title = f"Before ({baseline.header('collectives') or 'no baseline saved'}) and after: signed time error"
    titles = {baseline.SOURCE: f"{title}, per source", baseline.REGIME: f"{title}, per regime (nccl-tests points)"}
    baseline.print_change({kind: titles[kind] for kind in kinds}, changes, baseline.read("collectives"))


def changes_of(points: tuple[Residual, ...]) -> list[tuple[str, str, str, float]]:
    """(kind, group, point key, signed error) of every point (``residuals``), as ``main`` saves and compares
    them."""
    changes, count = [], {}
    for point in points:
        count[point.label] = count.get(point.label, 0) + 1
        key = f"#{count[point.label]} {point.num_nodes} nodes {int(point.size_bytes)} B"
        changes.append((baseline.SOURCE, point.label, key, point.error))
        if point.label.endswith("[nccl-tests]"):
            changes.append((baseline.REGIME, ", ".join(regime_of(point)), f"{point.label} {key}", point.error))
    return changes


if __name__ == "__main__":
    sys.exit(main())
