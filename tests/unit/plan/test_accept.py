"""plan.accept judges measurements against the design or a calibration; thresholds come from [accept]."""

import pytest

from clusterplan.bench.accept import AcceptRun, CollectiveRun, Settings
from clusterplan.bench.calibrate import calibrate
from clusterplan.bench.node_pairs import Node
from clusterplan.errors import ConfigError
from clusterplan.perf.collectives import bus_factor
from clusterplan.plan.accept import PCIE_EFFICIENCY, accept
from clusterplan.plan.accept_calibration import calibration_inputs
from clusterplan.report.accept import accept_document
from clusterplan.spec import load_spec

SIZES = (256 << 10, 4 << 20)
NODES = (Node(name="a/0", ranks=(0, 1)), Node(name="a/1", ranks=(2, 3)))


def settings(kind="cpu", dtype="fp32"):
    return Settings(backend="gloo" if kind == "cpu" else "nccl", device_kind=kind, sizes=SIZES, gemm_size=512,
                    gemm_dtype=dtype, memcpy_bytes=16 << 20, iterations=5, warmup=1, pairing="auto",
                    ranks_per_node=2)


def run(*, slow_rank=None, slow_link=1.0, kind="cpu", failure=None, dtype="fp32"):
    """Two nodes of two ranks: every GEMM 1e11 FLOP/s, copies 5e9 B/s, collectives at 1 ms + S / 1 GB/s."""
    devices = {rank: {"gemm_flops_per_s": 1e11 / (10 if rank == slow_rank else 1), "h2d_Bps": 5e9, "d2h_Bps": 5e9,
                      "h2h_Bps": 5e9} for rank in range(4)}
    def rows(scale=1.0):
        return tuple((size, (1e-3 + size / 1e9) * scale, 0) for size in SIZES)
    collectives = [CollectiveRun(phase="intra-node", group=node.name, op=op, ranks=node.ranks, num_nodes=1,
                                 rows=rows(slow_link if node.name == "a/1" else 1.0))
                   for node in NODES for op in ("all_reduce", "alltoall")]
    collectives.append(CollectiveRun(phase="node pairs", group="a/0 + a/1", op="all_reduce", ranks=(0, 1, 2, 3),
                                     num_nodes=2, rows=rows()))
    collectives.append(CollectiveRun(phase="cluster", group="cluster", op="all_reduce", ranks=(0, 1, 2, 3),
                                     num_nodes=2, rows=rows()))
    return AcceptRun(settings=settings(kind, dtype), launcher="torchrun", world_size=4, hosts=("a",) * 4,
                     nodes=NODES, audits={"a/0": {}, "a/1": {}}, devices=devices, collectives=tuple(collectives),
                     phases=(("audit", 0.1),), failure=failure, elapsed_s=1.0)


def calibration_of(clean):
    """What `clusterplan calibrate` makes of a clean run's document."""
    documents, rates = calibration_inputs(accept_document(accept(load_spec("examples/starter-32.toml"), clean)),
                                          source="clean.json")
    return calibrate(documents, rates=rates)


SPEC = load_spec("examples/starter-32.toml")


def test_a_run_equal_to_its_calibration_passes():
    """Judged against a calibration of itself, every measured check has a prediction, a ratio of 1 and passes."""
    result = accept(SPEC, run(), calibration=calibration_of(run()), calibration_source="clean.toml")
    measured = [c for c in result.checks if c.phase != "audit"]
    assert measured and all(c.verdict == "pass" and c.ratio == pytest.approx(1.0, rel=1e-3) for c in measured)
    assert result.verdict == "pass" and result.expectations == "calibration clean.toml"
    assert accept_document(result)["exit_code"] == 0


def test_a_slowed_rank_fails_with_its_node_and_cause():
    """Rank 3's GEMM at a tenth of the calibrated rate fails, on node a/1, as throttling; the other ranks pass."""
    result = accept(SPEC, run(slow_rank=3), calibration=calibration_of(run()))
    failed = [c for c in result.checks if c.verdict == "fail"]
    assert [(c.nodes, c.subject, c.check) for c in failed] == [(("a/1",), "rank 3", "gemm fp32 512^3")]
    assert failed[0].ratio == pytest.approx(0.1) and "throttling" in failed[0].cause
    doc = accept_document(result)
    assert doc["exit_code"] == 4 and doc["nodes"][0]["name"] == "a/1" and doc["nodes"][0]["verdict"] == "fail"


def test_a_slow_intra_node_fabric_fails_by_size_thresholds():
    """Collectives 1.6x slower: a ratio of 0.625 fails under the small-size pair only when set stricter."""
    calibration = calibration_of(run())
    loose = accept(SPEC, run(slow_link=1.6), calibration=calibration)
    assert {c.verdict for c in loose.checks if c.nodes == ("a/1",) and c.phase == "intra-node"} == {"warn"}
    strict = accept(load_spec("examples/starter-32.toml", ["accept.small_fail_ratio=0.7",
                                                           "accept.small_warn_ratio=0.8"]),
                    run(slow_link=1.6), calibration=calibration)
    failed = [c for c in strict.checks if c.verdict == "fail"]
    assert failed and all(c.nodes == ("a/1",) and "NVLink" in c.cause for c in failed)


def test_a_dead_rank_is_a_fail_naming_its_node():
    failure = {"during": "phase 3 of 5, intra-node", "detail": "Connection reset by peer", "missing": [3]}
    result = accept(SPEC, run(failure=failure))
    (dead,) = [c for c in result.checks if c.phase == "liveness"]
    assert dead.subject == "rank 3 on a/1" and dead.verdict == "fail" and "intra-node" in dead.cause


def test_against_the_design_on_gpus():
    """bf16 GEMM against peak x efficiency x k/(k+k0); copies against the PCIe rate; collectives the model's."""
    result = accept(SPEC, run(kind="cuda", dtype="bf16"))
    gemm = next(c for c in result.checks if c.check.startswith("gemm"))
    assert gemm.predicted == pytest.approx(989.4 * 0.59 * 512 / (512 + 256))
    h2d = next(c for c in result.checks if c.check == "h2d")
    assert h2d.predicted == pytest.approx(64 * PCIE_EFFICIENCY)
    intra = next(c for c in result.checks if c.phase == "intra-node")
    assert intra.predicted > 0 and intra.ratio == pytest.approx(intra.measured / intra.predicted)
    assert intra.measured == pytest.approx(SIZES[0] / (1e-3 + SIZES[0] / 1e9) * bus_factor("all_reduce", 2) / 1e9)


def test_a_cpu_run_against_the_design_says_to_calibrate():
    result = accept(SPEC, run())
    assert result.verdict == "fail"
    assert all("--calibration" in c.cause for c in result.checks if c.verdict == "fail")
    assert {c.verdict for c in result.checks if c.check.startswith("gemm")} == {"skip"}   # no fp32 in the design


@pytest.mark.parametrize("override, message", [
    ("accept.fail_ratio=0", "accept.fail_ratio: must be in [0.05, 1]"),
    ("accept.warn_ratio=0.5", "accept.warn_ratio: must be in [fail_ratio"),
    ("accept.large_bytes=\"2TiB\"", "accept.large_bytes: must be between"),
    ("accept.fail=0.5", "accept.fail: unknown key"),
])
def test_thresholds_out_of_range_name_the_key(override, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_spec("examples/starter-32.toml", [override])
