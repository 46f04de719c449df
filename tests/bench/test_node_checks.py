"""`bench gemm`, `bench memcpy` and `bench nodes` run for real (CPU, gloo); GPU paths where a GPU is."""

import json
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

from clusterplan.bench.gemm import TRANSFORMER_SHAPES, select_shapes
from clusterplan.bench.node_pairs import all_pair_rounds, group_nodes, pair_rounds, ring_rounds
from clusterplan.cli.main import main

LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
                    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE")


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_gemm_json_on_cpu(capsys):
    """Tiny bf16 and fp32 squares: one row each, FLOP = 2 m n k, TFLOP/s > 0, no peak without --gpu."""
    pytest.importorskip("torch")
    code, out, err = run(capsys, "bench", "gemm", "--device", "cpu", "--sizes", "64,128", "--dtype", "bf16,fp32",
                         "-n", "2", "-w", "1", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and err == "" and doc["schema"] == "clusterplan.gemm/1"
    assert [(r["shape"], r["dtype"]) for r in doc["rows"]] == [("square-64", "bf16"), ("square-128", "bf16"),
                                                              ("square-64", "fp32"), ("square-128", "fp32")]
    for row in doc["rows"]:
        assert row["flop"] == 2 * row["m"] * row["n"] * row["k"] and row["time_s"] > 0 and row["tflops"] > 0
        assert row["tflops"] == pytest.approx(row["flop"] / row["time_s"] / 1e12)
        assert row["fraction_of_peak"] is None and row["skipped"] is None
    assert doc["device"]["kind"] == "cpu" and doc["iterations"] == 2 and doc["warmup"] == 1
    assert doc["best_tflops"]["bf16"] == max(r["tflops"] for r in doc["rows"] if r["dtype"] == "bf16")


def test_gemm_table_and_gpu_on_cpu_is_a_note(capsys):
    """--gpu on a CPU run: a note on stderr, no fraction; the table has one row per case."""
    pytest.importorskip("torch")
    code, out, err = run(capsys, "bench", "gemm", "--device", "cpu", "--sizes", "96", "--dtype", "fp32", "-n", "1",
                         "--gpu", "h100-sxm")
    rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")]
    assert code == 0 and len(rows) == 1 and rows[0][:5] == ["square-96", "96", "96", "96", "fp32"]
    assert rows[0][-1] == "-" and float(rows[0][-2]) > 0
    assert "--gpu h100-sxm: the benchmark ran on the CPU" in err


def test_gemm_bad_input_exits_2(capsys):
    """An unknown dtype, an unknown catalog GPU and an unknown shape are one-line errors."""
    for argv, message in ((["--dtype", "fp4"], "unknown dtype fp4"), (["--gpu", "h100"], "unknown gpu id"),
                          (["--shapes", "gpt-9"], "unknown shape gpt-9"), (["--sizes", "12Q"], "cannot read")):
        code, out, err = run(capsys, "bench", "gemm", "--device", "cpu", "--sizes", "32", *argv)
        assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_transformer_shapes_by_hand():
    """Llama-3-8B fused QKV is 4096 x 6144 x 4096; 70B down projection at 8192 tokens is 8192 x 8192 x 28672."""
    shapes = {s.name: s for s in TRANSFORMER_SHAPES}
    assert len(shapes) == 12
    qkv = shapes["llama3-8b-qkv-t4096"]
    assert (qkv.m, qkv.n, qkv.k) == (4096, 6144, 4096) and qkv.flop == 2 * 4096 * 6144 * 4096
    down = shapes["llama3-70b-mlp-down-t8192"]
    assert (down.m, down.n, down.k) == (8192, 8192, 28672)
    assert (shapes["llama3-70b-mlp-up-t4096"].n, shapes["llama3-70b-qkv-t4096"].n) == (57344, 10240)
    assert [s.name for s in select_shapes(cuda=True)][:3] == ["square-4096", "square-8192", "square-16384"]
    assert len(select_shapes(cuda=True)) == 15 and len(select_shapes(cuda=False)) == 3
    assert [s.name for s in select_shapes(cuda=False, sizes=[], names=["llama3-8b-qkv-t8192"])] == \
        ["llama3-8b-qkv-t8192"]


def test_memcpy_without_cuda_says_so(capsys, tmp_path):
    """No GPU: host-to-host rows only, device_copies false, the note in JSON and one line on stderr."""
    pytest.importorskip("torch")
    target = tmp_path / "memcpy.json"
    code, out, err = run(capsys, "bench", "memcpy", "--device", "cpu", "--sizes", "64K,1M", "-n", "3",
                         "--format", "json", "-o", str(target))
    doc = json.loads(target.read_text())
    assert code == 0 and out == "" and doc["schema"] == "clusterplan.memcpy/1"
    assert [(r["direction"], r["size_bytes"]) for r in doc["rows"]] == [("h2h", 65536), ("h2h", 1 << 20)]
    assert all(r["bandwidth_GBps"] > 0 and r["bandwidth_GBps"] == pytest.approx(r["size_bytes"] / r["time_s"] / 1e9)
               for r in doc["rows"])
    assert doc["device_copies"] is False and "host-to-host only" in doc["note"]
    assert err.count("\n") == 1 and "host-to-host only" in err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]      # no temporary file left


def test_memcpy_table(capsys):
    """The table names each copy, its size in binary units and GB/s; the note is a comment line."""
    pytest.importorskip("torch")
    code, out, _ = run(capsys, "bench", "memcpy", "--device", "cpu", "--sizes", "256K", "-n", "2")
    rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")]
    assert code == 0 and rows[0][:3] == ["host-to-host", "pageable", "256K"] and float(rows[0][-1]) > 0
    assert "# --device cpu" in out or "# no CUDA device" in out


def test_pair_rounds_cover_every_pair_once_in_disjoint_rounds():
    """The circle method: k - 1 rounds (k even) or k (odd), each a set of disjoint pairs, every pair once."""
    for k in range(2, 12):
        rounds = all_pair_rounds(k)
        pairs = [pair for r in rounds for pair in r]
        assert sorted(pairs) == list(combinations(range(k), 2))
        assert len(rounds) == (k - 1 if k % 2 == 0 else k)
        assert all(len({n for pair in r for n in pair}) == 2 * len(r) for r in rounds)


def test_ring_rounds_are_neighbour_pairs_in_two_or_three_rounds():
    """k neighbour pairs (1 for two nodes), 2 rounds when k is even, 3 when odd, disjoint within a round."""
    assert ring_rounds(2) == [[(0, 1)]] and ring_rounds(1) == []
    for k in range(3, 20):
        rounds = ring_rounds(k)
        pairs = sorted(pair for r in rounds for pair in r)
        assert pairs == sorted((min(i, (i + 1) % k), max(i, (i + 1) % k)) for i in range(k))
        assert len(rounds) == (2 if k % 2 == 0 else 3)
        assert all(len({n for pair in r for n in pair}) == 2 * len(r) for r in rounds)
    assert pair_rounds(16, "auto")[0] == "all" and pair_rounds(17, "auto")[0] == "ring"


def test_nodes_group_by_host_or_by_runs():
    """Ranks group by host name in order of first appearance, or in runs named host/i."""
    nodes = group_nodes(["b", "a", "b", "a"])
    assert [(n.name, n.ranks) for n in nodes] == [("b", (0, 2)), ("a", (1, 3))]
    nodes = group_nodes(["h"] * 6, ranks_per_node=3)
    assert [(n.name, n.ranks) for n in nodes] == [("h/0", (0, 1, 2)), ("h/1", (3, 4, 5))]


def test_nodes_world_of_one_in_process(capsys, monkeypatch):
    """No launcher: one node, no links, no intra-node all_reduce, no findings."""
    pytest.importorskip("torch")
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    code, out, err = run(capsys, "bench", "nodes", "--gemm-size", "64", "--memcpy-size", "64K", "--size", "64K",
                         "-n", "2", "--format", "json", "--backend", "gloo")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "clusterplan.nodes/1" and doc["launcher"] == "none"
    assert doc["num_nodes"] == 1 and doc["links"] == [] and doc["findings"] == []
    (node,) = doc["nodes"]
    assert node["gemm_tflops"] > 0 and node["h2h_GBps"] > 0 and node["intra_busbw_GBps"] is None


def test_nodes_bad_ranks_per_node_exits_2(capsys, monkeypatch):
    """--ranks-per-node that does not divide the world is a one-line error."""
    pytest.importorskip("torch")
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    code, out, err = run(capsys, "bench", "nodes", "--ranks-per-node", "3")
    assert code == 2 and out == "" and "1 ranks do not split into nodes of 3" in err


def test_nodes_four_ranks_under_torchrun(tmp_path):
    """torchrun, 4 gloo ranks as 2 nodes of 2: two node rows, one link of 4 ranks, the JSON file and the table."""
    pytest.importorskip("torch")
    target = tmp_path / "nodes.json"
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES}
    env.update(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONPATH=str(Path(__file__).parents[2] / "src"))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4",
               "-m", "clusterplan", "bench", "nodes", "--ranks-per-node", "2", "--backend", "gloo",
               "--gemm-size", "128", "--memcpy-size", "1M", "--size", "1M", "-n", "3", "--timeout", "60",
               "--json", str(target)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(target.read_text())
    assert doc["world_size"] == 4 and doc["num_nodes"] == 2 and doc["backend"] == "gloo"
    assert sorted(n["ranks"] for n in doc["nodes"]) == [[0, 1], [2, 3]]
    assert all(n["gemm_tflops"] > 0 and n["h2h_GBps"] > 0 and n["intra_busbw_GBps"] > 0 for n in doc["nodes"])
    (link,) = doc["links"]
    assert link["ranks"] == [0, 1, 2, 3] and link["busbw_GBps"] > 0 and doc["pairing"] == "all"
    assert link["busbw_GBps"] == pytest.approx((1 << 20) / link["time_s"] * 1.5 / 1e9)
    assert done.stdout.count("# clusterplan bench nodes: 2 nodes, 4 ranks, gloo on cpu") == 1   # rank 0 only
    assert "<->" in done.stdout and "# findings" in done.stdout


@pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU")
def test_gemm_on_gpu_reports_a_fraction_of_peak(capsys):
    """bf16 on the GPU with CUDA events: TFLOP/s > 0 and 0 < fraction of the catalog peak < 1.2.

    The catalog id is $CLUSTERPLAN_TEST_GPU (default h100-sxm; the H200's bf16 peak is the same).
    """
    gpu = os.environ.get("CLUSTERPLAN_TEST_GPU", "h100-sxm")
    code, out, err = run(capsys, "bench", "gemm", "--sizes", "4096", "--shapes", "llama3-8b-qkv-t4096",
                         "--dtype", "bf16", "-n", "10", "--gpu", gpu, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["device"]["kind"] == "cuda"
    assert all(r["tflops"] > 0 and 0 < r["fraction_of_peak"] < 1.2 for r in doc["rows"])


@pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU")
def test_memcpy_on_gpu_measures_every_copy(capsys):
    """pinned and pageable h2d/d2h, d2d and h2h at 64M, all positive; pinned h2d beats 1 GB/s."""
    code, out, _ = run(capsys, "bench", "memcpy", "--sizes", "64M", "-n", "5", "--format", "json")
    doc = json.loads(out)
    kinds = [(r["direction"], r["host_memory"]) for r in doc["rows"]]
    assert code == 0 and doc["device_copies"] is True and doc["note"] is None
    assert kinds == [("h2d", "pinned"), ("h2d", "pageable"), ("d2h", "pinned"), ("d2h", "pageable"),
                     ("d2d", None), ("h2h", "pageable")]
    assert doc["rows"][0]["bandwidth_GBps"] > 1
