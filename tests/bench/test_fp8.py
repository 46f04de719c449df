"""fp8 in `bench gemm` and `bench collectives`: clear refusals where it cannot run, the real kernels where it can."""

import json
import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from clusterplan.bench.collective_calls import collective_call, count_wrong  # noqa: E402
from clusterplan.bench.collective_values import expected_values, input_values, modulus  # noqa: E402
from clusterplan.bench.collectives import BenchConfig, Group, bench_dtype, rows_for  # noqa: E402
from clusterplan.bench.fp8 import (collective_problem, device_gemm_problem, fp8_operands, gemm_problem,  # noqa: E402
                                   misaligned, scaled_matmul, time_scaled_matmul, torch_collective_problem)
from clusterplan.bench.gemm import peaks  # noqa: E402
from clusterplan.bench.nccltests import parse_nccl_tests  # noqa: E402
from clusterplan.catalog import load_catalog  # noqa: E402
from clusterplan.cli.main import main  # noqa: E402
from launch_env import LAUNCH_PREFIXES, clean_env  # noqa: E402

GEMM_REFUSAL = "fp8 GEMMs need a GPU with FP8 tensor cores (compute capability 8.9+); this run has "


@pytest.fixture
def alone(monkeypatch):
    """No launcher variables: the CLI runs a world of one here."""
    for name in list(os.environ):
        if name.startswith(LAUNCH_PREFIXES):
            monkeypatch.delenv(name)


def torchrun(nproc: int, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc), *args]
    return subprocess.run(command, env=clean_env(), capture_output=True, text=True, timeout=120)


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- bench gemm --dtype fp8 ----------------------------------------------------------------

def test_fp8_gemm_on_the_cpu_is_refused_in_one_line(capsys):
    code, out, err = run_cli(capsys, "bench", "gemm", "--dtype", "bf16,fp8", "--device", "cpu", "--sizes", "64")
    assert code == 2 and out == ""
    assert err == f"clusterplan: error: --dtype: {GEMM_REFUSAL}the CPU\n"


def test_fp8_node_checks_on_the_cpu_are_refused_before_the_rendezvous(alone, capsys):
    code, out, err = run_cli(capsys, "bench", "nodes", "--gemm-dtype", "fp8")
    assert code == 2 and out == ""
    assert err == f"clusterplan: error: --gemm-dtype: {GEMM_REFUSAL}the CPU\n"


@pytest.mark.parametrize("capability, has_scaled_mm, refusal", [
    ((8, 0), True, GEMM_REFUSAL + "NVIDIA A100-SXM4-80GB (compute capability 8.0)"),
    ((7, 0), True, GEMM_REFUSAL + "NVIDIA A100-SXM4-80GB (compute capability 7.0)"),
    ((8, 9), True, ""), ((9, 0), True, ""), ((10, 0), True, ""),
    ((9, 0), False, "fp8 GEMMs need torch._scaled_mm, which this torch build lacks"),
])
def test_fp8_gemm_needs_compute_capability_8_9(capability, has_scaled_mm, refusal):
    assert gemm_problem(kind="cuda", name="NVIDIA A100-SXM4-80GB", capability=capability,
                        has_scaled_mm=has_scaled_mm) == refusal


def test_this_torch_on_the_cpu_is_refused():
    assert device_gemm_problem(torch, torch.device("cpu"), "AMD EPYC") == GEMM_REFUSAL + "the CPU"


def test_scaled_matmul_multiplies_as_a_float_reference():
    """The kernel call the benchmark times (torch's CPU _scaled_mm here): A @ W.T within bf16 rounding."""
    cpu = torch.device("cpu")
    a, w, c = fp8_operands(torch, 64, 48, 32, cpu)
    scaled_matmul(torch, a, w.t(), c, torch.ones((), dtype=torch.float32))
    reference = a.to(torch.float32) @ w.to(torch.float32).t()
    assert c.dtype == torch.bfloat16 and torch.allclose(c.to(torch.float32), reference, rtol=2**-7, atol=1e-3)
    scaled_matmul(torch, a, w.t(), c, torch.full((), 2.0))    # per-tensor scales multiply the result
    assert torch.allclose(c.to(torch.float32), 4 * reference, rtol=2**-7, atol=1e-3)
    assert time_scaled_matmul(torch, 32, 32, 32, 2, 1, cpu) > 0


def test_fp8_shapes_must_be_multiples_of_16():
    assert misaligned(4096, 6144, 4096) == ""
    assert misaligned(100, 64, 24) == "fp8 needs m, n and k multiples of 16: m = 100, k = 24"


def test_the_fp8_peak_comes_from_the_catalog():
    """--gpu h100-sxm: fp8 rows are compared with the catalog's dense FP8 peak, not BF16's."""
    found = peaks(load_catalog().get("gpus", "h100-sxm"))
    assert found["fp8"] == pytest.approx(1978.9e12) and found["bf16"] == pytest.approx(989.4e12)


# --- bench collectives -d fp8 ------------------------------------------------------------

@pytest.mark.parametrize("name", ["fp8", "FP8", "f8e4m3", "fp8_e4m3", "e4m3", "float8_e4m3fn"])
def test_fp8_names_are_nccl_tests_f8e4m3(name):
    assert bench_dtype(name) == "f8e4m3"
    assert bench_dtype("bf16") == "bfloat16" and bench_dtype("half") == "half"


def test_f8e4m3_rows_count_one_byte_elements():
    assert rows_for(BenchConfig(op="all_gather", dtype="f8e4m3", min_bytes=4096, max_bytes=4096), 4) == [(4096, 1024)]
    assert rows_for(BenchConfig(op="all_reduce", dtype="f8e4m3", min_bytes=3, max_bytes=3), 8) == [(3, 3)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 300])
def test_f8e4m3_check_values_are_exact(n):
    """Reduced sums stay within e4m3's exact integers (16); copied values round alike on both sides."""
    m, index = modulus(n, "f8e4m3"), torch.arange(6 * n)
    reduced = sum(input_values("all_reduce", q, n, index, m) for q in range(n))
    assert int(reduced.max()) <= 16
    assert torch.equal(reduced.to(torch.float8_e4m3fn).long(), reduced)
    assert torch.equal(expected_values("all_reduce", 0, n, 6, index, m), reduced)


def test_the_check_counts_wrong_fp8_elements():
    """The untimed check on f8e4m3 buffers: a copy is clean, one corrupted element is counted."""
    group = Group(rank=0, world_size=1, backend="nccl", device=torch.device("cpu"))
    send = torch.zeros(300, dtype=torch.float8_e4m3fn)
    recv = torch.zeros(300, dtype=torch.float8_e4m3fn)
    call = collective_call("sendrecv", None, 0, 1, emulated=False)
    assert count_wrong("sendrecv", "out_of_place", call, send, recv, group, 300, "f8e4m3") == 0

    def corrupting(source, target):
        call(source, target)
        target[7] = 300.0
    assert count_wrong("sendrecv", "out_of_place", corrupting, send, recv, group, 300, "f8e4m3") == 1


@pytest.mark.parametrize("op", ["all_reduce", "all_gather"])
def test_fp8_under_gloo_is_refused_in_one_line(alone, capsys, op):
    code, out, err = run_cli(capsys, "bench", "collectives", "--op", op, "-d", "fp8", "-b", "1K", "-e", "1K")
    assert code == 2 and out == ""
    assert err == (f"clusterplan: error: -d: fp8 {op} is not supported by the gloo backend (CPU): use nccl on "
                   "GPUs, or -d bfloat16\n")


def test_fp8_under_gloo_is_refused_by_every_rank_before_the_rendezvous():
    done = torchrun(2, "-m", "clusterplan", "bench", "collectives", "-d", "fp8", "--backend", "gloo")
    said = [line for line in done.stderr.splitlines() if line.startswith("clusterplan:")]
    assert done.returncode == 1 and done.stdout == ""
    assert said and set(said) == {"clusterplan: error: -d: fp8 all_reduce is not supported by the gloo backend "
                                  "(CPU): use nccl on GPUs, or -d bfloat16"}
    codes = re.findall(r"^\s*exitcode\s*:\s*(-?\d+)", done.stderr, flags=re.MULTILINE)
    assert "2" in codes and set(codes) <= {"2", "-15"}


@pytest.mark.parametrize("op, version, capability, refusal", [
    ("all_reduce", (2, 21, 5), (9, 0), "fp8 all_reduce under nccl needs NCCL 2.24.0+ for fp8 reductions; this torch "
                                       "has NCCL 2.21.5 (fp8 all_gather, broadcast, alltoall, sendrecv work)"),
    ("all_gather", (2, 21, 5), (8, 0), ""),
    ("reduce_scatter", (2, 27, 3), (9, 0), ""),
    ("all_gather", (2, 27, 3), (8, 0), "fp8 all_gather under nccl needs compute capability 9.0+ (NCCL runs fp8 on "
                                       "sm90 and later); cuda:0 is 8.0"),
])
def test_nccl_fp8_support_by_version_and_device(op, version, capability, refusal):
    assert collective_problem(op=op, backend="nccl", nccl_version=version, capability=capability,
                              device="cuda:0") == refusal


# --- on a GPU ------------------------------------------------------------------------------

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@cuda
def test_fp8_gemm_on_a_gpu(capsys):
    device = torch.device("cuda", torch.cuda.current_device())
    problem = device_gemm_problem(torch, device, torch.cuda.get_device_name(device))
    if problem:
        pytest.skip(problem)
    a, w, c = fp8_operands(torch, 256, 512, 1024, device)
    scaled_matmul(torch, a, w.t(), c, torch.ones((), dtype=torch.float32, device=device))
    reference = a.to(torch.float32) @ w.to(torch.float32).t()
    assert torch.allclose(c.to(torch.float32), reference, rtol=2**-7, atol=0.05)
    code, out, err = run_cli(capsys, "bench", "gemm", "--dtype", "bf16,fp8", "--sizes", "2048", "--shapes", "none",
                             "-n", "3", "-w", "1", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and [row["dtype"] for row in doc["rows"]] == ["bf16", "fp8"]
    assert all(row["tflops"] > 0 for row in doc["rows"]) and doc["best_tflops"]["fp8"] > 0


@cuda
def test_fp8_all_gather_on_one_gpu(alone, capsys):
    device = torch.device("cuda", 0)
    problem = torch_collective_problem(torch, "all_gather", "nccl", device)
    if problem:
        pytest.skip(problem)
    code, out, err = run_cli(capsys, "bench", "collectives", "--op", "all_gather", "-d", "fp8", "-b", "1K",
                             "-e", "1M", "-f", "32", "-n", "3", "-w", "1", "--backend", "nccl")
    assert code == 0 and err == "", err
    log = parse_nccl_tests(out)
    assert {row.dtype for row in log.rows} == {"f8e4m3"} and [row.count for row in log.rows] == [1024, 32768, 1048576]
    assert all(row.out_of_place.wrong == 0 and row.in_place.wrong == 0 for row in log.rows)
