"""The nccl-tests table: the layout people already read and parse, for predictions (and measurements)."""

from __future__ import annotations

from typing import Any, TextIO

from clusterplan.report.bands import band_phrase


def render_collectives(doc: dict[str, Any], stream: TextIO) -> None:
    """Predicted rows as an nccl-tests table; measured columns and the error when present."""
    group, rows = doc["group"], doc["rows"]
    measured = any(row.get("measured") for row in rows)
    write = stream.write
    write(f"# clusterplan collectives: {doc['op']} predicted on {group['num_gpus']:,} x {group['gpu']} "
          f"({group['num_nodes']:,} node{'s' if group['num_nodes'] > 1 else ''} x {group['gpus_per_node']}"
          + (f", {group['num_nvlink_domains']:,} NVLink domain{'s' if group['num_nvlink_domains'] > 1 else ''} of "
             f"{group['nvlink_domain_gpus']}" if "nvlink_domain_gpus" in group else "") + "), "
          f"{group['fabric']} {group['topology']}\n")
    write("# model: NCCL-like choice of algorithm and protocol per size (docs/collectives.md)\n#\n")
    head = (f"# {'size':>10} {'count':>12} {'type':>8} {'redop':>6} {'root':>5} {'time':>10} {'algbw':>7} "
            f"{'busbw':>7} {'algorithm':>10} {'protocol':>8}")
    units = (f"# {'(B)':>10} {'(elements)':>12} {'':>8} {'':>6} {'':>5} {'(us)':>10} {'(GB/s)':>7} {'(GB/s)':>7}")
    banded = any("time_s_low" in row for row in rows)
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
    if banded:
        write("# Evidence (docs/evidence.md): where published runs of each regime measured, as multiples of the "
              "predicted time\n")
        out_of_domain = bool(doc.get("warning"))
        for regime, (low, high, n) in _evidence(rows).items():
            phrase = band_phrase(1.0, low, high, lambda v: f"x {v:.2f}", out_of_domain=out_of_domain)
            write(f"#   {regime} (n={n}): {phrase}\n")
    if doc.get("warning"):
        write(f"# Warning: {doc['warning']}\n")
    if measured:
        write(f"# Measured rows: {doc['measured']['rows']} matched from {doc['measured']['source']}; "
              f"mean |error| of busbw {doc['measured']['mean_abs_error']:.1%}\n")
    write("#\n")


def _evidence(rows: list[dict[str, Any]]) -> dict[str, tuple[float, float, int]]:
    """Each regime of the rows: its time range as multiples of the predicted time, and its n."""
    return {row["regime"]: (row["time_s_low"] / row["time_s"], row["time_s_high"] / row["time_s"], row["regime_n"])
            for row in rows if row["time_s"] > 0}


def render_bench(doc: dict[str, Any], stream: TextIO) -> None:
    """A ``clusterplan.bench/1`` document as nccl-tests prints it: header, rows, footer (docs/bench.md).

    The rows use nccl-tests' own formats (``%12li  %12li  %8s  %6s  %6s`` and per placement
    ``%7s  %6.2f  %6.2f  %5s``), so ``bench.nccltests.parse_nccl_tests`` reads the table back.
    """
    write = stream.write
    op, rows, config = doc.get("op") or "", doc["rows"], doc.get("config") or {}
    binary = f"{op}_perf"
    versions = ", ".join(f"{name} {value}" for name, value in (doc.get("versions") or {}).items())
    write(f"# clusterplan {doc.get('version', '')} bench collectives (torch.distributed, "
          f"{doc.get('backend') or '?'} backend; {versions})\n")
    write(f"# Collective test starting: {binary}\n")
    if config:
        step = (f"{config['step_bytes']}(bytes)" if config["step_bytes"] > 0 else f"{config['step_factor']:g}(factor)")
        write(f"# nThread 1 nGpus 1 minBytes {config['min_bytes']} maxBytes {config['max_bytes']} step: {step} "
              f"warmup iters: {config['warmup']} iters: {config['iterations']} agg iters: 1 "
              f"validation: {int(config['check'])} graph: 0\n")
    ranks = doc.get("ranks") or []
    devices: dict[str, int] = {}
    for info in ranks:
        devices[info["device_name"]] = devices.get(info["device_name"], 0) + 1
    average = doc.get("average") or {}
    write(f"# ranks: {doc.get('world_size')}  hosts: {doc.get('num_nodes')}  devices: "
          f"{', '.join(f'{count} x {name}' for name, count in devices.items()) or '?'}"
          + (f"  time per call: -a {average['mode']} ({average['meaning']})" if average else "") + "\n")
    if ranks:
        write("#\n# Using devices\n")
        for info in ranks:
            write(f"#  Rank {info['rank']:>2} Group  0 Pid {info['pid']:>6} on {info['host']:>10} device "
                  f"{info['local_rank']:>2} [{info['device']}] {info['device_name']}\n")
    for note in doc.get("notes") or []:
        write(f"# note: {note}\n")
    write("#\n")
    write(f"# {'':>10}  {'':>12}  {'':>8}  {'':>6}  {'':>6}           out-of-place                       in-place\n")
    group = f"  {'time':>7}  {'algbw':>6}  {'busbw':>6} {'#wrong':>6}"
    write(f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}{group}{group}\n")
    units = f"  {'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6} {'':>6}"
    write(f"# {'(B)':>10}  {'(elements)':>12}  {'':>8}  {'':>6}  {'':>6}{units}{units}\n")
    for row in rows:
        root = -1 if row.get("root") is None else row["root"]
        line = (f"{row['size_bytes']:>12}  {row['count']:>12}  {row['dtype']:>8}  {row.get('redop') or 'none':>6}  "
                f"{root:>6}")
        for placement in (row["out_of_place"], row.get("in_place")):
            if placement is not None:
                line += _bench_placement(placement)
        write(line + "\n")
    wrong = doc.get("wrong")
    write(f"# {'Out of bounds values':<20} : {'N/A' if wrong is None else wrong} "
          f"{'' if wrong is None else ('OK' if wrong == 0 else 'FAILED')}".rstrip() + "\n")
    write(f"# {'Avg bus bandwidth':<20} : {doc.get('avg_busbw_GBps') or 0.0:g}\n")
    write("#\n")
    write(f"# Collective test concluded: {binary}\n")


def _bench_placement(placement: dict[str, Any]) -> str:
    """``  %7s  %6.2f  %6.2f  %5s`` with nccl-tests' time format (2, 1 or 0 decimals by magnitude)."""
    us = placement["time_s"] * 1e6
    time = f"{us:7.0f}" if us >= 10000 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"
    wrong = "N/A" if placement.get("wrong") is None else str(placement["wrong"])
    return f"  {time:>7}  {placement['algbw_GBps']:6.2f}  {placement['busbw_GBps']:6.2f}  {wrong:>5}"
