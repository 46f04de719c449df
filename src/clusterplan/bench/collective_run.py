"""One run of ``bench collectives``: join the job's process group, warm up, time, check, combine, leave.

Every rank runs the same sizes in the same order (docs/bench.md): all sizes
are warmed up first, then each size is timed out-of-place and then in-place
after a barrier (``bench.timing.time_calls``), then checked in an untimed pass.
A collective, rendezvous or barrier that fails because another rank died or
hung becomes a ``PeerFailure`` naming this rank and what it was doing.
``torch`` is imported inside the functions that need it.
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import re
import socket
from typing import Any

from clusterplan.bench.collective_calls import (all_gather_function, collective_call, count_wrong,
                                                has_reduce_scatter, placement_views, reduce_scatter_function,
                                                synchronize)
from clusterplan.bench.collectives import (IN_PLACE, PLACEMENTS, REDUCING, BenchConfig, BenchRun, Group, RankInfo,
                                           Row, buffer_elements, combine, rows_for, timing)
from clusterplan.bench.fp8 import torch_collective_problem
from clusterplan.bench.launch import Launch
from clusterplan.bench.timing import Progress, time_calls
from clusterplan.errors import ClusterplanError, ConfigError

NOTES = {
    "in_place_only": "torch.distributed has only in-place {op}: out-of-place times the same call on a separate "
                     "receive buffer (the input is copied there, untimed, for the check)",
    "broadcast": "out-of-place broadcast: the root sends its send buffer, the others receive into their "
                 "receive buffer",
    "no_in_place": "in-place {op} is not run: the receive would overwrite data still being sent",
    "emulated": "the {backend} backend has no reduce_scatter: emulated as all_reduce of the whole buffer plus "
                "a slice, so the time is an all_reduce's while busbw uses reduce_scatter's factor (n-1)/n",
}


class PeerFailure(RuntimeError, ClusterplanError):
    """A collective, the rendezvous or a barrier failed: another rank died, hung or never started."""

    def __init__(self, *, rank: int, host: str, during: str, detail: str):
        super().__init__(f"rank {rank} on {host}: a peer died or hung during {during}; stopped ({detail})")
        self.rank, self.host, self.during, self.detail = rank, host, during, detail


class _Tracker:
    """What the run is doing now (named in a failure) and the progress callback."""

    def __init__(self, progress: Progress | None):
        self.during, self.progress = "start-up", progress

    def enter(self, during: str, done: int = 0, total: int = 0) -> None:
        self.during = during
        if self.progress:
            self.progress(done, total, during)


def resolve_backend(backend: str, local_rank: int) -> tuple[str, str]:
    """(backend, device): auto is nccl on cuda:LOCAL_RANK when CUDA is there, else gloo on the CPU."""
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available()
    if backend == "auto":
        backend = "nccl" if cuda and dist.is_nccl_available() else "gloo"
    if backend == "gloo":
        if not dist.is_gloo_available():
            raise ConfigError("this torch build has no gloo backend", key="--backend")
        return "gloo", "cpu"
    if not (cuda and dist.is_nccl_available()):
        raise ConfigError("nccl needs CUDA and a torch build with NCCL; use --backend gloo", key="--backend")
    visible = torch.cuda.device_count()
    if local_rank >= visible:
        raise ConfigError(f"local rank {local_rank} has no CUDA device of its own ({visible} visible); start one "
                          "rank per GPU, or use --backend gloo", key="--backend")
    return "nccl", f"cuda:{local_rank}"


def run_benchmark(config: BenchConfig, launch: Launch, *, progress: Progress | None = None) -> BenchRun:
    """Join the job's process group, measure, leave. ``PeerFailure`` if another rank fails.

    ``progress`` is called on every rank with (row, rows, what the run is doing); 0 rows while no
    size is being worked on.
    """
    import torch
    import torch.distributed as dist

    backend, device_name = resolve_backend(config.backend, launch.local_rank)
    device = torch.device(device_name)
    if config.dtype == "f8e4m3":    # every rank says it, before the rendezvous
        problem = torch_collective_problem(torch, config.op, backend, device)
        if problem:
            raise ConfigError(problem, key="-d")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    rows = rows_for(config, launch.world_size)
    host = socket.gethostname()
    tracker = _Tracker(progress)
    tracker.enter(f"the rendezvous of {launch.world_size} ranks at {launch.master_addr}:{launch.master_port} "
                  f"(were all {launch.world_size} started?)" if launch.world_size > 1 else "the start-up")
    try:
        _join(dist, backend, launch, device, datetime.timedelta(seconds=config.timeout_s))
        tracker.enter("the exchange of host names")
        ranks = _gather_ranks(dist, launch, host, device)
        group = Group(rank=launch.rank, world_size=launch.world_size, backend=backend, device=device)
        measured, notes = measure(config, group, rows, tracker=tracker)
    except (RuntimeError, OSError) as error:   # torch's DistError, gloo's and the store's errors
        _leave(dist)
        raise PeerFailure(rank=launch.rank, host=host, during=tracker.during, detail=_first_line(error)) from None
    except BaseException:   # Ctrl-C (exit 130), a buffer too large for memory (exit 2), ...
        _leave(dist)
        raise
    dist.destroy_process_group()
    return BenchRun(config=config, backend=backend, ranks=ranks, rows=measured, notes=notes,
                    versions=_versions(backend))


def _join(dist: Any, backend: str, launch: Launch, device: Any, timeout: datetime.timedelta) -> None:
    """Initialise the default process group: a store of one, or the launcher's rendezvous."""
    device_id = {"device_id": device} if device.type == "cuda" else {}
    if launch.world_size == 1:
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1, timeout=timeout, **device_id)
    else:
        dist.init_process_group(backend, init_method=launch.init_method, rank=launch.rank,
                                world_size=launch.world_size, timeout=timeout, **device_id)


def measure(config: BenchConfig, group: Group, rows: list[tuple[int, int]], *, tracker: _Tracker | None = None,
            emulate_reduce_scatter: bool | None = None) -> tuple[tuple[Row, ...], tuple[str, ...]]:
    """Warm up, time, check and combine over ranks, in an initialised process group."""
    import torch
    import torch.distributed as dist

    tracker = tracker or _Tracker(None)
    op, n, rank, device = config.op, group.world_size, group.rank, group.device
    dtype = torch_dtype(torch, config.dtype)
    if config.dtype == "f8e4m3" and op in REDUCING:
        tracker.enter(f"an fp8 {op} probe")
        _probe_fp8(op, dist, group)
    send, recv = _buffers(config, group, rows, dtype)
    notes = _notes(op, group.backend)
    if op == "reduce_scatter":
        if emulate_reduce_scatter is None:
            tracker.enter("a reduce_scatter probe")
            emulate_reduce_scatter = not has_reduce_scatter(dist, device, dtype)
        if emulate_reduce_scatter:
            notes.append(NOTES["emulated"].format(backend=group.backend))
    call = collective_call(op, dist, rank, n, emulated=bool(emulate_reduce_scatter), group=group.process_group)
    where = {"group": group.process_group} if group.process_group is not None else {}
    placements = PLACEMENTS if op in IN_PLACE else PLACEMENTS[:1]

    for number, (size, count) in enumerate(rows):
        tracker.enter(f"the warm-up of {op} {size} B", number, len(rows))
        source, target = placement_views(op, "out_of_place", send, recv, rank, n, count)
        for _ in range(config.warmup):
            call(source, target)
    synchronize(device)
    times = torch.full((len(rows), 2), math.nan, dtype=torch.float64)
    for number, (size, count) in enumerate(rows):
        for column, placement in enumerate(placements):
            tracker.enter(f"{op} {size} B {placement.replace('_', '-')}", number, len(rows))
            source, target = placement_views(op, placement, send, recv, rank, n, count)
            dist.barrier(**where)
            times[number, column] = time_calls(lambda: call(source, target), config.iterations, device=device)
    wrong = torch.zeros((len(rows), 2), dtype=torch.int64)
    if config.check:
        for number, (size, count) in enumerate(rows):
            for column, placement in enumerate(placements):
                tracker.enter(f"the check of {op} {size} B {placement.replace('_', '-')}", number, len(rows))
                wrong[number, column] = count_wrong(op, placement, call, send, recv, group, count, config.dtype)
    tracker.enter("the combination of results over ranks")
    per_rank, wrong = _over_ranks(dist, times, wrong, group)
    return _combined(config, rows, per_rank, wrong, n, len(placements)), tuple(notes)


def torch_dtype(torch: Any, name: str) -> Any:
    """The torch element type of nccl-tests' type name."""
    return {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16,
            "f8e4m3": getattr(torch, "float8_e4m3fn", None)}[name]


def _probe_fp8(op: str, dist: Any, group: Group) -> None:
    """One untimed call of ``op`` on one fp8 element per rank: some torch builds refuse fp8 reductions.

    torch checks the type on each rank before any NCCL call, so every rank refuses alike (exit 2).
    """
    import torch

    where = {"group": group.process_group} if group.process_group is not None else {}
    n = group.world_size
    probe = torch.zeros(n, dtype=torch.float8_e4m3fn, device=group.device)
    try:
        if op == "all_reduce":
            dist.all_reduce(probe, **where)
        elif op == "reduce":
            dist.reduce(probe, dst=0, **where)
        else:
            reduce_scatter_function(dist)(probe[:1].clone(), probe, **where)
        synchronize(group.device)
    except RuntimeError as error:
        if re.search(r"float8|fp8|not supported|unsupported|invalid argument", str(error), re.IGNORECASE):
            raise ConfigError(f"fp8 {op} is not supported by {group.backend} in this torch "
                              f"({_first_line(error)})", key="-d") from None
        raise


def _buffers(config: BenchConfig, group: Group, rows: list[tuple[int, int]], dtype: Any) -> tuple[Any, Any]:
    """The send and receive buffers of the largest size; too large for memory is bad input (-e)."""
    import torch

    send_max, recv_max = buffer_elements(config.op, max(count for _, count in rows), group.world_size)
    try:
        return (torch.zeros(send_max, dtype=dtype, device=group.device),
                torch.zeros(recv_max, dtype=dtype, device=group.device))
    except RuntimeError as error:  # torch.OutOfMemoryError on a GPU, an allocator error on the CPU
        raise ConfigError(f"cannot allocate {send_max + recv_max} {config.dtype} elements on {group.device} "
                          f"({_first_line(error)})", key="-e") from None


def _combined(config: BenchConfig, rows: list[tuple[int, int]], per_rank: Any, wrong: Any, n: int,
              num_placements: int) -> tuple[Row, ...]:
    """One ``Row`` per size: every rank's time combined by ``config.average``, the wrong counts summed."""
    result = []
    for number, (size, count) in enumerate(rows):
        measured = [timing(config.op, size, combine(per_rank[:, number, column].tolist(), config.average), n,
                           int(wrong[number, column]) if config.check else None)
                    for column in range(num_placements)]
        result.append(Row(size_bytes=size, count=count, out_of_place=measured[0],
                          in_place=measured[1] if len(measured) > 1 else None))
    return tuple(result)


def _leave(dist: Any) -> None:
    """Destroy the process group after a failure: left to the interpreter's exit, gloo's threads abort it."""
    if dist.is_initialized():
        try:
            dist.destroy_process_group()
        except (RuntimeError, OSError):
            pass   # the peers are gone or stopping too


def _gather_ranks(dist: Any, launch: Launch, host: str, device: Any) -> tuple[RankInfo, ...]:
    import torch

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else (platform.processor() or "CPU")
    mine = RankInfo(rank=launch.rank, host=host, pid=os.getpid(), local_rank=launch.local_rank,
                    device=str(device), device_name=name)
    gathered: list = [None] * launch.world_size
    dist.all_gather_object(gathered, mine)
    return tuple(gathered)


def _notes(op: str, backend: str) -> list[str]:
    if op in ("all_reduce", "reduce"):
        return [NOTES["in_place_only"].format(op=op)]
    if op == "broadcast":
        return [NOTES["broadcast"]]
    if op in ("alltoall", "sendrecv"):
        return [NOTES["no_in_place"].format(op=op)]
    return []


def _over_ranks(dist: Any, times: Any, wrong: Any, group: Group) -> tuple[Any, Any]:
    """Every rank's times ([rank, row, placement]) and the wrong counts summed over ranks."""
    import torch

    device = group.device
    where = {"group": group.process_group} if group.process_group is not None else {}
    local = times.flatten().to(device)
    everyone = torch.empty(local.numel() * group.world_size, dtype=local.dtype, device=device)
    all_gather_function(dist)(everyone, local, **where)
    total = wrong.to(device)
    dist.all_reduce(total, **where)
    return everyone.cpu().reshape(group.world_size, *times.shape), total.cpu()


def _versions(backend: str) -> tuple[tuple[str, str], ...]:
    import torch

    versions = [("torch", torch.__version__), ("python", platform.python_version())]
    if backend == "nccl":
        version = torch.cuda.nccl.version()
        versions.append(("nccl", ".".join(map(str, version)) if isinstance(version, tuple) else str(version)))
    return tuple(versions)


def _first_line(error: BaseException) -> str:
    """The first meaningful line of a torch error, without gloo's ``[file.cc:123]`` prefix."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
    line = re.sub(r"^\[[^\]]*\.(?:cc|cpp|h|hpp):\d+\]\s*", "", lines[0])
    line = line.split(". This is typically", 1)[0]   # gloo's generic advice after the fact
    return line if len(line) <= 200 else line[:197] + "..."
