"""``clusterplan bench memcpy``: copy bandwidth between host and device memory, in GB/s (1e9 B/s).

bandwidth = bytes copied / time of one copy, the mean over ``iterations``
after ``warmup``; a device-to-device copy reads and writes each byte, so it
moves twice that through HBM (the convention of NVIDIA's bandwidthTest and
nvbandwidth). On CUDA: host-to-device and device-to-host from pinned and from
pageable host memory, device-to-device, and host-to-host; without CUDA only
host-to-host runs, and the result says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.bench.gemm import Device, describe, device_table, resolve_device
from clusterplan.bench.timing import Progress, time_calls
from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN
from clusterplan.units import format_size

SCHEMA = "clusterplan.memcpy/1"
GPU_SIZES = (1 << 20, 16 << 20, 256 << 20, 1 << 30)
CPU_SIZES = (1 << 20, 16 << 20, 64 << 20)
GPU_ITERATIONS, GPU_WARMUP = 20, 3
CPU_ITERATIONS, CPU_WARMUP = 5, 1
MAX_SIZE = 1 << 36
NO_GPU_NOTE = "no CUDA device: host-to-device, device-to-host and device-to-device copies need a GPU; " \
              "measured host-to-host only"
CPU_CHOSEN_NOTE = "--device cpu: measured host-to-host only; drop it to measure the GPU's copies"
# (direction, host memory): the copies a CUDA device gets, in the order printed
CUDA_COPIES = (("h2d", "pinned"), ("h2d", "pageable"), ("d2h", "pinned"), ("d2h", "pageable"),
               ("d2d", ""), ("h2h", "pageable"))
CPU_COPIES = (("h2h", "pageable"),)
LABELS = {"h2d": "host-to-device", "d2h": "device-to-host", "d2d": "device-to-device", "h2h": "host-to-host"}


@dataclass(**FROZEN)
class Copy:
    """One measured copy: direction, host memory ("pinned", "pageable", or "" for d2d), size and time."""

    direction: str
    host_memory: str
    size_bytes: int
    time_s: float

    @property
    def bandwidth_Bps(self) -> float:
        return self.size_bytes / self.time_s if self.time_s > 0 else 0.0


@dataclass(**FROZEN)
class MemcpyResult:
    device: Device
    copies: tuple[Copy, ...]
    iterations: int
    warmup: int
    device_copies: bool
    note: str = ""


def check_request(sizes: Sequence[int], iterations: int, warmup: int) -> None:
    bad = [s for s in sizes if not 0 < s <= MAX_SIZE]
    if not sizes or bad:
        raise ConfigError(f"sizes must be between 1 byte and 64G, got {bad or 'none'}", key="--sizes")
    if iterations < 1 or warmup < 0:
        raise ConfigError(f"need iterations >= 1 and warm-up >= 0, got {iterations} and {warmup}", key="-n/-w")


def measure_memcpy(*, sizes: Sequence[int] | None = None, iterations: int | None = None,
                   warmup: int | None = None, device: str = "auto",
                   progress: Progress | None = None) -> MemcpyResult:
    """Every copy kind the device offers at every size; ``None`` arguments take the GPU or CPU defaults."""
    import torch

    target = resolve_device(torch, device)
    cuda = target.type == "cuda"
    sizes = sizes if sizes is not None else GPU_SIZES if cuda else CPU_SIZES
    iterations = iterations if iterations is not None else GPU_ITERATIONS if cuda else CPU_ITERATIONS
    warmup = warmup if warmup is not None else GPU_WARMUP if cuda else CPU_WARMUP
    check_request(sizes, iterations, warmup)
    kinds = CUDA_COPIES if cuda else CPU_COPIES
    copies, total = [], len(kinds) * len(sizes)
    for direction, memory in kinds:
        for size in sizes:
            if progress:
                progress(len(copies), total, f"{direction} {memory} {format_size(size)}")
            time_s = time_copy(torch, direction, memory, size, iterations, warmup, target)
            copies.append(Copy(direction=direction, host_memory=memory, size_bytes=size, time_s=time_s))
    if progress:
        progress(total, total, "done")
    return MemcpyResult(device=describe(torch, target), copies=tuple(copies), iterations=iterations, warmup=warmup,
                        device_copies=cuda,
                        note="" if cuda else CPU_CHOSEN_NOTE if torch.cuda.is_available() else NO_GPU_NOTE)


def _buffers(torch: Any, direction: str, memory: str, size: int, device: Any) -> tuple[Any, Any]:
    host = {"pin_memory": memory == "pinned"}
    if direction == "h2d":
        return torch.empty(size, dtype=torch.uint8, **host).fill_(1), torch.empty(size, dtype=torch.uint8,
                                                                                  device=device)
    if direction == "d2h":
        return torch.ones(size, dtype=torch.uint8, device=device), torch.empty(size, dtype=torch.uint8, **host)
    where = {"device": device} if direction == "d2d" else {}
    return torch.ones(size, dtype=torch.uint8, **where), torch.empty(size, dtype=torch.uint8, **where).fill_(0)


def time_copy(torch: Any, direction: str, memory: str, size: int, iterations: int, warmup: int,
              device: Any) -> float:
    """Mean seconds of one ``dst.copy_(src)``: CUDA events when a GPU is involved, else the wall clock."""
    src, dst = _buffers(torch, direction, memory, size, device)
    asynchronous = memory == "pinned"
    return time_calls(lambda: dst.copy_(src, non_blocking=asynchronous), iterations, warmup=warmup,
                      device=device if direction != "h2h" else None)


def best_bandwidth(result: MemcpyResult, direction: str, memory: str) -> float | None:
    """The highest bandwidth of one copy kind over the sizes measured."""
    values = [c.bandwidth_Bps for c in result.copies if c.direction == direction and c.host_memory == memory]
    return max(values, default=None)


def memcpy_document(result: MemcpyResult) -> dict[str, Any]:
    """The result as ``clusterplan.memcpy/1`` (docs/health.md)."""
    rows = [{"direction": c.direction, "host_memory": c.host_memory or None, "size_bytes": c.size_bytes,
             "time_s": c.time_s, "bandwidth_GBps": c.bandwidth_Bps / 1e9} for c in result.copies]
    kinds = dict.fromkeys((c.direction, c.host_memory) for c in result.copies)
    best = [{"direction": d, "host_memory": m or None, "bandwidth_GBps": best_bandwidth(result, d, m) / 1e9}
            for d, m in kinds]
    return {"schema": SCHEMA, "version": __version__, "device": device_table(result.device),
            "iterations": result.iterations, "warmup": result.warmup, "device_copies": result.device_copies,
            "note": result.note or None, "rows": rows, "best": best}


def render_memcpy(doc: Mapping[str, Any], stream: TextIO) -> None:
    """The document as a fixed-width table: one row per copy kind and size."""
    write = stream.write
    device = doc["device"]
    where = f"{device['name']} (cuda:{device['index']})" if device["kind"] == "cuda" else \
        f"CPU {device['name']} ({device['num_threads']} threads)"
    write(f"# clusterplan bench memcpy: {where}, {doc['iterations']} iterations after {doc['warmup']} warm-up\n")
    write("# bandwidth = bytes copied / time, GB/s = 1e9 B/s\n")
    if doc["note"]:
        write(f"# {doc['note']}\n")
    write(f"#\n# {'copy':<18} {'host memory':<11} {'size':>6} {'time (us)':>11} {'GB/s':>8}\n")
    for row in doc["rows"]:
        write(f"  {LABELS[row['direction']]:<18} {row['host_memory'] or '-':<11} {format_size(row['size_bytes']):>6} "
              f"{row['time_s'] * 1e6:>11.1f} {row['bandwidth_GBps']:>8.2f}\n")
    best = "; ".join(f"{LABELS[b['direction']]}{' ' + b['host_memory'] if b['host_memory'] else ''} "
                     f"{b['bandwidth_GBps']:.2f}" for b in doc["best"])
    write(f"# Best GB/s: {best}\n")
