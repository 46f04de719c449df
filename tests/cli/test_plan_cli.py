"""Golden CLI tests, in process: main(argv) -> exit code, captured stdout/stderr."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clusterplan.cli.main import main

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.toml"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_table_has_every_section(capsys):
    """The default plan prints the summary, storage, BoM, opex, TCO, cloud comparison and warnings."""
    code, out, err = run(capsys, "plan")
    assert code == 0 and err == ""
    for heading in ("Summary", "Storage: ", "Bill of materials", "Opex per year", "TCO =",
                    "Renting the same GPU-hours", "Hybrid", "Warnings"):
        assert heading in out
    assert out.index("Summary") < out.index("Bill of materials") < out.index("Warnings")


def test_plan_json_envelope(capsys):
    """--format json: schema, effective scenario, design, cost, cloud and warnings, numbers as numbers."""
    code, out, _ = run(capsys, "plan", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "clusterplan.plan/1"
    assert doc["scenario"]["cluster"] == {"gpu": "h100-sxm", "num_nodes": 16, "gpus_per_node": 8, "server": ""}
    design = doc["design"]
    for key in ("num_gpus", "num_nodes", "num_racks", "it_power_kw", "facility_power_kw"):
        assert isinstance(design[key], (int, float))
    assert design["num_gpus"] == 128
    assert {"tiers", "num_switches", "num_links", "bisection_bw_Bps_per_gpu"} <= set(design["fabric"])
    assert design["fabric"]["tiers"] == 2   # tiers = 0 (auto): 128 NICs need two leaves of 64 down-ports
    cost = doc["cost"]
    for key in ("capex_usd", "one_off_usd", "tco_usd", "npv_usd", "years", "cost_per_gpu_hour_usd"):
        assert isinstance(cost[key], (int, float))
    assert cost["capex_usd"] == pytest.approx(sum(line["total_usd"] for line in cost["bom"]))
    opex = cost["opex_usd_per_year"]
    assert opex["total"] == pytest.approx(sum(v for k, v in opex.items() if k != "total"))
    assert set(cost["bom"][0]) >= {"category", "item", "quantity", "unit_price_usd", "total_usd", "source"}
    for offer in doc["cloud"]:
        assert {"offer", "pricing", "usd_per_year", "breakeven_months"} <= set(offer)
    assert all(isinstance(w, str) for w in doc["warnings"])


def test_plan_json_and_table_show_the_burst_buffer(capsys, catalog):
    """design.burst_buffer: null without one; 600 TB of 250-TB nvme-pfs blocks is 3 blocks, with the storage
    keys (tier, capacity, blocks, bandwidth), and the terminal's Storage line names it."""
    doc = json.loads(run(capsys, "plan", "--format", "json")[1])
    assert doc["design"]["burst_buffer"] is None
    argv = ("plan", "--set", 'storage.burst_buffer="nvme-pfs"', "--set", "storage.burst_buffer_tb=600")
    code, out, _ = run(capsys, *argv, "--format", "json")
    assert code == 0
    burst = json.loads(out)["design"]["burst_buffer"]
    tier = catalog.get("storage", "nvme-pfs")
    assert tier.unit_capacity_tb == 250 and set(burst) == set(doc["design"]["storage"])
    assert burst == {"tier": "nvme-pfs", "usable_tb": 600, "rule": "storage.burst_buffer_tb", "units": 3,
                     "read_Bps": 3 * tier.unit_read_Bps, "write_Bps": 3 * tier.unit_write_Bps}
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "burst buffer: 600 TB on 3 x nvme-pfs" in out


def test_set_is_echoed_and_applied(capsys):
    """--set overrides reach the design and are echoed in the scenario."""
    code, out, _ = run(capsys, "plan", "--format", "json", "--set", "cluster.num_nodes=4",
                       "--set", "network.oversubscription=2")
    doc = json.loads(out)
    assert code == 0
    assert doc["scenario"]["cluster"]["num_nodes"] == 4
    assert doc["scenario"]["network"]["oversubscription"] == 2.0
    assert doc["design"]["num_gpus"] == 32


@pytest.mark.parametrize("argv, message", [
    (["plan", "--set", "cluster.num_nodes=0"], "cluster.num_nodes: must be > 0"),
    (["plan", "--set", "cluster.gpus_per_node=-8"], "cluster.gpus_per_node: must be > 0"),
    (["plan", "--set", "cluster.gpu=h100"], "did you mean 'h100-sxm'"),
    (["plan", "--set", "cluster.colour=red"], "cluster.colour: unknown key"),
    (["plan", "--set", "finance.years=three"], "finance.years: expected an integer"),
    (["plan", "--set", "facility.rack_power_kw=50kg"], "unknown unit 'kg'"),
    (["plan", "--set", "cloud.offers=[\"aws-p5\"]"], "cloud.offers[0]: unknown cloud id"),
    (["plan", "--set", "prices.h100=3"], "prices.h100: unknown catalog id"),
    (["plan", "--format", "yaml"], "invalid choice: 'yaml'"),
    (["catalog", "h100"], "unknown catalog id 'h100'"),
    (["catalog", "--family", "gpu"], "did you mean 'gpus'"),
    # issue 31: within each key's range, but 82 million TB kept the rack packing busy for over ten minutes
    (["plan", "--set", "cluster.num_nodes=1024", "--set", "storage.tb_per_gpu=10000"],
     "storage.tb_per_gpu: 10,000 TB per GPU x 8,192 GPUs is 81,920,000 TB, more than the 1,000,000 TB"),
    (["plan", "--set", "cluster.num_nodes=2048", "--set", "storage.read_Bps_per_gpu=100GB/s"],
     "storage.read_Bps_per_gpu: 18,205 blocks of nvme-pfs to read 100,000 MB/s per GPU x 16,384 GPUs hold"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    """Bad input: exit 2, one stderr line naming the key, no traceback, no stdout."""
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_malformed_file_names_the_line(capsys, tmp_path):
    """Malformed TOML: file:line in the one error line."""
    path = tmp_path / "bad.toml"
    path.write_text('[cluster]\nnum_nodes = 16\ngpu = "h100-sxm\n')
    code, _, err = run(capsys, "plan", str(path))
    assert code == 2 and f"{path}:3: malformed TOML" in err


def test_unknown_catalog_id_in_file_names_its_line(capsys, tmp_path):
    """An id resolved after loading is traced back to the file line."""
    path = tmp_path / "s.toml"
    path.write_text('[network]\n\nfabric = "ib-hdr"\n')
    code, _, err = run(capsys, "plan", str(path))
    assert code == 2 and f"{path}:3: network.fabric: unknown fabric id 'ib-hdr'" in err


def test_infeasible_exits_3(capsys):
    """A rack budget below one server is infeasible, exit 3."""
    code, out, err = run(capsys, "plan", "--set", "facility.rack_power_kw=5")
    assert code == 3 and out == "" and "infeasible" in err and len(err.splitlines()) == 1


def test_output_file_is_complete_or_absent(capsys, tmp_path):
    """-o writes the whole document; a failing run writes nothing."""
    target = tmp_path / "plan.json"
    assert run(capsys, "plan", "--format", "json", "-o", str(target))[0] == 0
    assert json.loads(target.read_text())["schema"] == "clusterplan.plan/1"
    missing = tmp_path / "never.json"
    assert run(capsys, "plan", "--set", "cluster.num_nodes=0", "-o", str(missing))[0] == 2
    assert not missing.exists() and [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def test_traceback_flag_reraises(capsys):
    """--traceback shows the exception instead of the one line."""
    from clusterplan.errors import ConfigError

    with pytest.raises(ConfigError):
        main(["--traceback", "plan", "--set", "cluster.num_nodes=0"])


def test_catalog_lists_and_shows_sources(capsys):
    """`catalog` lists ids; `catalog ID` shows the entry with its source."""
    code, out, _ = run(capsys, "catalog")
    assert code == 0 and "h100-sxm" in out and "aws-p5-on-demand" in out
    code, out, _ = run(capsys, "catalog", "h100-sxm", "--format", "json")
    entry = json.loads(out)["entries"][0]
    assert code == 0 and entry["id"] == "h100-sxm" and entry["source"] and entry["date"]
    code, out, _ = run(capsys, "catalog", "--family", "fabrics", "--format", "json")
    assert {e["family"] for e in json.loads(out)["entries"]} == {"fabrics"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_plan(capsys, example):
    """Every shipped example plans cleanly."""
    code, out, err = run(capsys, "plan", str(example), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["design"]["num_gpus"] > 0


def test_module_entry_point_runs():
    """`python -m clusterplan plan --format json` works as a real process."""
    done = subprocess.run([sys.executable, "-m", "clusterplan", "plan", "--format", "json"],
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["design"]["num_gpus"] == 128


@pytest.mark.parametrize("override, message", [
    ("cluster.server=hgx-a100", "cluster.server: server 'hgx-a100' takes a100-80gb-sxm, not h100-sxm"),
    ("cluster.gpus_per_node=4", "cluster.gpus_per_node: server 'hgx-h100' holds 8 GPUs, got 4"),
    ("network.nics_per_node=16", "network.nics_per_node: server 'hgx-h100' holds at most 8 fabric NICs"),
    ("network.tiers=1", "network.tiers: one switch of 128 ports cannot take 256 NICs"),
])
def test_parts_that_do_not_fit_are_bad_input(capsys, override, message):
    """A server, GPU count, NIC count or tier count that cannot be built names its key."""
    argv = ["plan", "--set", override] + (["--set", "cluster.num_nodes=32"] if "tiers" in override else [])
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err


def test_utilization_from_a_trace(capsys, tmp_path):
    """finance.utilization_from_trace replays the trace on the cluster and prices at what it achieves.

    Two back-to-back 64-GPU jobs of 1000 s on the 128-GPU reference fill half the GPUs for the span.
    """
    trace = tmp_path / "two.swf"
    trace.write_text("; two jobs\n"
                     "1 0 0 1000 64 -1 -1 64 1000 -1 1 1 1 -1 1 1 -1 -1\n"
                     "2 1000 0 1000 64 -1 -1 64 1000 -1 1 1 1 -1 1 1 -1 -1\n")
    code, out, err = run(capsys, "plan", "--format", "json", "--set", f"finance.utilization_from_trace={trace}")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["scenario"]["finance"]["utilization"] == pytest.approx(0.5, abs=0.01)
    base = json.loads(run(capsys, "plan", "--format", "json")[1])["cost"]["cost_per_gpu_hour_usd"]
    assert doc["cost"]["cost_per_gpu_hour_usd"] == pytest.approx(base * 0.8 / doc["scenario"]["finance"]["utilization"])
    code, _, err = run(capsys, "plan", "--set", f"finance.utilization_from_trace={tmp_path / 'none.swf'}")
    assert code == 2 and "cannot read trace" in err


def test_a_benchmark_without_torch_says_what_to_install(capsys, monkeypatch):
    """Without PyTorch, `bench gemm` is one line naming the extra to install, exit 2."""
    monkeypatch.setitem(sys.modules, "torch", None)
    code, out, err = run(capsys, "bench", "gemm")
    assert code == 2 and out == "" and "needs PyTorch" in err and len(err.strip().splitlines()) == 1


def test_a_command_loads_only_its_own_module(tmp_path):
    """`clusterplan plan` imports neither the benchmark nor the HTML report (start-up); --help lists every command."""
    probe = (f"import sys; from clusterplan.cli.main import main; main(['plan', '--format', 'json', '-o', "
             f"{str(tmp_path / 'plan.json')!r}]);"
             "print(sorted(m for m in sys.modules if m.startswith(('clusterplan.bench.collective',"
             " 'clusterplan.bench.nodes', 'clusterplan.report.html', 'clusterplan.cli.'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ("['clusterplan.cli.exits', 'clusterplan.cli.main', 'clusterplan.cli.output', "
                                   "'clusterplan.cli.plan']")
    helped = subprocess.run([sys.executable, "-m", "clusterplan", "--help"], capture_output=True, text=True)
    for name in ("plan", "train", "reliability", "report", "compare", "sensitivity", "collectives", "bench",
                 "calibrate", "catalog", "schedule"):
        assert f"\n    {name}" in helped.stdout


def test_utilization_from_a_synthetic_trace(capsys):
    """finance.utilization_from_trace takes the trace specs `schedule` takes, synthetic ones too (issue 14)."""
    trace = "synthetic:jobs=300,load=0.6,seed=7"
    code, out, err = run(capsys, "plan", "--format", "json", "--set", f'finance.utilization_from_trace="{trace}"')
    assert code == 0, err
    doc = json.loads(out)
    utilization = doc["cost"]["utilization"]
    assert 0 < utilization < 1 and utilization != 0.80
    assert doc["cost"]["utilization_source"] == f"replay of {trace}, easy policy"
    code, out, err = run(capsys, "schedule", trace, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["results"][0]["utilization"] == pytest.approx(utilization)
    code, out, err = run(capsys, "plan", "--set", 'finance.utilization_from_trace="synthetic:jobs=x"')
    assert code == 2 and out == "" and "finance.utilization_from_trace" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv, nodes", [
    (["--gpus", "1024"], 128),
    (["--set", "cluster.num_gpus=256"], 32),
    (["--set", "cluster.num_gpus=256", "--set", "cluster.num_nodes=32"], 32),
])
def test_the_cluster_can_be_sized_in_gpus(capsys, argv, nodes):
    """`plan --gpus N` and cluster.num_gpus give the cluster in GPUs; the nodes are derived (issue 14)."""
    code, out, err = run(capsys, "plan", *argv, "--format", "json")
    assert code == 0, err
    design = json.loads(out)["design"]
    assert design["num_nodes"] == nodes and design["num_gpus"] == nodes * 8


@pytest.mark.parametrize("argv, message", [
    (["--gpus", "100"], "--gpus: 100 GPUs are not whole nodes of 8"),
    (["--gpus", "1024", "--set", "cluster.num_nodes=16"], "--gpus: 1,024 GPUs conflict with cluster.num_nodes = 16"),
    (["--set", "cluster.num_gpus=256", "--set", "cluster.num_nodes=16"], "cluster.num_gpus: 256 GPUs conflict"),
    (["--set", "cluster.num_gpus=0"], "cluster.num_gpus: must be a whole number of GPUs >= 1"),
])
def test_gpus_that_do_not_make_the_nodes_are_bad_input(capsys, argv, message):
    """GPUs that are not whole nodes, or that disagree with a num_nodes given beside them: exit 2, one line."""
    code, out, err = run(capsys, "plan", *argv)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1


def test_num_gpus_in_a_scenario_file_conflicting_names_its_line(capsys, tmp_path):
    """A file giving both num_gpus and a different num_nodes names the file and the key."""
    scenario = tmp_path / "s.toml"
    scenario.write_text("[cluster]\nnum_nodes = 4\nnum_gpus = 64\n")
    code, out, err = run(capsys, "plan", str(scenario))
    assert code == 2 and str(scenario) in err and "cluster.num_gpus" in err
    scenario.write_text("[cluster]\nnum_gpus = 64\n")
    code, out, err = run(capsys, "plan", str(scenario), "--format", "json")
    assert code == 0 and json.loads(out)["design"]["num_nodes"] == 8


@pytest.mark.parametrize("command", ["plan", "train"])
def test_a_job_that_never_finishes_is_infeasible(capsys, command):
    """Issue 31: a GPU failure rate at its limit (1e6 per 1,000 GPU-days) leaves goodput 0; a run with a token
    budget then divided by zero (exit 1). Now one line, exit 3: the job never finishes."""
    code, out, err = run(capsys, command, "--set", 'workload.model="llama2-7b"', "--set", "workload.tokens=1e12",
                         "--set", "reliability.failure_rates={gpu=1e6}")
    assert code == 3 and out == "" and err.count("\n") == 1 and "the job never finishes" in err
