"""`clusterplan schedule`: table, JSON fields, --compare, cluster sizing, bad input."""

import json

import pytest

from clusterplan.cli.main import main

SWF = """\
; MaxProcs: 16
    1    0  -1   100  8  -1 -1  8   200  -1 1  1  1 -1  1  1 -1 -1
    2   10  -1   100 16  -1 -1 16   100  -1 1  2  1 -1  1  1 -1 -1
    3   20  -1    50  8  -1 -1  8    60  -1 1  1  1 -1  1  1 -1 -1
    4   30  -1   500  4  -1 -1  4  1000  -1 1  3  1 -1  1  1 -1 -1
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def swf(tmp_path):
    path = tmp_path / "small.swf"
    path.write_text(SWF)
    return str(path)


def test_table_names_trace_cluster_and_policy(capsys, swf):
    """Default: EASY on the reference cluster (16 x 8); the table has a row for the policy and the users."""
    code, out, err = run(capsys, "schedule", swf)
    assert code == 0 and err == ""
    assert "4 jobs (swf)" in out and "16 nodes x 8 GPUs = 128 GPUs" in out
    assert "easy" in out and "Fair-share outcome" in out and "Utilization" in out


def test_json_fields(capsys, swf):
    """JSON: the schema and every summary field, numbers as numbers; the cluster follows --gpus."""
    code, out, _ = run(capsys, "schedule", swf, "--policy", "conservative", "--gpus", "16", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "clusterplan.schedule/1" and doc["policy"] == "conservative"
    for key in ("num_jobs", "utilization", "mean_wait_s", "median_wait_s", "p95_wait_s", "mean_bounded_slowdown",
                "makespan_s"):
        assert isinstance(doc[key], (int, float)), key
    assert doc["num_jobs"] == 4 and doc["cluster"]["num_gpus"] == 16 and doc["cluster"]["num_nodes"] == 2
    assert doc["results"][0]["timeline"]["utilization"] and doc["scenario"]["cluster"]["gpu"] == "h100-sxm"


def test_compare_runs_every_policy(capsys, swf):
    """--compare: one result per policy, in one table; no top-level policy field."""
    code, out, _ = run(capsys, "schedule", swf, "--compare", "--gpus", "16", "--format", "json")
    doc = json.loads(out)
    assert [r["policy"] for r in doc["results"]] == ["fifo", "easy", "conservative", "fairshare"]
    assert "policy" not in doc and doc["policies"] == ["fifo", "easy", "conservative", "fairshare"]
    code, out, _ = run(capsys, "schedule", swf, "--compare", "--gpus", "16")
    assert code == 0 and all(name in out for name in ("fifo", "easy", "conservative", "fairshare"))


def test_scenario_overrides_and_nodes(capsys, swf):
    """--set cluster.gpus_per_node=1 --nodes 16 is a 16-processor machine, as the SWF trace had."""
    code, out, _ = run(capsys, "schedule", swf, "--set", "cluster.gpus_per_node=1", "--nodes", "16",
                       "--policy", "fifo", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["cluster"] == {"num_nodes": 16, "gpus_per_node": 1, "num_gpus": 16,
                                            "nodes_per_leaf": doc["cluster"]["nodes_per_leaf"],
                                            "topology_aware": False}
    assert doc["median_wait_s"] == 130 and doc["makespan_s"] == 700  # waits 0, 90, 180, 170; J4 ends at 700


def test_synthetic_trace_topology_aware_and_output_file(capsys, tmp_path):
    """A synthetic trace on the reference cluster on two tiers (two leaves) with leaf-aware placement, to -o FILE."""
    target = tmp_path / "out.json"
    code, out, _ = run(capsys, "schedule", "synthetic:jobs=300,load=0.8,seed=2", "--topology-aware",
                       "--set", "network.tiers=2",
                       "--format", "json", "-o", str(target))
    doc = json.loads(target.read_text())
    assert code == 0 and out == "" and doc["cluster"]["nodes_per_leaf"] == 8 and doc["cluster"]["topology_aware"]
    assert doc["num_jobs"] == 300


def test_skip_bad(capsys, tmp_path):
    """A bad line stops the run with exit 2 unless --skip-bad, which counts it."""
    path = tmp_path / "bad.swf"
    path.write_text(SWF + "this is not a job\n")
    code, _, err = run(capsys, "schedule", str(path))
    assert code == 2 and err.count("\n") == 1 and f"{path}:6: bad SWF line" in err
    code, out, _ = run(capsys, "schedule", str(path), "--skip-bad", "--format", "json")
    assert code == 0 and json.loads(out)["trace"]["num_bad_lines_skipped"] == 1


@pytest.mark.parametrize("argv, message", [
    (["schedule", "missing.swf"], "missing.swf: cannot read trace"),
    (["schedule", "{swf}", "--gpus", "12"], "--gpus: must be a positive multiple of the 8 GPUs per node"),
    (["schedule", "{swf}", "--nodes", "0"], "--nodes: must be between 1 and 100,000, got 0"),
    (["schedule", "{swf}", "--nodes", "1000000000"], "--nodes: must be between 1 and 100,000"),
    (["schedule", "synthetic:load=-1"], "load: must be a number from 1e-06 to 100, got -1"),
    (["schedule", "synthetic:seed=-1"], "synthetic:seed=-1: seed: must be an integer from 0 to"),
    (["schedule", "synthetic:gpus=1:inf"], "gpus: needs GPU counts from 1 to 1,000,000 with finite weights"),
    (["schedule", "synthetic:jobs=999999999999"], "jobs: must be an integer from 1 to 1,000,000, got 999999999999"),
    (["schedule", "synthetic:jobs=2000000"], "jobs: must be an integer from 1 to 1,000,000, got 2000000"),
    (["schedule", "{csv_over_128_kib}"], ":3: bad CSV line: a cell longer than 131,072 characters (128 KiB)"),
    (["schedule", "{swf}", "--policy", "fairshare", "--priority", "speed=3"], "--priority: unknown key"),
    (["schedule", "{swf}", "--policy", "sjf"], "invalid choice: 'sjf'"),
    (["schedule", "{swf}", "--set", "cluster.num_nodes=0"], "cluster.num_nodes: must be > 0"),
    (["schedule", "{swf}", "--policy", "conservative", "--depth", "0"], "--depth: must be between 1 and"),
    (["schedule", "{swf}", "--depth", "5"], "--depth: applies to conservative backfilling only"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, swf, argv, message):
    """Bad input: exit 2 and one line on stderr naming the problem, within seconds (issue 31's synthetic specs and
    CSV cell are refused before any work)."""
    big = tmp_path / "big.csv"
    big.write_text('job_id,gpu_num,submit_time,duration\n1,1,0,10\n2,1,5,"' + "x" * 140_000 + '"\n')
    argv = [a.replace("{swf}", swf).replace("{csv_over_128_kib}", str(big)) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_depth_bounds_the_conservative_reservations(capsys, tmp_path):
    """--depth N: only the first N queued jobs hold reservations; jobs past them wait, so waits grow at depth 1."""
    trace = "synthetic:jobs=300,load=2,seed=3"
    code, out, _ = run(capsys, "schedule", trace, "--policy", "conservative", "--format", "json")
    unbounded = json.loads(out)
    code_1, out_1, _ = run(capsys, "schedule", trace, "--compare", "--depth", "1", "--format", "json")
    bounded = {row["policy"]: row for row in json.loads(out_1)["results"]}
    assert code == code_1 == 0
    assert bounded["conservative"]["mean_wait_s"] > unbounded["mean_wait_s"] > 0


def test_cli_lists_match_the_library():
    """The CLI's spelled-out policy and format names are the library's."""
    from clusterplan.cli.schedule import POLICY_NAMES, TRACE_FORMATS
    from clusterplan.sched import POLICIES
    from clusterplan.sched.traces import FORMATS

    assert POLICY_NAMES == tuple(POLICIES) and TRACE_FORMATS == FORMATS
