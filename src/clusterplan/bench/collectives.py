"""nccl-tests on torch.distributed: what to run, what was measured, and the arithmetic (docs/bench.md).

The method is nccl-tests' (``src/common.cu``): every size is warmed up first
(``warmup`` calls), then each size is timed out-of-place and then in-place
(``iterations`` back-to-back calls with no barrier in between; CUDA events on a
GPU, ``perf_counter`` on a CPU, where gloo calls return when done). Each rank's
time per call is combined across ranks by ``average`` (0 rank 0, 1 mean,
2 min, 3 max), and algbw = S / t, busbw = algbw x ``bus_factor(op, n)``, with
S the size nccl-tests prints (``element_count``). The correctness check is a
separate, untimed pass on inputs whose exact result is known
(``bench.collective_values``), counting wrong elements per placement over all
ranks. The run itself is ``bench.collective_run``; the torch calls of each op
are ``bench.collective_calls``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.names import dtype_name
from clusterplan.perf.collectives import DTYPE_BYTES, OPS, bus_factor, element_count, size_sweep
from clusterplan.schema import FROZEN

BENCH_DTYPES = ("float", "half", "bfloat16", "f8e4m3")     # nccl-tests' names, as its -d and its table spell them
FP8_NAMES = ("fp8", "fp8_e4m3", "e4m3", "float8_e4m3fn")    # other names of f8e4m3 (docs/bench.md)
MODEL_DTYPE = {"f8e4m3": "fp8"}                             # perf.collectives' name, where it differs
BACKENDS = ("auto", "nccl", "gloo")
AVERAGE_MODES = {0: "rank 0", 1: "mean over ranks", 2: "min over ranks", 3: "max over ranks"}
REDUCING = ("all_reduce", "reduce_scatter", "reduce")
ROOTED = ("broadcast", "reduce")
IN_PLACE = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
PLACEMENTS = ("out_of_place", "in_place")
ROOT = 0
MAX_ROWS = 10_000


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
class Group:
    """An initialised process group as the measurement needs it."""

    rank: int
    world_size: int
    backend: str
    device: object      # torch.device
    process_group: object = None    # a torch.distributed group (rank and world_size within it); None: the world


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


def bench_dtype(name: str) -> str:
    """nccl-tests' name of an element type given any way: "bf16" -> "bfloat16", "fp8" -> "f8e4m3"."""
    return "f8e4m3" if name.strip().lower() in FP8_NAMES else dtype_name(name)


def rows_for(config: BenchConfig, num_ranks: int) -> list[tuple[int, int]]:
    """(S, printed count) per size, as nccl-tests rounds them; sizes below one element per rank are left out."""
    model_dtype = MODEL_DTYPE.get(config.dtype, config.dtype)
    rounded = [element_count(config.op, size, model_dtype, num_ranks) for size in config.sizes]
    rows = [(size, count) for size, count in rounded if count > 0]
    if not rows:
        raise ConfigError(f"every size is below one {config.dtype} ({DTYPE_BYTES[model_dtype]} B) per rank "
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
