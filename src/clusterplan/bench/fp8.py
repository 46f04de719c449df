"""FP8 (e4m3) in the benchmarks: where it can run, the scaled GEMM, and what the collectives accept (docs/bench.md).

A GEMM in FP8 needs FP8 tensor cores: compute capability 8.9 (Ada) or 9.0+
(Hopper, Blackwell). It runs as ``torch._scaled_mm``: e4m3 inputs, one float32
scale per tensor (1.0 here: the inputs are drawn inside e4m3's range), a bf16
output, the first operand row-major and the second column-major (``W.T`` of
a row-major ``W``, as ``nn.Linear`` stores it), every dimension a multiple of 16.

Collectives: torch hands ``float8_e4m3fn`` to NCCL as ncclFloat8e4m3 when
built with NCCL 2.24 or later (nccl-tests calls the type ``f8e4m3``), and NCCL
runs fp8 collectives on compute capability 9.0+ only ("FP8 reduction support
begins with sm90 capable devices"). With an older NCCL torch sends the bytes
as uint8, so the ops that only move data work and the reductions do not.
gloo has no fp8. torch is imported inside the functions that need it.
"""

from __future__ import annotations

from typing import Any

from clusterplan.bench.timing import time_calls

GEMM_CAPABILITY = (8, 9)            # FP8 tensor cores: Ada (8.9), Hopper (9.0), Blackwell (10.x, 12.x)
NCCL_FP8_VERSION = (2, 24, 0)       # NCCL 2.24 added ncclFloat8e4m3 and ncclFloat8e5m2
NCCL_FP8_CAPABILITY = (9, 0)        # NCCL's fp8 kernels are built for sm90 and later
ALIGNMENT = 16                      # _scaled_mm: every dimension a multiple of 16
MOVING_OPS = ("all_gather", "broadcast", "alltoall", "sendrecv")


def _version(numbers: tuple[int, ...]) -> str:
    return ".".join(map(str, numbers))


def gemm_problem(*, kind: str, name: str, capability: tuple[int, int] | None, has_scaled_mm: bool) -> str:
    """Why an fp8 GEMM cannot run on this device, or "" when it can."""
    if kind != "cuda" or capability is None:
        where = "the CPU" if kind == "cpu" else name
    elif tuple(capability) < GEMM_CAPABILITY:
        where = f"{name} (compute capability {_version(capability)})"
    elif not has_scaled_mm:
        return "fp8 GEMMs need torch._scaled_mm, which this torch build lacks"
    else:
        return ""
    return f"fp8 GEMMs need a GPU with FP8 tensor cores (compute capability 8.9+); this run has {where}"


def device_gemm_problem(torch: Any, device: Any, name: str) -> str:
    """``gemm_problem`` for a torch device."""
    capability = torch.cuda.get_device_capability(device) if device.type == "cuda" else None
    return gemm_problem(kind=device.type, name=name, capability=capability,
                        has_scaled_mm=hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn"))


def misaligned(m: int, n: int, k: int) -> str:
    """Why ``_scaled_mm`` cannot take this shape, or ""."""
    bad = [f"{axis} = {value}" for axis, value in (("m", m), ("n", n), ("k", k)) if value % ALIGNMENT]
    return f"fp8 needs m, n and k multiples of {ALIGNMENT}: {', '.join(bad)}" if bad else ""


def scaled_matmul(torch: Any, a: Any, wt: Any, out: Any, scale: Any) -> Any:
    """``out = scale^2 (a @ wt)`` in FP8 (``scale``: a float32 scalar tensor for both operands), into ``out``."""
    return torch._scaled_mm(a, wt, scale_a=scale, scale_b=scale, out_dtype=out.dtype, out=out)


def fp8_operands(torch: Any, m: int, n: int, k: int, device: Any) -> tuple[Any, Any, Any]:
    """A[m, k] (row-major) and W[n, k] in e4m3, and the bf16 C[m, n]; N(0, 1) draws fit e4m3 (max 448)."""
    a = torch.randn(m, k, dtype=torch.bfloat16, device=device).to(torch.float8_e4m3fn)
    w = torch.randn(n, k, dtype=torch.bfloat16, device=device).to(torch.float8_e4m3fn)
    return a, w, torch.empty(m, n, dtype=torch.bfloat16, device=device)


def time_scaled_matmul(torch: Any, m: int, n: int, k: int, iterations: int, warmup: int, device: Any) -> float:
    """Mean seconds of one FP8 ``A @ W.T`` (W.T column-major, as _scaled_mm wants its second operand)."""
    one = torch.ones((), dtype=torch.float32, device=device)
    a, w, c = fp8_operands(torch, m, n, k, device)
    wt = w.t()
    return time_calls(lambda: scaled_matmul(torch, a, wt, c, one), iterations, warmup=warmup, device=device)


def collective_problem(*, op: str, backend: str, nccl_version: tuple[int, ...] | None,
                       capability: tuple[int, int] | None, device: str = "") -> str:
    """Why an fp8 (f8e4m3) ``op`` cannot run on ``backend`` here, or "" when it should."""
    if backend != "nccl":
        return f"fp8 {op} is not supported by the {backend} backend (CPU): use nccl on GPUs, or -d bfloat16"
    if nccl_version is not None and tuple(nccl_version) >= NCCL_FP8_VERSION:
        if capability is not None and tuple(capability) < NCCL_FP8_CAPABILITY:
            return (f"fp8 {op} under nccl needs compute capability 9.0+ (NCCL runs fp8 on sm90 and later); "
                    f"{device or 'this GPU'} is {_version(capability)}")
        return ""
    if op in MOVING_OPS:
        return ""       # sent as uint8 bytes
    found = _version(nccl_version) if nccl_version else "an unknown version"
    return (f"fp8 {op} under nccl needs NCCL {_version(NCCL_FP8_VERSION)}+ for fp8 reductions; this torch has "
            f"NCCL {found} (fp8 {', '.join(MOVING_OPS)} work)")


def torch_collective_problem(torch: Any, op: str, backend: str, device: Any) -> str:
    """``collective_problem`` for this torch and device."""
    version = None
    capability = None
    if backend == "nccl":
        found = torch.cuda.nccl.version()
        version = tuple(found) if isinstance(found, tuple) else None
        capability = torch.cuda.get_device_capability(device)
    return collective_problem(op=op, backend=backend, nccl_version=version, capability=capability,
                              device=str(device))
