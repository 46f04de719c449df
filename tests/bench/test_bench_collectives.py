"""`bench collectives`: the runner's arithmetic, real gloo runs in 1-4 processes, and faults."""

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from clusterplan.bench.collective_values import expected_values, input_values, modulus  # noqa: E402
from clusterplan.bench.collectives import BenchConfig, combine, rows_for, timing  # noqa: E402
from clusterplan.bench.nccltests import parse_nccl_tests  # noqa: E402
from clusterplan.cli.main import main  # noqa: E402
from launch_env import LAUNCH_PREFIXES, clean_env, free_port  # noqa: E402
from clusterplan.perf.collectives import OPS, bus_factor, element_count  # noqa: E402

HERE = Path(__file__).parent




def torchrun(nproc: int, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc), *args]
    return subprocess.run(command, env=clean_env(), capture_output=True, text=True, timeout=timeout)


def assert_table_matches(table: str, doc: dict) -> None:
    """The printed table reads back (parse_nccl_tests) to the document's numbers as printed."""
    log = parse_nccl_tests(table)
    assert (log.op, log.num_ranks) == (doc["op"], doc["world_size"])
    assert log.avg_busbw_GBps == float(f"{doc['avg_busbw_GBps']:g}")
    assert len(log.rows) == len(doc["rows"])
    for parsed, row in zip(log.rows, doc["rows"]):
        assert (parsed.size_bytes, parsed.count, parsed.dtype, parsed.redop, parsed.root) == (
            row["size_bytes"], row["count"], row["dtype"], row["redop"], row["root"])
        for got, want in ((parsed.out_of_place, row["out_of_place"]), (parsed.in_place, row["in_place"])):
            if want is None:
                assert got is None
                continue
            us = want["time_s"] * 1e6
            printed = float(f"{us:.0f}" if us >= 1e4 else f"{us:.1f}" if us >= 100 else f"{us:.2f}")
            assert got.time_s == pytest.approx(printed * 1e-6, rel=1e-12)
            assert got.algbw_GBps == float(f"{want['algbw_GBps']:.2f}")
            assert got.busbw_GBps == float(f"{want['busbw_GBps']:.2f}")
            assert got.wrong == want["wrong"]


def assert_bandwidths(doc: dict) -> None:
    """busbw = algbw x bus_factor(op, n), algbw = S / t / 1e9, and no wrong element."""
    factor = bus_factor(doc["op"], doc["world_size"])
    assert doc["bus_factor"] == factor and doc["wrong"] == 0
    for row in doc["rows"]:
        for placement in (row["out_of_place"], row["in_place"]):
            if placement is None:
                continue
            assert placement["algbw_GBps"] == pytest.approx(row["size_bytes"] / placement["time_s"] / 1e9)
            assert placement["busbw_GBps"] == pytest.approx(placement["algbw_GBps"] * factor)
            assert placement["wrong"] == 0


# --- the arithmetic ----------------------------------------------------------------------

def test_rows_are_sized_as_nccl_tests_counts_them():
    """all_gather on 3 ranks: S rounded to whole elements per rank, per-rank count; too-small sizes dropped."""
    config = BenchConfig(op="all_gather", min_bytes=8, max_bytes=1024, step_factor=4)
    assert rows_for(config, 3) == [element_count("all_gather", s, "float", 3) for s in (32, 128, 512)]
    assert rows_for(config, 3)[0] == (24, 2)


def test_a_sweep_below_one_element_per_rank_is_bad_input():
    """-b 8 -e 8 for all_gather on 4 ranks has no row: a ConfigError naming -b."""
    with pytest.raises(ValueError) as info:
        rows_for(BenchConfig(op="all_gather", min_bytes=8, max_bytes=8), 4)
    assert info.value.key == "-b"


def test_average_modes_as_nccl_tests():
    """-a 0 rank 0's time, 1 the mean, 2 the min, 3 the max."""
    times = [3.0, 1.0, 2.0, 6.0]
    assert [combine(times, mode) for mode in range(4)] == [3.0, 3.0, 1.0, 6.0]


def test_timing_uses_decimal_gigabytes_and_the_shared_factor():
    """1 GiB all_reduce in 10 ms on 8 ranks: algbw 107.37 GB/s, busbw x 7/4."""
    t = timing("all_reduce", 2**30, 0.01, 8, 0)
    assert t.algbw_GBps == pytest.approx(107.3741824)
    assert t.busbw_GBps == pytest.approx(t.algbw_GBps * 1.75)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 300])
@pytest.mark.parametrize("dtype", ["float", "half", "bfloat16"])
def test_expected_values_are_exact_and_match_a_simulation(n, dtype):
    """Every op's expected result equals a direct simulation of it, with sums inside the type's exact range."""
    count, m = 6, modulus(n, dtype)
    index = torch.arange(count * n)
    limit = {"float": 2**24, "half": 2**11, "bfloat16": 2**8}[dtype]
    inputs = {op: [input_values(op, q, n, index, m) for q in range(n)] for op in OPS}
    reduced = sum(inputs["all_reduce"])
    assert int(reduced.max()) <= limit
    cast = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    assert torch.equal(reduced.to(cast).long(), reduced)
    for rank in sorted({0, n - 1}):
        def expected(op, length):
            return expected_values(op, rank, n, count, torch.arange(length), m)
        assert torch.equal(expected("all_reduce", count), reduced[:count])
        assert torch.equal(expected("reduce", count), reduced[:count])
        assert torch.equal(expected("reduce_scatter", count), reduced[rank * count:(rank + 1) * count])
        gathered = torch.cat([inputs["all_gather"][q][:count] for q in range(n)])
        assert torch.equal(expected("all_gather", n * count), gathered)
        exchanged = torch.cat([inputs["alltoall"][q][rank * count:(rank + 1) * count] for q in range(n)])
        assert torch.equal(expected("alltoall", n * count), exchanged)
        assert torch.equal(expected("broadcast", count), inputs["broadcast"][0][:count])
        assert torch.equal(expected("sendrecv", count), inputs["sendrecv"][(rank - 1) % n][:count])


@pytest.mark.parametrize("change, key", [
    (dict(op="allreduce"), "--op"), (dict(dtype="int8"), "-d"), (dict(iterations=0), "-n"),
    (dict(warmup=-1), "-w"), (dict(average=4), "-a"), (dict(timeout_s=0), "--timeout"),
    (dict(min_bytes=2048, max_bytes=1024), "-b/-e/-f/-i"), (dict(step_factor=1.0, max_bytes=2**30), "-b/-e/-f/-i"),
])
def test_config_names_the_bad_option(change, key):
    """Each impossible option is a ConfigError keyed by its flag."""
    with pytest.raises(ValueError) as info:
        BenchConfig(**{"min_bytes": 8, "max_bytes": 1024, **change})
    assert info.value.key == key


# --- the CLI in this process (a world of one) --------------------------------------------

@pytest.fixture
def alone(monkeypatch):
    """No launcher variables: the CLI runs a world of one here."""
    for name in list(os.environ):
        if name.startswith(LAUNCH_PREFIXES):
            monkeypatch.delenv(name)


def cli(capsys, *argv):
    code = main(["bench", "collectives", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_world_of_one_table_and_json(alone, capsys, tmp_path):
    """One process: the table reads back to the -o JSON (--out is its old name); busbw factor 0 on one rank."""
    out_file = tmp_path / "bench.json"
    code, out, err = cli(capsys, "-b", "64", "-e", "4K", "-f", "4", "-n", "2", "-w", "1", "-o", str(out_file),
                         "-d", "fp32")
    doc = json.loads(out_file.read_text())
    assert code == 0 and err == ""
    assert doc["schema"] == "clusterplan.bench/1" and doc["world_size"] == 1 and doc["backend"] == "gloo"
    assert [row["size_bytes"] for row in doc["rows"]] == [64, 256, 1024, 4096]
    assert_table_matches(out, doc)
    assert_bandwidths(doc)


def test_wrong_results_are_reported_and_exit_1(alone, capsys, tmp_path, monkeypatch):
    """A corrupting all_reduce: #wrong 1 per row and placement in table and JSON, exit 1, one stderr line."""
    import torch.distributed as dist

    real = dist.all_reduce

    def corrupted(tensor, *args, **kwargs):
        work = real(tensor, *args, **kwargs)
        if tensor.dtype == torch.float32:
            tensor[0] += 1
        return work

    monkeypatch.setattr(dist, "all_reduce", corrupted)
    out_file = tmp_path / "bench.json"
    code, out, err = cli(capsys, "-b", "64", "-e", "128", "-n", "1", "-w", "0", "--out", str(out_file),
                         "--format", "json")
    doc = json.loads(out)
    assert code == 1 and err == "clusterplan: error: 4 wrong elements in the results (see #wrong)\n"
    assert doc["wrong"] == 4 and json.loads(out_file.read_text())["wrong"] == 4
    assert all(row["out_of_place"]["wrong"] == row["in_place"]["wrong"] == 1 for row in doc["rows"])


@pytest.mark.parametrize("argv, message", [
    (["-b", "12Q"], "cannot read '12Q' as a size"),
    (["-b", "1M", "-e", "1K"], "sizes must satisfy 0 < min (1048576) <= max (1024)"),
    (["-c", "2"], "-c: must be 0 or 1, got 2"),
    (["-n", "0"], "-n: iterations must be at least 1, got 0"),
    (["--out", "/nonexistent/folder/x.json"], "--output: its folder does not exist"),
    (["--op", "allreduce"], "invalid choice: 'allreduce'"),
    (["-a", "5"], "invalid choice: 5"),
])
def test_bad_options_exit_2_with_one_line(alone, capsys, argv, message):
    """Bad sizes, checks, iterations, paths and names: exit 2 and one stderr line, before any rendezvous."""
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


# --- real runs: torchrun, 2 and 4 processes ----------------------------------------------

def test_two_ranks_all_reduce_under_torchrun(tmp_path):
    """2 gloo ranks: rank 0 alone prints a table that reads back to the JSON; factor 2(n-1)/n = 1."""
    out_file = tmp_path / "all_reduce.json"
    done = torchrun(2, "-m", "clusterplan", "bench", "collectives", "-b", "8", "-e", "64K", "-f", "8", "-n", "3",
                    "-w", "1", "--out", str(out_file))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out_file.read_text())
    assert done.stdout.count("# Collective test starting: all_reduce_perf") == 1
    assert doc["world_size"] == 2 and doc["num_nodes"] == 1 and doc["hosts"] == [socket.gethostname()]
    assert doc["versions"]["torch"] == torch.__version__ and len(doc["rows"]) == 5
    assert_table_matches(done.stdout, doc)
    assert_bandwidths(doc)


def test_four_ranks_all_gather_half_under_torchrun(tmp_path):
    """4 gloo ranks, all_gather in half: per-rank counts, factor 3/4, every rank listed."""
    out_file = tmp_path / "all_gather.json"
    done = torchrun(4, "-m", "clusterplan", "bench", "collectives", "--op", "all_gather", "-d", "half", "-b", "1K",
                    "-e", "256K", "-f", "16", "-n", "2", "-w", "1", "-a", "3", "--out", str(out_file))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out_file.read_text())
    assert doc["world_size"] == 4 and [r["rank"] for r in doc["ranks"]] == [0, 1, 2, 3]
    assert [(r["size_bytes"], r["count"]) for r in doc["rows"]] == [(1024, 128), (16384, 2048), (262144, 32768)]
    assert doc["average"]["mode"] == 3
    assert_table_matches(done.stdout, doc)
    assert_bandwidths(doc)


def test_every_op_and_type_checks_clean_and_corruption_is_counted():
    """3 ranks, one group: 7 ops x 3 types (and emulated reduce_scatter) have no wrong element; a corrupted
    all_reduce has exactly one per size and placement."""
    done = torchrun(3, str(HERE / "collective_worker.py"))
    assert done.returncode == 0, done.stderr
    cases = {case["case"]: case for case in map(json.loads, done.stdout.splitlines())}
    assert len(cases) == 3 * len(OPS) + 2
    for name, case in cases.items():
        wrong = {row[2] for row in case["rows"]} | {row[3] for row in case["rows"]}
        in_place = name.split("/")[0] not in ("alltoall", "sendrecv")
        assert wrong == ({1} if name == "all_reduce/corrupted" else {0} if in_place else {0, None}), name
    assert "emulated as all_reduce" in cases["reduce_scatter/emulated"]["notes"][0]


# --- faults: plain processes started as srun would (no torchrun) --------------------------

def start_ranks(world: int, port: int, out_file: Path, variables: str = "torchrun"):
    """``world`` plain processes; rank 0's stderr is a terminal so that it shows its progress."""
    master, terminal = os.openpty()
    ranks = []
    for rank in range(world):
        if variables == "torchrun":
            env = clean_env(RANK=str(rank), WORLD_SIZE=str(world))
        else:
            env = clean_env(SLURM_PROCID=str(rank), SLURM_NTASKS=str(world), SLURM_LOCALID=str(rank))
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        command = [sys.executable, "-m", "clusterplan", "bench", "collectives", "-b", "1K", "-e", "1K",
                   "-n", "100000000", "-w", "1", "--timeout", "20", "--out", str(out_file)]
        ranks.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True,
                                      stderr=terminal if rank == 0 else subprocess.PIPE))
    os.close(terminal)
    return ranks, master


def read_until(master: int, marker: str, deadline: float) -> str:
    """Rank 0's terminal output until ``marker`` appears (or the terminal closes or time runs out)."""
    text = ""
    while marker not in text and time.monotonic() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:   # the terminal closed: rank 0 is gone
                break
            if not chunk:
                break
            text += chunk.decode(errors="replace")
    return text


def stop_all(ranks) -> None:
    for process in ranks:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_killed_rank_stops_the_others_with_a_clear_message(tmp_path):
    """3 ranks (RANK/WORLD_SIZE/MASTER_*), rank 1 killed mid-run: 0 and 2 exit 1 within the timeout, each
    naming itself and 'a peer died or hung', and --out is not written."""
    out_file = tmp_path / "never.json"
    ranks, master = start_ranks(3, free_port(), out_file)
    try:
        seen = read_until(master, "out-of-place", time.monotonic() + 30)
        assert "all_reduce 1024 B out-of-place" in seen, seen
        ranks[1].kill()
        killed = time.monotonic()
        for process in (ranks[0], ranks[2]):
            process.wait(timeout=20)
        elapsed = time.monotonic() - killed
        seen += read_until(master, "\n", time.monotonic() + 2)
        messages = {0: seen, 2: ranks[2].stderr.read()}
    finally:
        stop_all(ranks)
        os.close(master)
    assert elapsed < 15 and ranks[0].returncode == ranks[2].returncode == 1
    for rank, text in messages.items():
        line = next(line for line in text.splitlines() if "clusterplan: error:" in line)
        assert f"rank {rank} on {socket.gethostname()}: a peer died or hung during all_reduce 1024 B" in line
    assert messages[2].count("\n") == 1 and ranks[0].stdout.read() == ""
    assert not out_file.exists()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_ctrl_c_stops_every_rank_with_130(tmp_path):
    """2 ranks started with srun's variables: SIGINT to each (as a terminal's Ctrl-C) ends both with 130,
    silently, and --out is not written."""
    out_file = tmp_path / "never.json"
    ranks, master = start_ranks(2, free_port(), out_file, variables="srun")
    try:
        seen = read_until(master, "out-of-place", time.monotonic() + 30)
        assert "out-of-place" in seen, seen
        for process in ranks:
            process.send_signal(signal.SIGINT)
        codes = [process.wait(timeout=20) for process in ranks]
        errors = ranks[1].stderr.read()
    finally:
        stop_all(ranks)
        os.close(master)
    assert codes == [130, 130] and errors == ""
    assert not out_file.exists()


# --- under torchrun: bad options and a stopped rank (issue 19 item 11) ---------------------

def test_a_bad_option_under_torchrun_is_said_by_every_rank_that_lives_to_say_it():
    """3 ranks with -c 2: options are checked before the rendezvous and every rank prints the one line, so
    torchrun stopping the others when the first exits cannot lose the reason; each rank exits 2."""
    done = torchrun(3, "-m", "clusterplan", "bench", "collectives", "-c", "2", timeout=120)
    said = [line for line in done.stderr.splitlines() if line.startswith("clusterplan:")]
    assert done.returncode == 1 and said and set(said) == {"clusterplan: error: -c: must be 0 or 1, got 2"}
    codes = re.findall(r"^\s*exitcode\s*:\s*(-?\d+)", done.stderr, flags=re.MULTILINE)
    assert "2" in codes and set(codes) <= {"2", "-15"}   # exit 2, or stopped by torchrun after another did
    assert not re.search(r'File ".*clusterplan', done.stderr) and done.stdout == ""   # torchrun's own traceback only


def worker_pids(parent: int) -> list[int]:
    """The processes ``parent`` started (torchrun's workers), from /proc."""
    children = Path(f"/proc/{parent}/task/{parent}/children")
    return [int(pid) for pid in children.read_text().split()] if children.exists() else []


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the workers from /proc")
def test_a_stopped_rank_under_torchrun_ends_the_job_at_the_timeout_plus_torchruns_grace(tmp_path):
    """3 ranks under torchrun, one SIGSTOPped: the two others name the stall and exit 1 at --timeout, torchrun
    SIGKILLs the stopped one after its fixed 30 s grace (docs/bench.md), nothing is written."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "3",
               "-m", "clusterplan", "bench", "collectives", "-b", "1K", "-e", "1K",
               "-n", "100000000", "-w", "1", "--timeout", "6", "--out", str(tmp_path / "never.json")]
    job = subprocess.Popen(command, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(worker_pids(job.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = worker_pids(job.pid)
        assert len(workers) == 3, "torchrun did not start 3 workers"
        os.kill(workers[1], signal.SIGSTOP)
        stopped = time.monotonic()
        _, errors = job.communicate(timeout=120)
        elapsed = time.monotonic() - stopped
    finally:
        if job.poll() is None:
            for pid in worker_pids(job.pid):
                os.kill(pid, signal.SIGKILL)
            job.kill()
            job.wait()
    said = [line for line in errors.splitlines() if line.startswith("clusterplan: error:")]
    assert job.returncode == 1 and len(said) == 2 and all("a peer died or hung" in line for line in said)
    assert 6 + 30 <= elapsed < 6 + 30 + 30, elapsed
    assert re.search(r"exitcode\s*:\s*-9", errors) and not re.search(r'File ".*clusterplan', errors)
    assert not (tmp_path / "never.json").exists()
