"""`clusterplan accept` runs for real on the CPU: torchrun with gloo, fake nodes, a slowed rank and a killed one."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from clusterplan.cli.main import main  # noqa: E402
from launch_env import clean_env, free_port  # noqa: E402

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures" / "audit"
SCENARIO = "examples/starter-32.toml"
ROOT = HERE.parents[1]
# Loose thresholds for runs on a shared CPU, where four ranks contend for the cores: a fiftyfold slowdown fails.
LOOSE = ("--set", "accept.fail_ratio=0.3", "--set", "accept.warn_ratio=0.4", "--set", "accept.small_fail_ratio=0.1",
         "--set", "accept.small_warn_ratio=0.15")




def ranks(world: int, *args: str, timeout: float = 120, **faults: str) -> list[subprocess.CompletedProcess]:
    """``world`` plain processes with torchrun's variables, through the fault-injecting worker."""
    port = str(free_port())
    started = [subprocess.Popen([sys.executable, str(HERE / "accept_worker.py"), *args], cwd=ROOT,
                                env=clean_env(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                                              MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **faults),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in range(world)]
    done = []
    for process in started:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for other in started:
                other.kill()
            raise
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    """The issue's command under torchrun (gloo, 4 ranks, 2 per node), then calibrate of its document."""
    folder = tmp_path_factory.mktemp("accept")
    document, calibration = folder / "accept.json", folder / "local.toml"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4",
               "-m", "clusterplan", "accept", SCENARIO, "--backend", "gloo", "--ranks-per-node", "2",
               "--json", str(document)]
    done = subprocess.run(command, cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=240)
    calibrated = subprocess.run([sys.executable, "-m", "clusterplan", "calibrate", str(document), "-o",
                                 str(calibration)], cwd=ROOT, env=clean_env(), capture_output=True, text=True,
                                timeout=60)
    return done, json.loads(document.read_text()), calibrated, calibration


def test_the_issue_command_runs_every_phase_and_judges_each_check(clean_run):
    """Every phase ran; every measurement has a prediction (the design's H100 figures) and a verdict; exit 4
    on rank 0 (a CPU fails an H100 design, saying to calibrate), which torchrun reports."""
    done, doc, _, _ = clean_run
    assert doc["schema"] == "clusterplan.accept/1" and doc["expectations"] == "design"
    assert [p["phase"] for p in doc["run"]["phases"]] == ["audit", "device", "intra-node", "node pairs", "cluster"]
    assert doc["run"]["world_size"] == 4 and doc["run"]["num_nodes"] == 2 and doc["run"]["backend"] == "gloo"
    phases = {c["phase"] for c in doc["checks"]}
    assert phases == {"audit", "device", "intra-node", "node pairs", "cluster"}
    collectives = [c for c in doc["checks"] if c["phase"] in ("intra-node", "node pairs", "cluster")]
    assert {c["check"] for c in collectives} == {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}
    assert all(c["predicted"] > 0 and c["ratio"] == pytest.approx(c["measured"] / c["predicted"], rel=1e-6)
               for c in collectives)
    assert doc["verdict"] == "fail" and doc["exit_code"] == 4 and "exitcode  : 4" in done.stderr
    assert all("--calibration" in c["cause"] for c in doc["checks"] if c["verdict"] == "fail")
    audit = [c for c in doc["checks"] if c["phase"] == "audit"]
    assert audit and all(c["verdict"] == "skip" for c in audit)     # no nvidia-smi or ibstat on this machine


def test_calibrate_reads_the_acceptance_document(clean_run):
    """The clean run calibrates the collectives of both group sizes and records the device rates."""
    _, _, calibrated, calibration = clean_run
    assert calibrated.returncode == 0, calibrated.stderr
    text = calibration.read_text()
    assert "[rates]" in text and "gemm = " in text and "h2h = " in text
    for op in ("all_reduce", "all_gather", "reduce_scatter", "alltoall"):
        assert f'op = "{op}"\nnum_ranks = 2' in text and f'op = "{op}"\nnum_ranks = 4' in text


def test_a_slowed_rank_fails_with_its_name_and_cause(clean_run, tmp_path):
    """Rank 3's multiplies throttled fiftyfold (CPU rates here vary up to sixfold between ranks): judged
    against the clean run's calibration, its GEMM fails, named "rank 3" on node x/1, with throttling as the
    cause; rank 0 exits 4."""
    _, _, _, calibration = clean_run
    out = tmp_path / "slow.json"
    done = ranks(4, "accept", SCENARIO, "--backend", "gloo", "--ranks-per-node", "2", "--calibration",
                 str(calibration), "--json", str(out), *LOOSE, ACCEPT_SLOW_RANK="3", ACCEPT_SLOW_FACTOR="50")
    doc = json.loads(out.read_text())
    assert done[0].returncode == 4, [(c["subject"], c["check"], c["ratio"]) for c in doc["checks"] if c["ratio"]]
    gemm = {c["subject"]: c for c in doc["checks"] if c["check"].startswith("gemm")}
    slowed = gemm["rank 3"]
    assert slowed["verdict"] == "fail" and "throttling" in slowed["cause"]
    assert slowed["ratio"] == min(c["ratio"] for c in gemm.values())
    node = slowed["nodes"][0]
    assert node.endswith("/1") and next(n for n in doc["nodes"] if n["name"] == node)["verdict"] == "fail"
    assert f"FAIL  {node}: device, rank 3, gemm fp32 512^3" in done[0].stdout


def test_a_killed_rank_is_a_fail_naming_its_host_never_a_hang(tmp_path):
    """Rank 3 dies at its first alltoall: the others stop within the timeout, and rank 0's document names
    rank 3 and its node as dead or hung during the intra-node phase; exit 4."""
    out = tmp_path / "dead.json"
    began = time.monotonic()
    done = ranks(4, "accept", SCENARIO, "--backend", "gloo", "--ranks-per-node", "2", "--timeout", "10",
                 "--json", str(out), ACCEPT_KILL_RANK="3")
    assert time.monotonic() - began < 100
    assert done[3].returncode == 9 and done[0].returncode == 4, done[0].stderr
    assert all(d.returncode == 4 and "a peer died or hung" in d.stderr for d in done[1:3])
    doc = json.loads(out.read_text())
    (dead,) = [c for c in doc["checks"] if c["phase"] == "liveness"]
    assert dead["subject"].startswith("rank 3 on ") and dead["subject"].endswith("/1")
    assert dead["verdict"] == "fail" and "intra-node" in dead["cause"]
    assert doc["exit_code"] == 4 and doc["run"]["failure"]["missing"] == [3]


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_only_of_the_degraded_captures(capsys, tmp_path):
    """--audit-only on captures: the degraded link, the down port and the wrong NUMA fail; exit 4."""
    for source, name in (("h100-topo-wrong-numa.txt", "topo.txt"), ("h100-smi-q-degraded-link.txt", "smi-q.txt"),
                         ("a100-ibstat-down-port.txt", "ibstat.txt")):
        (tmp_path / name).write_text((FIXTURES / source).read_text())
    code, out, err = run_cli(capsys, "accept", SCENARIO, "--audit", str(tmp_path), "--audit-only",
                             "--format", "json")
    doc = json.loads(out)
    assert code == 4 and err == "" and doc["run"] is None
    failed = {(c["check"], c["subject"]) for c in doc["checks"] if c["verdict"] == "fail"}
    assert {("numa", "GPU6"), ("pcie", "GPU 00000000:19:00.0"), ("port", "mlx5_1 port 1")} <= failed


@pytest.mark.parametrize("argv, message", [
    (("--set", "accept.fail_ratio=2"), "accept.fail_ratio: must be in [0.05, 1]"),
    (("--set", "accept.nonsense=1"), "accept.nonsense: unknown key"),
    (("--audit-only",), "--audit-only: needs --audit DIR"),
    (("--audit", "missing-folder"), "missing-folder: --audit: not a folder of captures"),
    (("--sizes", "12Q"), "--sizes:"),
    (("--ranks-per-node", "0"), "--ranks-per-node: must be >= 1"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run_cli(capsys, "accept", SCENARIO, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_a_capture_that_is_not_the_tools_format_is_bad_input(capsys, tmp_path):
    (tmp_path / "smi-q.txt").write_text("GPU 00000000:19:00.0\n    Product Name : H100\n")
    code, _, err = run_cli(capsys, "accept", SCENARIO, "--audit", str(tmp_path), "--audit-only")
    assert code == 2 and "smi-q.txt: not `nvidia-smi -q` output" in err and err.count("\n") == 1
