"""GB200 NVL72 through the real commands: plan prices and predicts it, train --search finds expert parallelism
across the 72-GPU NVLink domain, and bad input names its key (docs/nvl72.md)."""

import json
from pathlib import Path

from clusterplan.cli.main import main

NVL72 = str(Path(__file__).parents[2] / "examples" / "gb200-nvl72-1152.toml")
DEEPSEEK = ["--model", "deepseek-v3", "--job-gpus", "1024", "--set", "workload.global_batch=1024",
            "--set", "workload.zero=1"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_prices_the_racks_and_predicts_the_workload(capsys):
    """16 racks of 72: 16 NVLink domains, 144 switch trays in the BoM, ~120 kW racks; Llama 3.1 405B trains on
    1,024 of the GPUs, its band the widest, naming the NVLink domain."""
    code, out, err = run(capsys, "plan", NVL72, "--set", 'workload.model="llama3.1-405b"', "--set",
                         'workload.tokens="15T"', "--set", "workload.gpus=1024", "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    design = doc["design"]
    assert (design["nvlink_domain_gpus"], design["num_nvlink_domains"], design["nvlink_switch_trays"]) == (72, 16, 144)
    assert design["nvlink_domain_racks"] == 1
    assert design["racks"]["compute"] == 16 and design["racks"]["servers_per_rack"] == 18
    assert 120 < design["racks"]["max_rack_power_kw"] < 125
    bom = {line["id"]: line for line in doc["cost"]["bom"] if "spare node" not in line["item"]}   # no spares
    assert bom["nvlink5-switch-tray"]["quantity"] == 144 and bom["gb200-nvl72"]["quantity"] == 288
    training = doc["training"]
    assert training["num_gpus"] == 1024 and training["feasible"]
    assert 64 % training["layout"]["tp"] == 0
    assert "no validated bf16 run on gb200" in training["evidence"]["out_of_domain"]
    code, out, _ = run(capsys, "plan", NVL72)
    assert code == 0 and "1,152 x gb200 (288 nodes x 4, 16 NVLink domains of 72)" in out


def test_train_search_lists_expert_parallel_layouts_across_the_domain(capsys):
    """DeepSeek-V3 at a 4M-token batch: the best layout is expert-parallel over more than 8 GPUs, inside the 64 GPUs
    the job uses of each rack (the experts' own group, ep x etp: with whole experts Megatron folds them across the
    attention's tp); the table shows the ep column."""
    code, out, err = run(capsys, "train", NVL72, *DEEPSEEK, "--search", "--top", "5", "--format", "json")
    assert code == 0 and err == ""
    lay = json.loads(out)["layout"]
    assert 8 < lay["ep"] <= 64 and lay["etp"] * lay["ep"] <= 64 and lay["etp"] in (1, lay["tp"])
    code, out, _ = run(capsys, "train", NVL72, *DEEPSEEK, "--search", "--top", "5")
    assert code == 0 and f"(ep {lay['ep']}" in out and " ep " in out.split("Top layouts")[1].splitlines()[1]
    # a MoE model's band is the MoE runs' (H100 and B200 only): out of their domain, naming why
    assert "no validated mixture-of-experts run on gb200" in " ".join(out.split())


def test_a_tp_that_straddles_domains_is_bad_input_naming_the_key(capsys):
    """tp 16 does not tile a 72-GPU domain: exit 2, one line naming workload.tp, nothing on stdout."""
    code, out, err = run(capsys, "train", NVL72, "--model", "llama3.1-405b", "--set", "workload.tp=16")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "workload.tp" in err and "does not tile the 72 GPUs" in err and "Traceback" not in err


def test_servers_that_do_not_fill_a_rack_and_air_cooling_are_refused(capsys):
    """20 trays: exit 2 naming cluster.num_nodes; air cooling cannot take a ~120 kW rack: exit 3 naming
    facility.cooling; 100 GPUs do not fill NVLink domains: exit 2 naming --gpus."""
    code, out, err = run(capsys, "plan", NVL72, "--set", "cluster.num_nodes=20")
    assert code == 2 and out == "" and "cluster.num_nodes" in err and "NVLink domains of 18 servers" in err
    code, out, err = run(capsys, "plan", NVL72, "--set", 'facility.cooling="air"')
    assert code == 3 and "facility.cooling" in err
    code, out, err = run(capsys, "collectives", NVL72, "--gpus", "100")
    assert code == 2 and "--gpus" in err and "NVLink domains of 72" in err


def test_collectives_name_the_domains_and_run_faster_than_servers(capsys):
    """all_reduce of 1 GiB on 144 GPUs: 2 NVLink domains; busbw above the same GPUs in 18 HGX B200 servers."""
    code, out, _ = run(capsys, "collectives", NVL72, "--gpus", "144", "-b", "1G", "-e", "1G", "--format", "json")
    assert code == 0
    racks = json.loads(out)
    assert (racks["group"]["num_nodes"], racks["group"]["num_nvlink_domains"]) == (36, 2)
    code, out, _ = run(capsys, "collectives", "--set", 'cluster.gpu="b200"', "--set", "cluster.num_nodes=18", "--set",
                       'network.fabric="ib-ndr400"', "-b", "1G", "-e", "1G", "--format", "json")
    assert code == 0
    servers = json.loads(out)
    assert "num_nvlink_domains" not in servers["group"]
    assert racks["rows"][0]["busbw_GBps"] > servers["rows"][0]["busbw_GBps"]


def test_expert_groups_that_do_not_tile_the_domain_fall_to_the_common_divisor(capsys):
    """DeepSeek-V3 on all 1,152 GPUs at tp 1, pp 4, ep 32: 72 data-parallel places a domain hold 2 ranks of each
    expert-data-parallel group of 9, which cannot tile it: the placement takes their common divisor (1), not a crash."""
    code, out, _ = run(capsys, "train", NVL72, "--model", "deepseek-v3",
                       "--set", "workload.tp=1", "--set", "workload.pp=4", "--set", "workload.ep=32",
                       "--set", "workload.zero=1", "--set", "workload.global_batch=1152")
    assert code == 0 and "tp 1 x pp 4 x dp 288 x cp 1 (ep 32)" in out


def test_a_fixed_ep_may_fold_over_tp_while_etp_is_searched(capsys):
    """ep 256 at tp 8 on 1,024 GPUs divides tp x dp (whole experts) but not dp: with etp left to the search it
    runs whole experts rather than refusing."""
    code, out, _ = run(capsys, "train", NVL72, "--model", "deepseek-v3",
                       "--job-gpus", "1024", "--set", "workload.tp=8", "--set", "workload.ep=256",
                       "--set", "workload.zero=1", "--set", "workload.global_batch=1024")
    assert code == 0 and "(ep 256, etp 1)" in out
