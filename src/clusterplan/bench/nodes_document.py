"""The ``clusterplan.nodes/1`` document of a ``bench nodes`` run and its table (docs/health.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.bench import health
from clusterplan.bench.nodes import NodeMeasurement, NodesResult
from clusterplan.units import format_size

SCHEMA = "clusterplan.nodes/1"


def _finite(value: float | None) -> float | None:
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
    write(f"# checks: {gemm['dtype']} GEMM {gemm['m']}^3, memcpy {format_size(checks['memcpy_bytes'])}, all_reduce "
          f"{format_size(checks['all_reduce_bytes'])} float32, {checks['iterations']} iterations after "
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
