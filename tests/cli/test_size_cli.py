"""`clusterplan size`: the clusterplan.size/1 contract, consistency with `train`, exits 2 and 3, exports."""

import io
import json
import re

import pytest

from clusterplan.cli.main import main
from clusterplan.report.tables import read_csv

REFERENCE = "examples/reference-128x-h100.toml"
# a small search: two GPUs, one fabric, up to 256 GPUs, every mode
SMALL = ("--gpu-types", "h100-sxm,h200-sxm", "--fabrics", "ib-ndr400", "--max-gpus", "256", "--start", "2026-12-04")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The small search's JSON document (run once)."""
    out = tmp_path_factory.mktemp("size") / "size.json"
    code = main(["size", REFERENCE, "--model", "llama2-13b", "--tokens", "300B", *SMALL, "--deadline", "60",
                 "--format", "json", "-o", str(out)])
    assert code == 0
    return json.loads(out.read_text())


def test_document_contract_and_frontier(small):
    """Every candidate is counted once; the frontier is Pareto; the cheapest meets the deadline; reasons add up."""
    doc = small
    assert doc["schema"] == "clusterplan.size/1"
    assert doc["num_candidates"] == 2 * 6 * 1 * 5 == len(doc["candidates"])
    modelled = [row for row in doc["candidates"] if "cost_usd" in row]
    qualifying = [row for row in modelled if row["excluded_by"] is None]
    assert sum(doc["excluded"].values()) == doc["num_candidates"] - len(qualifying)
    for point in doc["frontier"]:
        assert point["on_frontier"]
        assert not any(row["done_days"] < point["done_days"] and row["cost_usd"] < point["cost_usd"]
                       for row in modelled if not row["interruptible"])
    cheapest = doc["cheapest"]
    assert cheapest["done_days"] <= 60
    assert cheapest["cost_usd"] == min(row["cost_usd"] for row in qualifying if not row["interruptible"])
    headline = [row for row in modelled if not row["interruptible"]]   # spot of a multi-node job never heads
    assert doc["fastest"]["done_days"] == min(row["done_days"] for row in headline)
    assert not any(point["interruptible"] for point in doc["frontier"])
    for row in modelled:
        assert row["done_days"] == pytest.approx(row["capacity_days"] + row["train_days"])
        assert row["capacity_low_days"] <= row["capacity_days"] <= row["capacity_high_days"]
        assert row["first_gpu_hour"] >= doc["question"]["start"] and row["trained"] >= row["first_gpu_hour"]
    modes = {row["mode"]: row for row in modelled if row["num_gpus"] == 128 and row["gpu"] == "h100-sxm"}
    assert modes["on-demand"]["capacity_days"] == 0 < modes["reserved"]["capacity_days"] < modes["own"]["capacity_days"]
    assert modes["spot"]["goodput"] < modes["on-demand"]["goodput"] == modes["own"]["goodput"]
    assert modes["own"]["cost_usd"] == modes["own"]["committed_usd"] > modes["own"]["own_share_usd"]
    assert modes["own"]["own_tco_usd"] > modes["own"]["own_share_usd"]
    assert 0 < modes["own"]["residual_usd"] < modes["own"]["own_tco_usd"]


def _train(capsys, row, offer):
    """`clusterplan train` of the candidate's scenario, with ``offer`` as the one cloud offer."""
    code, out, err = run(capsys, "train", REFERENCE, "--model", "llama2-13b", "--tokens", "300B", "--format", "json",
                         "--set", f'cluster.gpu="{row["gpu"]}"', "--set", 'cluster.server=""',
                         "--set", f"cluster.num_nodes={row['num_gpus'] // 8}",
                         "--set", f'network.fabric="{row["fabric"]}"', "--set", "network.tiers=0",
                         "--set", f'cloud.offers=["{offer}"]')
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("mode", ["own", "on-demand", "spot"])
def test_a_candidate_equals_what_train_prints(capsys, small, mode):
    """Layout, MFU, goodput, days and cost of a candidate are the ones `train` prints for its scenario."""
    row = next(r for r in small["candidates"] if r["mode"] == mode and r["num_gpus"] == 64 and r["gpu"] == "h200-sxm")
    offer = row["offer"] or "aws-p5en-on-demand"
    doc = _train(capsys, row, offer)
    assert {key: doc["layout"][key] for key in row["layout"]} == row["layout"]
    assert doc["mfu"] == pytest.approx(row["mfu"], rel=1e-12)
    assert doc["tokens_per_s"] == pytest.approx(row["tokens_per_s"], rel=1e-12)
    if mode == "own":
        assert doc["goodput"] == pytest.approx(row["goodput"], rel=1e-12)
        assert doc["effective_time_to_train_s"] / 86400 == pytest.approx(row["train_days"], rel=1e-12)
        assert doc["effective_cost_to_train_usd"] == pytest.approx(row["own_share_usd"], rel=1e-12)
    else:
        assert doc["effective_cloud_cost_to_train_usd"][offer] == pytest.approx(row["cost_usd"], rel=1e-12)
    if mode == "on-demand":
        assert doc["effective_time_to_train_s"] / 86400 == pytest.approx(row["train_days"], rel=1e-12)


@pytest.fixture(scope="module")
def rack_scale(tmp_path_factory):
    """GB200 NVL72 beside HGX B200, on air-cooled halls (the NVL72 rack needs liquid): the JSON document."""
    out = tmp_path_factory.mktemp("size") / "size.json"
    code = main(["size", REFERENCE, "--model", "llama2-13b", "--tokens", "300B", "--gpu-types", "gb200,b200",
                 "--fabrics", "ib-ndr400", "--max-gpus", "288", "--modes", "own,on-demand", "--start", "2026-12-04",
                 "--set", 'facility.cooling="air"', "--format", "json", "-o", str(out)])
    assert code == 0
    return json.loads(out.read_text())


def test_rack_scale_gpus_are_sized_in_whole_nvlink_domains(rack_scale):
    """GB200 on its NVL72 tray in whole 72-GPU domains, liquid cooled, one NIC a GPU; B200 on its HGX server."""
    platforms = rack_scale["question"]["platforms"]
    assert platforms["gb200"] == {"server": "gb200-nvl72", "gpus_per_node": 4, "nics_per_node": 4,
                                  "cooling": "liquid", "nvlink_domain_gpus": 72, "counts": [72, 144, 288]}
    assert platforms["b200"]["counts"] == [8, 16, 32, 64, 128, 256] and platforms["b200"]["cooling"] == "air"
    assert platforms["b200"]["nvlink_domain_gpus"] == platforms["b200"]["gpus_per_node"] == 8
    assert rack_scale["num_candidates"] == (3 + 6) * 2
    gb200 = [row for row in rack_scale["candidates"] if row["gpu"] == "gb200"]
    assert {row["num_gpus"] for row in gb200} == {72, 144, 288}
    assert all("cost_usd" in row for row in gb200 if row["mode"] == "own")


@pytest.mark.parametrize("count", [144, 288])
def test_a_rack_scale_candidate_equals_what_train_prints(capsys, rack_scale, count):
    """A GB200 candidate's figures are the ones `train` prints for its scenario: the tray, its NICs, liquid."""
    row = next(r for r in rack_scale["candidates"] if r["gpu"] == "gb200" and r["mode"] == "own"
               and r["num_gpus"] == count)
    built = rack_scale["question"]["platforms"]["gb200"]
    code, out, err = run(capsys, "train", REFERENCE, "--model", "llama2-13b", "--tokens", "300B", "--format", "json",
                         "--set", 'cluster.gpu="gb200"', "--set", f'cluster.server="{built["server"]}"',
                         "--set", f"cluster.gpus_per_node={built['gpus_per_node']}",
                         "--set", f"cluster.num_nodes={count // built['gpus_per_node']}",
                         "--set", f"network.nics_per_node={built['nics_per_node']}",
                         "--set", f'facility.cooling="{built["cooling"]}"',
                         "--set", f'network.fabric="{row["fabric"]}"', "--set", "network.tiers=0")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["scenario"]["cluster"]["server"] == "gb200-nvl72" and doc["num_gpus"] == count
    assert {key: doc["layout"][key] for key in row["layout"]} == row["layout"]
    assert doc["mfu"] == pytest.approx(row["mfu"], rel=1e-12)
    assert doc["tokens_per_s"] == pytest.approx(row["tokens_per_s"], rel=1e-12)
    assert doc["goodput"] == pytest.approx(row["goodput"], rel=1e-12)
    assert doc["effective_time_to_train_s"] / 86400 == pytest.approx(row["train_days"], rel=1e-12)
    assert doc["effective_cost_to_train_usd"] == pytest.approx(row["own_share_usd"], rel=1e-12)


def test_size_section_in_the_scenario_file(capsys, tmp_path):
    """A [size] section asks the same question as the flags."""
    scenario = tmp_path / "s.toml"
    scenario.write_text('[size]\nmodel = "llama2-13b"\ntokens = "300B"\ngpus = ["h100-sxm"]\nfabrics = ["ib-ndr400"]\n'
                        'max_gpus = 64\nmodes = ["own", "on-demand"]\nstart = "2026-12-04"\ndeadline_days = 400\n')
    code, out, err = run(capsys, "size", str(scenario), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["question"]["counts"] == [8, 16, 32, 64] and doc["question"]["modes"] == ["own", "on-demand"]
    assert doc["question"]["deadline"] == "2028-01-08" and doc["num_candidates"] == 8


@pytest.mark.parametrize("argv, flag", [
    (("--gpu-types", "h100-sxm,h900"), "--gpu-types"),
    (("--gpus", "256"), "--gpus"),                      # a cluster's GPU count elsewhere: size points to its flags
    (("--fabrics", "ib-xdr"), "--fabrics"),
    (("--modes", "own,lease"), "--modes"),
    (("--deadline", "2026-01-01"), "--deadline"),
    (("--deadline", "soon"), "--deadline"),
    (("--tokens", "0"), "--tokens"),
    (("--model", "gpt-9"), "--model"),
    (("--budget", "1000"), "--budget"),
    (("--start", "yesterday"), "--start"),
    (("--gpu-types", "gb200"), "--max-gpus"),          # 64 GPUs is less than one 72-GPU NVLink domain
    (("--set", "cloud.capacity={nebius-h100-on-demand = 0}"), "cloud.capacity.nebius-h100-on-demand"),
    (("--set", "cloud.capacity={nebius-h100-on-demand = -64}"), "cloud.capacity.nebius-h100-on-demand"),
    (("--set", "cloud.capacity={nebius-h100-on-demand = 1.5}"), "cloud.capacity.nebius-h100-on-demand"),
    (("--set", "cloud.capacity={no-such-offer = 64}"), "cloud.capacity.no-such-offer"),
    (("--set", "cloud.resale_fraction=1.5"), "cloud.resale_fraction"),
])
def test_bad_input_names_the_flag_and_writes_nothing(capsys, tmp_path, argv, flag):
    """Exit 2, one line on stderr naming the flag, no traceback, no output file."""
    out = tmp_path / "out.json"
    base = {"--model": "llama2-13b", "--tokens": "300B", "--gpu-types": "h100-sxm", "--fabrics": "ib-ndr400",
            "--start": "2026-12-04", "--max-gpus": "64"}
    given = dict(zip(argv[::2], argv[1::2]))
    args = [item for key, value in {**base, **given}.items() for item in (key, value)]
    code, stdout, err = run(capsys, "size", REFERENCE, *args, "--format", "json", "-o", str(out))
    assert code == 2 and stdout == ""
    first, *candidates = err.rstrip("\n").split("\n")   # an unknown model's candidates follow, indented
    assert flag in first and all(line.startswith("  ") for line in candidates) and "Traceback" not in err, err
    assert not out.exists()


def test_nothing_meets_the_deadline_exits_3_with_the_nearest(capsys):
    """Exit 3; stderr and the table list the nearest candidates."""
    code, out, err = run(capsys, "size", REFERENCE, "--model", "llama2-13b", "--tokens", "300B", "--gpu-types", "h100-sxm",
                         "--fabrics", "ib-ndr400", "--max-gpus", "16", "--start", "2026-12-04", "--deadline", "2")
    assert code == 3
    assert "nothing meets the deadline 2026-12-06" in err and "nearest: 16 x h100-sxm on ib-ndr400" in err
    assert err.count("\n") == 1 and "(deadline)" in err
    names = re.findall(r"(\d[\d,]* x \S+ on \S+, [\w-]+):", err)
    assert names and len(names) == len(set(names))           # each candidate once, with its fabric
    assert "Nothing meets the deadline; the nearest:" in out and "Cheapest meeting the deadline: none" in out


def test_exports(capsys, small, tmp_path):
    """CSV tables read back with the frontier rows; XLSX opens with the same sheets."""
    argv = ("size", REFERENCE, "--model", "llama2-13b", "--tokens", "300B", *SMALL, "--deadline", "60")
    code, out, err = run(capsys, *argv, "--format", "csv")
    assert code == 0
    tables = read_csv(out)
    header, rows = tables["Pareto frontier (days to the trained model, cost)"]
    assert header[0] == "GPUs" and len(rows) == len(small["frontier"])
    assert float(rows[0][-1]) == pytest.approx(small["frontier"][0]["cost_usd"])
    assert int(tables["Candidates excluded, by reason"][1][0][1]) > 0
    path = tmp_path / "size.xlsx"
    assert main([*argv, "--format", "xlsx", "-o", str(path)]) == 0
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.load_workbook(io.BytesIO(path.read_bytes()))
    assert book.sheetnames == ["Recommendation", "Frontier", "Candidates", "Excluded"]


def test_a_workload_config_json_is_sized(capsys, tmp_path):
    """With no --model, the [workload]'s Hugging Face config.json is the model sized."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"_name_or_path": "tiny-1b", "model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048,
                                  "num_attention_heads": 16, "intermediate_size": 8192, "vocab_size": 32000,
                                  "max_position_embeddings": 2048}))
    code, out, err = run(capsys, "size", REFERENCE, "--set", f'workload.model_config="{config}"', "--tokens", "20B",
                         "--gpu-types", "h100-sxm", "--fabrics", "ib-ndr400", "--max-gpus", "16", "--modes", "on-demand",
                         "--start", "2026-12-04", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["question"]["model"] == "tiny-1b" and doc["fastest"]["mfu"] > 0
    assert doc["cheapest"]["cost_usd"] == min(row["cost_usd"] for row in doc["candidates"] if "cost_usd" in row)


def test_a_run_past_the_calendar_is_dated_after_its_last_day(capsys):
    """Issue 31: 1e16 tokens of Llama 2 70B on 32 GPUs end past the year 9999; that date was an
    internal error (OverflowError, exit 1). It is now "after 9999-12-31", and nothing meets the deadline."""
    code, out, err = run(capsys, "size", REFERENCE, "--model", "llama2-70b", "--tokens", "1e16", "--gpu-types",
                         "h100-sxm", "--fabrics", "ib-ndr400", "--max-gpus", "32", "--start", "2026-12-04",
                         "--deadline", "2", "--format", "json")
    assert code == 3 and "internal error" not in err
    assert json.loads(out)["nearest"][0]["trained"] == "after 9999-12-31"


def test_candidates_whose_job_never_finishes_are_excluded_for_failures(capsys):
    """Issue 31: at a GPU failure rate of 1e6 per 1,000 GPU-days a job on 32 GPUs or more has goodput 0 and never
    finishes: each such candidate is excluded with the reason "failures" (a ValueError, exit 1, before); on 8 and
    16 GPUs goodput is tiny but positive and they stay modelled."""
    code, out, err = run(capsys, "size", REFERENCE, "--model", "llama2-13b", "--tokens", "300B", *SMALL,
                         "--set", "reliability.failure_rates={gpu=1e6}", "--format", "json")
    assert "internal error" not in err
    doc = json.loads(out)
    assert {c["excluded_by"] for c in doc["candidates"] if c["num_gpus"] >= 32} == {"failures"}
    assert doc["excluded"]["failures"] == 40 and doc["num_modelled"] == 16
