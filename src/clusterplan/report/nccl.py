"""The nccl-tests table: the layout people already read and parse, for predictions (and measurements)."""

from __future__ import annotations

from typing import Any, TextIO


def render_collectives(doc: dict[str, Any], stream: TextIO) -> None:
    """Predicted rows as an nccl-tests table; measured columns and the error when present."""
    group, rows = doc["group"], doc["rows"]
    measured = any(row.get("measured") for row in rows)
    write = stream.write
    write(f"# clusterplan collectives: {doc['op']} predicted on {group['num_gpus']} x {group['gpu']} "
          f"({group['num_nodes']} node{'s' if group['num_nodes'] > 1 else ''} x {group['gpus_per_node']}), "
          f"{group['fabric']} {group['topology']}\n")
    write("# model: NCCL-like choice of algorithm and protocol per size (docs/collectives.md)\n#\n")
    head = (f"# {'size':>10} {'count':>12} {'type':>8} {'redop':>6} {'root':>5} {'time':>10} {'algbw':>7} "
            f"{'busbw':>7} {'algorithm':>10} {'protocol':>8}")
    units = (f"# {'(B)':>10} {'(elements)':>12} {'':>8} {'':>6} {'':>5} {'(us)':>10} {'(GB/s)':>7} {'(GB/s)':>7}")
    if measured:
        head += f" {'measured':>10} {'busbw':>7} {'error':>7}"
        units += f" {'':>10} {'':>8} {'':>8} {'(us)':>10} {'(GB/s)':>7} {'':>7}"
    write(head + "\n" + units + "\n")
    for row in rows:
        line = (f"  {row['size_bytes']:>10} {row['count']:>12} {row['dtype']:>8} {doc['redop']:>6} "
                f"{doc['root']:>5} {row['time_s'] * 1e6:>10.2f} {row['algbw_GBps']:>7.2f} "
                f"{row['busbw_GBps']:>7.2f} {row['algorithm']:>10} {row['protocol']:>8}")
        if measured:
            m = row.get("measured")
            error = f"{row['error']:>+7.1%}" if row.get("error") is not None else f"{'-':>7}"
            line += (f" {m['time_s'] * 1e6:>10.2f} {m['busbw_GBps']:>7.2f} {error}" if m
                     else f" {'-':>10} {'-':>7} {'-':>7}")
        write(line + "\n")
    write(f"# Avg bus bandwidth    : {doc['avg_busbw_GBps']:.3f} (predicted)\n")
    write(f"# Stragglers: a synchronous step of {group['num_gpus']} ranks waits "
          f"{group['straggler_slowdown']:.1%} longer on average (per-rank jitter cv {group['jitter_cv']:.0%})\n")
    if measured:
        write(f"# Measured rows: {doc['measured']['rows']} matched from {doc['measured']['source']}; "
              f"mean |error| of busbw {doc['measured']['mean_abs_error']:.1%}\n")
    write("#\n")
