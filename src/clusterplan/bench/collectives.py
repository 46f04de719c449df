"""nccl-tests on torch.distributed: time one collective over a sweep of sizes (docs/bench.md).

The method is nccl-tests' (``src/common.cu``): every size is warmed up first
(``warmup`` calls), then each size is timed out-of-place and then in-place
(``iterations`` back-to-back calls with no barrier in between; CUDA events on a
GPU, ``perf_counter`` on a CPU, where gloo calls return when done). Each rank's
time per call is combined across ranks by ``average`` (0 rank 0, 1 mean,
2 min, 3 max), and algbw = S / t, busbw = algbw x ``bus_factor(op, n)``, with
S the size nccl-tests prints (``element_count``). The correctness check is a
separate, untimed pass on inputs whose exact result is known (small integers,
exact in every type), counting wrong elements per placement over all ranks.

``torch`` is imported inside the functions that need it.
"""

from __future__ import annotations

import math
import os
import platform
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from clusterplan.bench.launch import Launch
from clusterplan.errors import ClusterplanError, ConfigError
from clusterplan.perf.collectives import DTYPE_BYTES, OPS, bus_factor, element_count, size_sweep
from clusterplan.schema import FROZEN

BENCH_DTYPES = ("float", "half", "bfloat16")
BACKENDS = ("auto", "nccl", "gloo")
AVERAGE_MODES = {0: "rank 0", 1: "mean over ranks", 2: "min over ranks", 3: "max over ranks"}
REDUCING = ("all_reduce", "reduce_scatter", "reduce")
ROOTED = ("broadcast", "reduce")
IN_PLACE = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
PLACEMENTS = ("out_of_place", "in_place")
ROOT = 0
EXACT_INTEGERS = {"float": 2**24, "half": 2**11, "bfloat16": 2**8}  # every integer up to this is exact
COPY_MODULUS, COPY_STRIDE = 251, 37   # inputs of the ops that only move data: (i + 37 rank) % 251
CHUNK = 1 << 22                        # elements filled or checked at a time (bounds check memory)
MAX_ROWS = 10_000

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


@dataclass(**FROZEN)
class BenchConfig:
    """What to run: nccl-tests' options (-b -e -f -i -n -w -c -d -a) plus backend and timeout."""

    op: str = "all_reduce"
    min_bytes: int = 32 * 2**20
    max_bytes: int = 32 * 2**20
    step_factor: float = 2.0
    step_bytes: int = 0
    iterations: int = 20
    warmup: int = 5
    check: bool = True
    dtype: str = "float"
    average: int = 1
    backend: str = "auto"
    timeout_s: float = 300.0

    def __post_init__(self) -> None:
        checks = (
            (self.op in OPS, "--op", f"unknown collective {self.op!r}; expected one of {', '.join(OPS)}"),
            (self.dtype in BENCH_DTYPES, "-d", f"unknown type {self.dtype!r}; expected {', '.join(BENCH_DTYPES)}"),
            (self.iterations >= 1, "-n", f"iterations must be at least 1, got {self.iterations}"),
            (self.warmup >= 0, "-w", f"warm-up iterations must not be negative, got {self.warmup}"),
            (self.average in AVERAGE_MODES, "-a", f"must be 0 (rank 0), 1 (mean), 2 (min) or 3 (max), "
                                                  f"got {self.average}"),
            (self.backend in BACKENDS, "--backend", f"must be one of {', '.join(BACKENDS)}, got {self.backend!r}"),
            (self.timeout_s > 0 and math.isfinite(self.timeout_s), "--timeout",
             f"must be a positive number of seconds, got {self.timeout_s:g}"),
        )
        for ok, key, message in checks:
            if not ok:
                raise ConfigError(message, key=key)
        try:
            sizes = size_sweep(self.min_bytes, self.max_bytes, factor=self.step_factor, increment=self.step_bytes)
        except ValueError as error:
            raise ConfigError(str(error), key="-b/-e/-f/-i") from None
        if len(sizes) > MAX_ROWS:
            raise ConfigError(f"{len(sizes)} sizes; use a larger -f or -i", key="-f/-i")

    @property
    def sizes(self) -> list[int]:
        return size_sweep(self.min_bytes, self.max_bytes, factor=self.step_factor, increment=self.step_bytes)


@dataclass(**FROZEN)
class Timing:
    """One placement of one size, combined over the ranks."""

    time_s: float
    algbw_GBps: float
    busbw_GBps: float
    wrong: int | None   # wrong elements summed over the ranks; None when the check is off


@dataclass(**FROZEN)
class Row:
    size_bytes: int     # S as nccl-tests prints it
    count: int          # elements as nccl-tests prints them (per rank for all_gather, reduce_scatter, alltoall)
    out_of_place: Timing
    in_place: Timing | None


@dataclass(**FROZEN)
class RankInfo:
    rank: int
    host: str
    pid: int
    local_rank: int
    device: str         # "cpu", "cuda:0"
    device_name: str


@dataclass(**FROZEN)
class BenchRun:
    """What one run measured, identical on every rank."""

    config: BenchConfig
    backend: str
    ranks: tuple[RankInfo, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...]
    versions: tuple[tuple[str, str], ...]

    @property
    def world_size(self) -> int:
        return len(self.ranks)

    @property
    def hosts(self) -> list[str]:
        """Distinct hostnames in the order of their first rank."""
        return list(dict.fromkeys(info.host for info in self.ranks))

    @property
    def wrong(self) -> int | None:
        if not self.config.check:
            return None
        return sum(t.wrong or 0 for row in self.rows for t in (row.out_of_place, row.in_place) if t)

    @property
    def avg_busbw_GBps(self) -> float:
        """nccl-tests' footer: the mean busbw over every size and placement timed."""
        values = [t.busbw_GBps for row in self.rows for t in (row.out_of_place, row.in_place) if t]
        return sum(values) / len(values) if values else 0.0


# --- pure parts --------------------------------------------------------------------------

def rows_for(config: BenchConfig, num_ranks: int) -> list[tuple[int, int]]:
    """(S, printed count) per size, as nccl-tests rounds them; sizes below one element per rank are left out."""
    rounded = [element_count(config.op, size, config.dtype, num_ranks) for size in config.sizes]
    rows = [(size, count) for size, count in rounded if count > 0]
    if not rows:
        raise ConfigError(f"every size is below one {config.dtype} ({DTYPE_BYTES[config.dtype]} B) per rank "
                          f"for {config.op} on {num_ranks} ranks", key="-b")
    return rows


def buffer_elements(op: str, count: int, num_ranks: int) -> tuple[int, int]:
    """(send, receive) elements of one call for the printed ``count``, as nccl-tests allocates them."""
    if op == "all_gather":
        return count, count * num_ranks
    if op == "reduce_scatter":
        return count * num_ranks, count
    if op == "alltoall":
        return count * num_ranks, count * num_ranks
    return count, count


def combine(per_rank: list[float], mode: int) -> float:
    """Rank times combined as nccl-tests -a: 0 rank 0's, 1 the mean, 2 the min, 3 the max."""
    if mode == 0:
        return per_rank[0]
    return {1: lambda v: sum(v) / len(v), 2: min, 3: max}[mode](per_rank)


def timing(op: str, size_bytes: int, time_s: float, num_ranks: int, wrong: int | None) -> Timing:
    """algbw = S / t in GB/s (1e9 B/s), busbw = algbw x nccl-tests' factor."""
    algbw = size_bytes / time_s / 1e9 if time_s > 0 else 0.0
    return Timing(time_s=time_s, algbw_GBps=algbw, busbw_GBps=algbw * bus_factor(op, num_ranks), wrong=wrong)


def modulus(num_ranks: int, dtype: str) -> int:
    """Inputs of reducing ops are (i + rank) % m, m chosen so that every partial sum stays exact.

    The sum over ranks is at most (m - 1) n; 0 means too many ranks even for 0/1 inputs, and then
    exactly one rank holds a 1 per element ((i + rank) % n == 0), so every sum is 1.
    """
    room = EXACT_INTEGERS[dtype] // num_ranks
    return min(5, room + 1) if room >= 1 else 0


def input_values(op: str, rank: int, num_ranks: int, index, m: int):
    """This rank's input at element ``index`` (an integer tensor)."""
    if op in REDUCING:
        return ((index + rank) % num_ranks == 0).long() if m == 0 else (index + rank) % m
    return (index + COPY_STRIDE * rank) % COPY_MODULUS


def expected_values(op: str, rank: int, num_ranks: int, count: int, index, m: int):
    """The exact result at output element ``index`` on ``rank``."""
    if op in REDUCING:
        global_index = index + rank * count if op == "reduce_scatter" else index
        return _sum_over_ranks(global_index, num_ranks, m)
    if op in ("all_gather", "alltoall"):
        peer, offset = index // count, index % count
        return (offset + (rank * count if op == "alltoall" else 0) + COPY_STRIDE * peer) % COPY_MODULUS
    source = ROOT if op == "broadcast" else (rank - 1) % num_ranks   # broadcast, sendrecv
    return (index + COPY_STRIDE * source) % COPY_MODULUS


def _sum_over_ranks(index, num_ranks: int, m: int):
    """Sum over r < n of (index + r) % m, in closed form: whole cycles plus the remainder."""
    if m == 0:
        return index * 0 + 1
    total = index * 0 + (num_ranks // m) * (m * (m - 1) // 2)
    for k in range(num_ranks % m):
        total = total + (index + k) % m
    return total


# --- torch -------------------------------------------------------------------------------

@dataclass(**FROZEN)
class Group:
    """An initialised process group as the measurement needs it."""

    rank: int
    world_size: int
    backend: str
    device: object      # torch.device


class _Tracker:
    """What the run is doing now (named in a failure) and the progress callback."""

    def __init__(self, progress: Callable[[str, int, int], None] | None):
        self.during, self.progress = "start-up", progress

    def enter(self, during: str, done: int = 0, total: int = 0) -> None:
        self.during = during
        if self.progress:
            self.progress(during, done, total)


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


def run_benchmark(config: BenchConfig, launch: Launch, *,
                  progress: Callable[[str, int, int], None] | None = None) -> BenchRun:
    """Join the job's process group, measure, leave. ``PeerFailure`` if another rank fails."""
    import datetime

    import torch
    import torch.distributed as dist

    backend, device_name = resolve_backend(config.backend, launch.local_rank)
    device = torch.device(device_name)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    rows = rows_for(config, launch.world_size)
    host = socket.gethostname()
    tracker = _Tracker(progress)
    tracker.enter(f"the rendezvous of {launch.world_size} ranks at {launch.master_addr}:{launch.master_port} "
                  f"(were all {launch.world_size} started?)" if launch.world_size > 1 else "the start-up")
    timeout = datetime.timedelta(seconds=config.timeout_s)
    try:
        if launch.world_size == 1:
            dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1, timeout=timeout,
                                    **_device_id(device))
        else:
            dist.init_process_group(backend, init_method=launch.init_method, rank=launch.rank,
                                    world_size=launch.world_size, timeout=timeout, **_device_id(device))
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


def measure(config: BenchConfig, group: Group, rows: list[tuple[int, int]], *, tracker: _Tracker | None = None,
            emulate_reduce_scatter: bool | None = None) -> tuple[tuple[Row, ...], tuple[str, ...]]:
    """Warm up, time, check and combine over ranks, in an initialised process group."""
    import torch
    import torch.distributed as dist

    tracker = tracker or _Tracker(None)
    op, n, rank, device = config.op, group.world_size, group.rank, group.device
    dtype = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16}[config.dtype]
    send_max, recv_max = buffer_elements(op, max(count for _, count in rows), n)
    try:
        send = torch.zeros(send_max, dtype=dtype, device=device)
        recv = torch.zeros(recv_max, dtype=dtype, device=device)
    except RuntimeError as error:  # torch.OutOfMemoryError on a GPU, an allocator error on the CPU
        raise ConfigError(f"cannot allocate {send_max + recv_max} {config.dtype} elements on {device} "
                          f"({_first_line(error)})", key="-e") from None
    notes = _notes(op, group.backend)
    if op == "reduce_scatter":
        if emulate_reduce_scatter is None:
            tracker.enter("a reduce_scatter probe")
            emulate_reduce_scatter = not _has_reduce_scatter(dist, device, dtype)
        if emulate_reduce_scatter:
            notes.append(NOTES["emulated"].format(backend=group.backend))
    call = _caller(op, dist, rank, n, emulated=bool(emulate_reduce_scatter))
    placements = PLACEMENTS if op in IN_PLACE else PLACEMENTS[:1]

    for number, (size, count) in enumerate(rows):
        tracker.enter(f"the warm-up of {op} {size} B", number, len(rows))
        source, target = _views(op, "out_of_place", send, recv, rank, n, count)
        for _ in range(config.warmup):
            call(source, target)
    _synchronize(device)
    times = torch.full((len(rows), 2), math.nan, dtype=torch.float64)
    for number, (size, count) in enumerate(rows):
        for column, placement in enumerate(placements):
            tracker.enter(f"{op} {size} B {placement.replace('_', '-')}", number, len(rows))
            times[number, column] = _time_calls(call, *_views(op, placement, send, recv, rank, n, count),
                                                config.iterations, dist, device)
    wrong = torch.zeros((len(rows), 2), dtype=torch.int64)
    if config.check:
        for number, (size, count) in enumerate(rows):
            for column, placement in enumerate(placements):
                tracker.enter(f"the check of {op} {size} B {placement.replace('_', '-')}", number, len(rows))
                wrong[number, column] = _check(op, placement, call, send, recv, group, count, config.dtype)
    tracker.enter("the combination of results over ranks")
    per_rank, wrong = _over_ranks(dist, times, wrong, group)
    result = []
    for number, (size, count) in enumerate(rows):
        measured = [timing(op, size, combine(per_rank[:, number, column].tolist(), config.average), n,
                           int(wrong[number, column]) if config.check else None)
                    for column in range(len(placements))]
        result.append(Row(size_bytes=size, count=count, out_of_place=measured[0],
                          in_place=measured[1] if len(measured) > 1 else None))
    return tuple(result), tuple(notes)


def _leave(dist) -> None:
    """Destroy the process group after a failure: left to the interpreter's exit, gloo's threads abort it."""
    if dist.is_initialized():
        try:
            dist.destroy_process_group()
        except (RuntimeError, OSError):
            pass   # the peers are gone or stopping too


def _device_id(device) -> dict:
    return {"device_id": device} if device.type == "cuda" else {}


def _gather_ranks(dist, launch: Launch, host: str, device) -> tuple[RankInfo, ...]:
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


def _has_reduce_scatter(dist, device, dtype) -> bool:
    """Whether the backend has reduce_scatter (gloo before torch 2.6 or so has not)."""
    import torch

    n = dist.get_world_size()
    try:
        _reduce_scatter(dist)(torch.zeros(1, dtype=dtype, device=device), torch.zeros(n, dtype=dtype, device=device))
    except RuntimeError as error:
        if re.search(r"not supported|does not support|not implemented", str(error), re.IGNORECASE):
            return False
        raise
    return True


def _all_gather(dist):
    return getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def _reduce_scatter(dist):
    return getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def _caller(op: str, dist, rank: int, n: int, *, emulated: bool) -> Callable:
    """The torch call that runs ``op`` from ``source`` into ``target``."""
    if op == "all_reduce":
        return lambda source, target: dist.all_reduce(target)
    if op == "all_gather":
        gather = _all_gather(dist)
        return lambda source, target: gather(target, source)
    if op == "reduce_scatter" and not emulated:
        scatter = _reduce_scatter(dist)
        return lambda source, target: scatter(target, source)
    if op == "reduce_scatter":
        def emulation(source, target):
            dist.all_reduce(source)
            mine = source[rank * target.numel():(rank + 1) * target.numel()]
            if mine.data_ptr() != target.data_ptr():
                target.copy_(mine)
        return emulation
    if op == "broadcast":
        return lambda source, target: dist.broadcast(source if rank == ROOT else target, src=ROOT)
    if op == "reduce":
        return lambda source, target: dist.reduce(target, dst=ROOT)
    if op == "alltoall":
        return lambda source, target: dist.all_to_all_single(target, source)
    if n == 1:  # sendrecv to oneself
        return lambda source, target: target.copy_(source)

    def ring_shift(source, target):
        for work in dist.batch_isend_irecv([dist.P2POp(dist.isend, source, (rank + 1) % n),
                                            dist.P2POp(dist.irecv, target, (rank - 1) % n)]):
            work.wait()
    return ring_shift


def _views(op: str, placement: str, send, recv, rank: int, n: int, count: int):
    """(source, target) of one call: separate buffers, or in-place as nccl-tests lays it out."""
    send_elements, recv_elements = buffer_elements(op, count, n)
    if placement == "out_of_place":
        return send[:send_elements], recv[:recv_elements]
    if op == "all_gather":
        target = recv[:recv_elements]
        return target[rank * count:(rank + 1) * count], target
    if op == "reduce_scatter":
        source = send[:send_elements]
        return source, source[rank * count:(rank + 1) * count]
    return recv[:recv_elements], recv[:recv_elements]


def _synchronize(device) -> None:
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)


def _time_calls(call, source, target, iterations: int, dist, device) -> float:
    """Seconds per call of ``iterations`` back-to-back calls, after a barrier."""
    dist.barrier()
    if device.type == "cuda":
        import torch

        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            call(source, target)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / iterations
    began = time.perf_counter()
    for _ in range(iterations):
        call(source, target)
    return (time.perf_counter() - began) / iterations


def _check(op: str, placement: str, call, send, recv, group: Group, count: int, dtype_name: str) -> int:
    """Wrong elements on this rank after one call on known inputs (untimed)."""
    import torch

    n, rank = group.world_size, group.rank
    m = modulus(n, dtype_name)
    source, target = _views(op, placement, send, recv, rank, n, count)
    target.fill_(math.nan)   # what the call does not write stays wrong
    for low in range(0, source.numel(), CHUNK):
        index = torch.arange(low, min(low + CHUNK, source.numel()), device=source.device)
        source[low:low + CHUNK] = input_values(op, rank, n, index, m).to(source.dtype)
    if placement == "out_of_place" and op in ("all_reduce", "reduce"):
        target.copy_(source)
    call(source, target)
    _synchronize(group.device)
    if (op == "reduce" and rank != ROOT) or (op == "broadcast" and placement == "out_of_place" and rank == ROOT):
        return 0   # nothing defined there
    wrong = 0
    for low in range(0, target.numel(), CHUNK):
        index = torch.arange(low, min(low + CHUNK, target.numel()), device=target.device)
        expected = expected_values(op, rank, n, count, index, m).to(target.dtype)
        wrong += int((target[low:low + CHUNK] != expected).sum())
    return wrong


def _over_ranks(dist, times, wrong, group: Group):
    """Every rank's times ([rank, row, placement]) and the wrong counts summed over ranks."""
    import torch

    device = group.device
    local = times.flatten().to(device)
    everyone = torch.empty(local.numel() * group.world_size, dtype=local.dtype, device=device)
    _all_gather(dist)(everyone, local)
    total = wrong.to(device)
    dist.all_reduce(total)
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


# --- the document ------------------------------------------------------------------------

def bench_run_document(run: BenchRun) -> dict:
    """The run as a ``clusterplan.bench/1`` document (report.export.bench_document)."""
    from dataclasses import asdict

    from clusterplan.report.export import bench_document

    op, config = run.config.op, run.config

    def placement(t: Timing | None) -> dict | None:
        return None if t is None else {"time_s": t.time_s, "algbw_GBps": t.algbw_GBps,
                                       "busbw_GBps": t.busbw_GBps, "wrong": t.wrong}

    rows = [{"size_bytes": row.size_bytes, "count": row.count, "dtype": config.dtype, "op": op,
             "redop": "sum" if op in REDUCING else None, "root": ROOT if op in ROOTED else None,
             "out_of_place": placement(row.out_of_place), "in_place": placement(row.in_place)} for row in run.rows]
    extra = {"dtype": config.dtype, "bus_factor": bus_factor(op, run.world_size),
             "average": {"mode": config.average, "meaning": AVERAGE_MODES[config.average]},
             "config": asdict(config), "ranks": [asdict(info) for info in run.ranks],
             "notes": list(run.notes), "wrong": run.wrong, "avg_busbw_GBps": run.avg_busbw_GBps}
    return bench_document(op=op, rows=rows, world_size=run.world_size, num_nodes=len(run.hosts), hosts=run.hosts,
                          backend=run.backend, versions=dict(run.versions), source="clusterplan bench collectives",
                          extra=extra)
