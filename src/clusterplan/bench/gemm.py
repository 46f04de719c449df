"""``clusterplan bench gemm``: achievable dense matrix-multiply FLOP/s per dtype and shape.

FLOP = 2 m n k for C[m, n] = A[m, k] B[k, n]; the time of one multiply is the
mean over ``iterations`` timed back to back after ``warmup`` untimed ones, with
CUDA events on a GPU and ``time.perf_counter`` on a CPU. B is stored as
``nn.Linear`` stores its weight, [n, k], and used transposed, so the
transformer shapes run the kernels a training step runs. fp8 is e4m3 through
``torch._scaled_mm`` with per-tensor scales and a bf16 output, on GPUs with FP8
tensor cores only (``bench.fp8``). fp32 is IEEE fp32
unless ``torch.set_float32_matmul_precision`` was changed (the document
records the setting). torch is imported only inside the functions that run.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.bench.fp8 import device_gemm_problem, misaligned, time_scaled_matmul
from clusterplan.bench.timing import Progress, time_calls
from clusterplan.errors import ConfigError
from clusterplan.perf.model import Transformer
from clusterplan.perf.presets import PRESETS
from clusterplan.schema import FROZEN

SCHEMA = "clusterplan.gemm/1"
DTYPES = ("bf16", "fp16", "fp32", "fp8")
TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1}
GPU_SQUARE_SIZES = (4096, 8192, 16384)
CPU_SQUARE_SIZES = (512, 1024, 2048)
GPU_DTYPES = ("bf16", "fp16", "fp32")   # and fp8 where the GPU has FP8 tensor cores
CPU_DTYPES = ("bf16", "fp32")   # fp16 matmul on CPU has no fast kernel in stock torch (~2 GFLOP/s): ask for it
GPU_ITERATIONS, GPU_WARMUP = 20, 5
CPU_ITERATIONS, CPU_WARMUP = 3, 1
MEMORY_TOLERANCE = 0.10         # --gpu ID: the device's memory within 10 % of the catalog's hbm_bytes
TOKENS = (4096, 8192)


@dataclass(**FROZEN)
class GemmShape:
    """C[m, n] = A[m, k] B[k, n], with a name such as ``llama3-8b-mlp-up-t4096``."""

    name: str
    m: int
    n: int
    k: int

    def __post_init__(self) -> None:
        bad = [f"{axis} = {getattr(self, axis)}" for axis in ("m", "n", "k")
               if not (isinstance(getattr(self, axis), int) and getattr(self, axis) > 0)]
        if bad or not self.name:
            raise ConfigError(f"shape {self.name!r}: sizes must be integers > 0, got {', '.join(bad)}", key="shape")

    @property
    def flop(self) -> int:
        return 2 * self.m * self.n * self.k


# The Llama 3 presets of perf.model: their projections are the shapes a training step multiplies.
MODELS = (PRESETS["llama3-8b"], PRESETS["llama3-70b"])


def square(size: int) -> GemmShape:
    return GemmShape(name=f"square-{size}", m=size, n=size, k=size)


def transformer_shapes(models: Sequence[Transformer] = MODELS, tokens: Sequence[int] = TOKENS) -> tuple[GemmShape, ...]:
    """Fused QKV, fused up (gate + up under SwiGLU) and down projections of each model for each token count (m)."""
    shapes = []
    for model in models:
        qkv = model.hidden + 2 * model.kv_dim
        up = (model.mlp_matrices - 1) * model.ffn_hidden
        for m in tokens:
            shapes += [GemmShape(name=f"{model.name}-qkv-t{m}", m=m, n=qkv, k=model.hidden),
                       GemmShape(name=f"{model.name}-mlp-up-t{m}", m=m, n=up, k=model.hidden),
                       GemmShape(name=f"{model.name}-mlp-down-t{m}", m=m, n=model.hidden, k=model.ffn_hidden)]
    return tuple(shapes)


TRANSFORMER_SHAPES = transformer_shapes()


@dataclass(**FROZEN)
class Device:
    """Where a benchmark ran: ``kind`` is "cuda" or "cpu"."""

    kind: str
    name: str
    index: int | None = None
    memory_bytes: float | None = None
    num_threads: int | None = None
    torch_version: str = ""
    cuda_version: str = ""


@dataclass(**FROZEN)
class GemmCase:
    """One measured (shape, dtype); ``skipped`` holds the reason when it could not run (out of memory)."""

    shape: GemmShape
    dtype: str
    time_s: float | None
    peak_flops_per_s: float | None = None
    skipped: str = ""

    @property
    def flops_per_s(self) -> float | None:
        return self.shape.flop / self.time_s if self.time_s else None

    @property
    def fraction_of_peak(self) -> float | None:
        if self.flops_per_s is None or not self.peak_flops_per_s:
            return None
        return self.flops_per_s / self.peak_flops_per_s


@dataclass(**FROZEN)
class GemmResult:
    device: Device
    cases: tuple[GemmCase, ...]
    iterations: int
    warmup: int
    gpu_id: str = ""
    fp32_precision: str = "highest"
    notes: tuple[str, ...] = ()


def resolve_device(torch: Any, device: str) -> Any:
    """"auto" is the current CUDA device when there is one, else the CPU; "cuda" without a GPU is an error."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("no CUDA device here; use --device cpu", key="--device")
    try:
        resolved = torch.device(device)
    except RuntimeError as error:
        raise ConfigError(str(error), key="--device") from None
    if resolved.type == "cuda" and resolved.index is None:
        resolved = torch.device("cuda", torch.cuda.current_device())
    return resolved


def describe(torch: Any, device: Any) -> Device:
    if device.type == "cuda":
        properties = torch.cuda.get_device_properties(device)
        return Device(kind="cuda", name=properties.name, index=device.index, memory_bytes=properties.total_memory,
                      torch_version=torch.__version__, cuda_version=torch.version.cuda or "")
    return Device(kind="cpu", name=_cpu_name(), num_threads=torch.get_num_threads(), torch_version=torch.__version__)


def _cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def peaks(gpu: Any) -> dict[str, float]:
    """Catalog peak FLOP/s by dtype: the ``<dtype>_flops`` fields the entry has (bf16 and fp8 dense)."""
    found = {dtype: getattr(gpu, f"{dtype}_flops", 0.0) for dtype in DTYPES}
    return {dtype: value for dtype, value in found.items() if value}


def gpu_mismatch(device: Device, gpu: Any) -> str:
    """Why ``gpu`` (a catalog entry) does not look like ``device``, or "" when it does."""
    if device.kind != "cuda":
        return f"--gpu {gpu.id}: the benchmark ran on the CPU, so no fraction of the GPU's peak is given"
    if device.memory_bytes and abs(device.memory_bytes - gpu.hbm_bytes) > MEMORY_TOLERANCE * gpu.hbm_bytes:
        return (f"--gpu {gpu.id}: this {device.name} has {device.memory_bytes / 2**30:.1f} GiB, the catalog's "
                f"{gpu.id} {gpu.hbm_bytes / 2**30:.0f} GiB; is the id right?")
    return ""


def select_shapes(*, cuda: bool, sizes: Sequence[int] | None = None,
                  names: Sequence[str] | None = None) -> tuple[GemmShape, ...]:
    """Square ``sizes`` then the named transformer shapes; ``None`` takes the device's defaults.

    ``names`` may be ``["all"]`` or ``["none"]``; the defaults are every transformer shape on a GPU, none on
    a CPU (one Llama-3-70B MLP projection is 3.8 TFLOP).
    """
    squares = tuple(square(size) for size in (sizes if sizes is not None else
                                              GPU_SQUARE_SIZES if cuda else CPU_SQUARE_SIZES))
    known = {shape.name: shape for shape in TRANSFORMER_SHAPES}
    if names is None:
        names = ["all"] if cuda else ["none"]
    if list(names) == ["all"]:
        return squares + TRANSFORMER_SHAPES
    if list(names) == ["none"]:
        return squares
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigError(f"unknown shape {', '.join(unknown)}; known: all, none, {', '.join(known)}",
                          key="--shapes")
    return squares + tuple(known[name] for name in names)


def check_request(shapes: Sequence[GemmShape], dtypes: Sequence[str], iterations: int, warmup: int) -> None:
    unknown = [d for d in dtypes if d not in DTYPES]
    if unknown:
        raise ConfigError(f"unknown dtype {', '.join(unknown)}; expected {', '.join(DTYPES)}", key="--dtype")
    if not shapes or not dtypes:
        raise ConfigError("nothing to measure: no shapes or no dtypes", key="--sizes/--shapes")
    if iterations < 1 or warmup < 0:
        raise ConfigError(f"need iterations >= 1 and warm-up >= 0, got {iterations} and {warmup}", key="-n/-w")


def measure_gemm(*, sizes: Sequence[int] | None = None, shape_names: Sequence[str] | None = None,
                 shapes: Sequence[GemmShape] | None = None, dtypes: Sequence[str] | None = None,
                 iterations: int | None = None, warmup: int | None = None, device: str = "auto",
                 gpu: Any = None, progress: Progress | None = None) -> GemmResult:
    """Time every (shape, dtype) on ``device``; ``None`` arguments take the GPU or CPU defaults.

    ``shapes`` replaces ``sizes`` and ``shape_names``. ``gpu``, a catalog GPU entry, gives each case its
    fraction of that GPU's peak (for the dtypes the entry has a ``<dtype>_flops`` for).
    """
    import torch

    target = resolve_device(torch, device)
    cuda = target.type == "cuda"
    if shapes is None:
        shapes = select_shapes(cuda=cuda, sizes=sizes, names=shape_names)
    described = describe(torch, target)
    fp8_problem = device_gemm_problem(torch, target, described.name)
    if dtypes is None:
        dtypes = (GPU_DTYPES + (() if fp8_problem else ("fp8",))) if cuda else CPU_DTYPES
    iterations = iterations if iterations is not None else GPU_ITERATIONS if cuda else CPU_ITERATIONS
    warmup = warmup if warmup is not None else GPU_WARMUP if cuda else CPU_WARMUP
    check_request(shapes, dtypes, iterations, warmup)
    if "fp8" in dtypes and fp8_problem:
        raise ConfigError(fp8_problem, key="--dtype")
    mismatch = gpu_mismatch(described, gpu) if gpu is not None else ""
    peak_flops = peaks(gpu) if gpu is not None and cuda else {}
    cases, total = [], len(shapes) * len(dtypes)
    for dtype in dtypes:
        for shape in shapes:
            if progress:
                progress(len(cases), total, f"{dtype} {shape.name}")
            cases.append(_case(torch, shape, dtype, iterations, warmup, target, peak_flops.get(dtype)))
    if progress:
        progress(total, total, "done")
    return GemmResult(device=described, cases=tuple(cases), iterations=iterations, warmup=warmup,
                      gpu_id=gpu.id if gpu is not None else "", fp32_precision=torch.get_float32_matmul_precision(),
                      notes=(mismatch,) if mismatch else ())


def _case(torch: Any, shape: GemmShape, dtype: str, iterations: int, warmup: int, device: Any,
          peak: float | None) -> GemmCase:
    skipped = misaligned(shape.m, shape.n, shape.k) if dtype == "fp8" else ""
    if skipped:
        return GemmCase(shape=shape, dtype=dtype, time_s=None, peak_flops_per_s=peak, skipped=skipped)
    try:
        if dtype == "fp8":
            time_s = time_scaled_matmul(torch, shape.m, shape.n, shape.k, iterations, warmup, device)
        else:
            time_s = time_matmul(torch, shape, getattr(torch, TORCH_DTYPES[dtype]), iterations, warmup, device)
    except torch.cuda.OutOfMemoryError:
        output = BYTES["bf16"] if dtype == "fp8" else BYTES[dtype]
        need = (shape.m * shape.k + shape.k * shape.n) * BYTES[dtype] + shape.m * shape.n * output
        time_s, skipped = None, f"out of memory: needs {need / 2**30:.1f} GiB"
    if skipped:
        torch.cuda.empty_cache()    # outside the handler: its traceback no longer holds the tensors
    return GemmCase(shape=shape, dtype=dtype, time_s=time_s, peak_flops_per_s=peak, skipped=skipped)


def time_matmul(torch: Any, shape: GemmShape, dtype: Any, iterations: int, warmup: int, device: Any) -> float:
    """Mean seconds of one ``A @ W.T`` of ``shape`` on ``device`` (CUDA events on a GPU)."""
    a = torch.randn(shape.m, shape.k, dtype=dtype, device=device)
    w = torch.randn(shape.n, shape.k, dtype=dtype, device=device)
    c = torch.empty(shape.m, shape.n, dtype=dtype, device=device)
    wt = w.t()
    return time_calls(lambda: torch.mm(a, wt, out=c), iterations, warmup=warmup, device=device)


def best_flops(result: GemmResult, dtype: str) -> float | None:
    """The highest FLOP/s of ``dtype`` over the shapes measured."""
    values = [case.flops_per_s for case in result.cases if case.dtype == dtype and case.flops_per_s]
    return max(values, default=None)


def device_table(device: Device) -> dict[str, Any]:
    return {"kind": device.kind, "name": device.name, "index": device.index, "memory_bytes": device.memory_bytes,
            "num_threads": device.num_threads, "torch": device.torch_version, "cuda": device.cuda_version or None}


def gemm_document(result: GemmResult) -> dict[str, Any]:
    """The result as ``clusterplan.gemm/1`` (docs/health.md)."""
    rows = [{"shape": case.shape.name, "m": case.shape.m, "n": case.shape.n, "k": case.shape.k,
             "dtype": case.dtype, "flop": case.shape.flop, "time_s": case.time_s,
             "tflops": case.flops_per_s / 1e12 if case.flops_per_s else None,
             "peak_tflops": case.peak_flops_per_s / 1e12 if case.peak_flops_per_s else None,
             "fraction_of_peak": case.fraction_of_peak, "skipped": case.skipped or None} for case in result.cases]
    best = {dtype: best_flops(result, dtype) for dtype in dict.fromkeys(case.dtype for case in result.cases)}
    return {"schema": SCHEMA, "version": __version__, "device": device_table(result.device),
            "gpu": result.gpu_id or None, "iterations": result.iterations, "warmup": result.warmup,
            "fp32_matmul_precision": result.fp32_precision, "rows": rows,
            "best_tflops": {dtype: value / 1e12 if value else None for dtype, value in best.items()},
            "notes": list(result.notes)}


def render_gemm(doc: Mapping[str, Any], stream: TextIO) -> None:
    """The document as a fixed-width table, one row per (dtype, shape)."""
    write = stream.write
    device = doc["device"]
    peak = f", peak from the catalog's {doc['gpu']}" if doc["gpu"] and device["kind"] == "cuda" else ""
    where = f"{device['name']} (cuda:{device['index']})" if device["kind"] == "cuda" else \
        f"CPU {device['name']} ({device['num_threads']} threads)"
    write(f"# clusterplan bench gemm: {where}, {doc['iterations']} iterations after {doc['warmup']} warm-up{peak}\n")
    write(f"# FLOP = 2 m n k; C[m,n] = A[m,k] W[n,k]^T; fp32 matmul precision {doc['fp32_matmul_precision']}\n")
    if any(row["dtype"] == "fp8" for row in doc["rows"]):
        write("# fp8: e4m3 A and W, per-tensor scales, bf16 C (torch._scaled_mm)\n")
    write("#\n")
    write(f"# {'shape':<26} {'m':>6} {'n':>6} {'k':>6} {'dtype':>5} {'time (ms)':>10} {'TFLOP/s':>9} "
          f"{'of peak':>8}\n")
    for row in doc["rows"]:
        if row["skipped"]:
            write(f"  {row['shape']:<26} {row['m']:>6} {row['n']:>6} {row['k']:>6} {row['dtype']:>5} "
                  f"  skipped: {row['skipped']}\n")
            continue
        share = f"{row['fraction_of_peak']:>8.1%}" if row["fraction_of_peak"] is not None else f"{'-':>8}"
        write(f"  {row['shape']:<26} {row['m']:>6} {row['n']:>6} {row['k']:>6} {row['dtype']:>5} "
              f"{row['time_s'] * 1e3:>10.3f} {_tflops(row['tflops']):>9} {share}\n")
    best = ", ".join(f"{dtype} {_tflops(value)}" for dtype, value in doc["best_tflops"].items() if value)
    write(f"# Best TFLOP/s: {best}\n")
    for note in doc["notes"]:
        write(f"# note: {note}\n")


def _tflops(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value >= 10 else f"{value:.3g}"
