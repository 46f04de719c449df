"""`clusterplan reliability`: the table, the JSON envelope, options, and bad input."""

import json

import pytest

from clusterplan.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_names_the_job_and_its_goodput(capsys):
    """Header with model and cluster, summary rows, one row per cause, storage and the job-size table."""
    code, out, err = run(capsys, "reliability")
    assert code == 0 and err == ""
    assert out.startswith("clusterplan reliability: llama2-13b (13.0B parameters) on 128 x h100-sxm (16 nodes), 21 days")
    for text in ("Job mean time to interruption", "Interval: Young / Daly / used", "Goodput", "Spare nodes",
                 "Interruptions by cause", "network-switch", "software", "Storage", "By job size"):
        assert text in out


def test_gpus_sizes_the_cluster_and_job_gpus_its_job(capsys):
    """--gpus 256 is the cluster (cluster.num_gpus, as in plan), the job taking it all; --job-gpus 64 a job of it
    (issue 29: --gpus has one meaning)."""
    code, out, _ = run(capsys, "reliability", "--format", "json", "--gpus", "256")
    doc = json.loads(out)
    assert code == 0 and doc["scenario"]["cluster"]["num_nodes"] == 32 and doc["job"]["num_gpus"] == 256
    code, out, _ = run(capsys, "reliability", "--format", "json", "--gpus", "256", "--job-gpus", "64")
    doc = json.loads(out)
    assert code == 0 and doc["scenario"]["cluster"]["num_nodes"] == 32 and doc["job"]["num_gpus"] == 64


def test_json_envelope(capsys):
    """schema, the issue's fields, the breakdown by cause, and the effective scenario echoed back."""
    code, out, _ = run(capsys, "reliability", "--format", "json", "--days", "30", "--job-gpus", "64")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "clusterplan.reliability/1"
    for key in ("interruptions_per_day", "expected_interruptions", "mtti_hours", "checkpoint_bytes",
                "checkpoint_write_s", "optimal_interval_s", "goodput", "interruptions_by_cause", "waste_by_cause",
                "storage", "spares", "by_job_size", "warnings", "scenario"):
        assert key in doc
    assert set(doc["optimal_interval_s"]) == {"young", "daly"}
    assert doc["job"] == {"num_gpus": 64, "num_nodes": 8, "num_links": 64, "num_switches": 1.5, "days": 30.0}
    # its leaf and half the spine (automatic tiers: two leaves and a spine) are the job's share
    assert doc["expected_interruptions"] == pytest.approx(doc["interruptions_per_day"] * 30)
    assert doc["mtti_hours"] == pytest.approx(24 / doc["interruptions_per_day"])
    assert sum(doc["interruptions_by_cause"].values()) == pytest.approx(doc["interruptions_per_day"])
    assert sum(doc["waste_by_cause"].values()) == pytest.approx(1 - doc["goodput"])
    assert doc["scenario"]["reliability"]["days"] == 30 and doc["scenario"]["workload"]["gpus"] == 64
    assert [row["num_gpus"] for row in doc["by_job_size"]] == [8, 16, 32, 64, 128]
    assert all(cause["source"] for cause in doc["causes"])


def test_interval_option_and_model_from_the_scenario(capsys, tmp_path):
    """--checkpoint-interval-min fixes the interval; [workload] model picks the model."""
    scenario = tmp_path / "s.toml"
    scenario.write_text('[workload]\nmodel = "llama2-70b"\n')
    code, out, _ = run(capsys, "reliability", str(scenario), "--checkpoint-interval-min", "10", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["model"]["name"] == "llama2-70b"
    assert doc["interval_s"] == 600 and doc["interval_chosen_by"] == "scenario"


def test_output_file_is_written_whole(capsys, tmp_path):
    """-o writes the document to the file and nothing to stdout."""
    target = tmp_path / "r.json"
    code, out, _ = run(capsys, "reliability", "--format", "json", "-o", str(target))
    assert code == 0 and out == "" and json.loads(target.read_text())["schema"] == "clusterplan.reliability/1"


@pytest.mark.parametrize("argv, message", [
    (["--days", "0"], "--days: must be a number of days > 0, got 0"),
    (["--days", "-3"], "--days: must be a number of days > 0, got -3"),
    (["--days", "nan"], "--days: must be a number of days > 0"),
    (["--days", "many"], "argument --days: invalid float value"),
    (["--checkpoint-interval-min", "0"], "--checkpoint-interval-min: must be > 0 minutes"),
    (["--checkpoint-interval-min", "-10"], "--checkpoint-interval-min: must be > 0 minutes"),
    (["--job-gpus", "0"], "--job-gpus: must be >= 1, got 0"),
    (["--job-gpus", "12"], "--job-gpus: 12 GPUs are not whole nodes of 8"),
    (["--job-gpus", "256"], "--job-gpus: the cluster has 128 GPUs, got 256"),
    (["--gpus", "0"], "--gpus: must be a whole number of GPUs >= 1, got 0"),
    (["--gpus", "12"], "--gpus: 12 GPUs are not whole nodes of 8"),
    (["--gpus", "128", "--job-gpus", "256"], "--job-gpus: the cluster has 128 GPUs, got 256"),
    (["--set", "reliability.days=0"], "--set reliability.days=0: reliability.days: must be > 0, got 0"),
    (["--set", "reliability.checkpoint_interval_min=-5"], "reliability.checkpoint_interval_min: must be >= 0"),
    (["--set", "reliability.failure_rates={ gpu = 0 }"], "reliability.failure_rates.gpu: must be > 0"),
    (["--set", "reliability.failure_rates={ gpu = -1.5 }"], "reliability.failure_rates.gpu: must be > 0"),
    (["--set", "reliability.failure_rates={ gpus = 1 }"], "'gpus' is not among reliability.failures"),
    (["--set", "reliability.failures=[]"], "reliability.failures: must name at least one failure cause"),
    (["--set", "reliability.failure_rates={ software = \"high\" }"],
     "reliability.failure_rates.software: expected a number, got a string 'high'"),
    (["--set", "reliability.failure_rates=3"], "reliability.failure_rates: expected a table, got an integer 3"),
    (["--set", "reliability.failures=\"software\""], "reliability.failures: expected a list, got a string"),
    (["--set", "reliability.failures=[\"gpu\", \"cosmic-rays\"]"], "unknown failure id 'cosmic-rays'"),
    (["--set", "reliability.spare_confidence=1"], "reliability.spare_confidence: must be in (0, 1)"),
    (["--set", "workload.model=llama9"], "workload.model: unknown model 'llama9'"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    """Zero or negative days, intervals and rates, unknown causes or models: one line, exit 2."""
    code, out, err = run(capsys, "reliability", *argv)
    first, *candidates = err.strip().splitlines()   # an unknown model's candidates follow on indented lines
    assert code == 2 and out == "" and message in first and all(line.startswith("  ") for line in candidates)


def test_scenario_file_errors_name_the_line(capsys, tmp_path):
    """A bad [reliability] key in a file is reported with its file and line."""
    scenario = tmp_path / "s.toml"
    scenario.write_text("[reliability]\n\ndays = -1\n")
    code, _, err = run(capsys, "reliability", str(scenario))
    assert code == 2 and f"{scenario}:3: reliability.days: must be > 0, got -1" in err
