"""Every command that reports a quantity reports the value `plan --format json` does, for the same scenario."""

import json
import random
from pathlib import Path

import pytest

from clusterplan.cli.main import main

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted(str(path) for path in (ROOT / "examples").glob("*.toml"))
WORKLOAD = ["--set", 'workload.model="llama2-13b"', "--set", 'workload.tokens="2T"']
FAST = ["--samples", "200"]


def swf_trace(path: Path, *, jobs: int = 400, seed: int = 7) -> Path:
    """A Standard Workload Format trace of ``jobs`` jobs of 8 to 64 processors (GPUs), arriving over two weeks."""
    rng = random.Random(seed)
    lines = ["; a synthetic trace for the consistency test"]
    submit = 0
    for job in range(1, jobs + 1):
        submit += rng.randint(60, 3000)
        run = rng.randint(600, 36_000)
        gpus = rng.choice((8, 16, 32, 64))
        fields = [job, submit, 0, run, gpus, run, -1, gpus, run * 2, -1, 1, 1 + job % 5, 1, -1, 1, 1, -1, -1]
        lines.append(" ".join(str(field) for field in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def scenarios(tmp: Path) -> list[tuple[str, str, list[str]]]:
    """(name, scenario file, --set arguments): every example, and the reference with a trace-derived
    utilization, with a workload, and with both."""
    trace = ["--set", f'finance.utilization_from_trace="{swf_trace(tmp / "trace.swf")}"']
    reference = str(ROOT / "examples" / "reference-128x-h100.toml")
    cases = [(Path(path).stem, path, []) for path in EXAMPLES]
    return cases + [("trace", reference, trace), ("trace+workload", reference, trace + WORKLOAD),
                    ("workload", reference, WORKLOAD)]


def document(capsys, *argv: str) -> dict:
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return scenarios(tmp_path_factory.mktemp("traces"))


def test_every_command_agrees_with_plan(cases, capsys):
    """TCO, cost per GPU-hour, utilization, step time, time- and cost-to-train and goodput: one value each."""
    starter = str(ROOT / "examples" / "starter-32.toml")
    for name, path, sets in cases:
        planned = document(capsys, "plan", path, *sets)
        cost, training = planned["cost"], planned["training"]
        utilization = planned["scenario"]["finance"]["utilization"]
        if name.startswith("trace"):
            assert utilization != 0.8, f"{name}: the trace did not set the utilization"
        report = document(capsys, "report", path, *sets, *FAST)
        assert report["plan"] == planned, name
        sensitivity = document(capsys, "sensitivity", path, *sets, *FAST)
        assert sensitivity["nominal"]["tco_usd"] == pytest.approx(cost["tco_usd"], rel=1e-12), name
        assert sensitivity["nominal"]["cost_per_gpu_hour_usd"] == pytest.approx(cost["cost_per_gpu_hour_usd"],
                                                                                rel=1e-12), name
        assert sensitivity["scenario"]["finance"]["utilization"] == utilization, name
        compared = document(capsys, "compare", path, starter, *sets)
        headline = {figure["key"]: figure["values"][0] for figure in compared["headlines"]}
        for key in ("tco_usd", "cost_per_gpu_hour_usd"):
            assert headline[f"cost.{key}"] == cost[key], f"{name}: compare {key}"
        assert compared["scenarios"][0]["finance"]["utilization"] == utilization, name
        if training is None:
            continue
        trained = document(capsys, "train", path, *sets)
        for key in ("step_time_s", "time_to_train_s", "cost_to_train_usd", "goodput",
                    "effective_time_to_train_s", "effective_cost_to_train_usd"):
            assert trained[key] == training[key], f"{name}: train {key}"
            assert headline[f"training.{key}"] == training[key], f"{name}: compare {key}"
        assert trained["scenario"]["finance"]["utilization"] == utilization, name
        row = next(row for row in report["training"]["sweep"] if row["gpus"] == training["num_gpus"])
        assert row["step_time_s"] == training["step_time_s"], name
        assert row["time_to_train_s"] == training["time_to_train_s"], name
        assert row["cost_to_train_usd"]["own"] == training["cost_to_train_usd"], name
        reliability = document(capsys, "reliability", path, *sets)
        assert reliability["goodput"] == training["goodput"], name


def test_schedule_prices_a_gpu_hour_as_plan_does_at_the_achieved_utilization(tmp_path, capsys):
    """The schedule's cost per delivered GPU-hour under a policy is the plan's with that policy's trace utilization."""
    trace = str(swf_trace(tmp_path / "trace.swf"))
    for policy in ("fifo", "easy"):
        replayed = document(capsys, "schedule", trace, "--policy", policy)
        planned = document(capsys, "plan", "--set", f'finance.utilization_from_trace="{trace}"',
                           "--set", f'finance.utilization_policy="{policy}"')
        assert replayed["utilization"] == planned["scenario"]["finance"]["utilization"]
        assert replayed["results"][0]["cost_per_gpu_hour_usd"] == pytest.approx(
            planned["cost"]["cost_per_gpu_hour_usd"], rel=1e-12)


def test_train_prices_at_the_trace_utilization(cases, capsys):
    """Regression: train applied the default utilization where plan used the trace's (issue 13)."""
    _, path, sets = next(case for case in cases if case[0] == "trace+workload")
    planned = document(capsys, "plan", path, *sets)
    trained = document(capsys, "train", path, *sets)
    assert trained["cost_to_train_usd"] == planned["training"]["cost_to_train_usd"]
    assert trained["scenario"]["finance"] == planned["scenario"]["finance"]
