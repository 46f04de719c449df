"""`clusterplan train` and the [workload] in `clusterplan plan`: JSON contract, search, bad input."""

import json
from pathlib import Path

import pytest

from clusterplan.cli.main import main
from clusterplan.cli.train import FLAGS
from clusterplan.perf.presets import CONFIGS


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_the_contract_fields(capsys):
    code, out, err = run(capsys, "train", "--model", "llama2-13b", "--tokens", "2T", "--tp", "2",
                         "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["schema"] == "clusterplan.train/1"
    assert set(doc["layout"]) >= {"tp", "pp", "dp", "cp", "mbs", "global_batch", "recompute", "zero"}
    assert doc["layout"]["tp"] == 2
    lay = doc["layout"]
    assert lay["tp"] * lay["pp"] * lay["dp"] * lay["cp"] == 128
    assert sum(doc["step_breakdown_s"].values()) == pytest.approx(doc["step_time_s"], rel=1e-9)
    assert doc["tokens_per_s"] == pytest.approx(doc["tokens_per_s_per_gpu"] * 128)
    assert 0.2 < doc["mfu"] < 0.8 and doc["feasible"] is True
    assert doc["memory_bytes_per_gpu"]["total"] < 80 * 2**30
    assert doc["time_to_train_s"] == pytest.approx(2e12 / doc["tokens_per_s"])
    assert doc["cost_to_train_usd"] > 0 and doc["cloud_cost_to_train_usd"]


def test_json_has_goodput_and_effective_time_and_cost(capsys):
    """goodput, and effective time and costs = raw / goodput, beside the raw figures, own and cloud."""
    code, out, err = run(capsys, "train", "--tokens", "2T", "--model", "llama2-13b", "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    goodput = doc["goodput"]
    assert 0 < goodput < 1
    assert doc["effective_time_to_train_s"] == pytest.approx(doc["time_to_train_s"] / goodput)
    assert doc["effective_time_to_train_s"] > doc["time_to_train_s"] == pytest.approx(2e12 / doc["tokens_per_s"])
    assert doc["effective_cost_to_train_usd"] == pytest.approx(doc["cost_to_train_usd"] / goodput)
    cloud, effective = doc["cloud_cost_to_train_usd"], doc["effective_cloud_cost_to_train_usd"]
    assert cloud and set(effective) == set(cloud)
    spot = doc["spot_goodput"]   # a spot offer's goodput counts its reclaims too
    assert set(spot) == {"nebius-h100-spot"} and spot["nebius-h100-spot"] < goodput
    terms = doc["cloud_terms"]   # a reservation bills whole terms, raw and effective alike (cost/cloud.py rented)
    assert terms and all(effective[offer] == pytest.approx(terms[offer]["total_usd"]) for offer in terms)
    assert all(effective[offer] == pytest.approx(usd / spot.get(offer, goodput)) for offer, usd in cloud.items()
               if offer not in terms)
    assert doc["interruptions_per_day"] > 0 and doc["checkpoint_interval_s"] > 0
    assert doc["expected_interruptions"] == pytest.approx(
        doc["interruptions_per_day"] * doc["effective_time_to_train_s"] / 86400)


def test_table_shows_raw_and_effective_side_by_side(capsys):
    """The terminal table prints goodput, and each time and cost raw and effective on one line (a 64-GPU job, so
    that the reference's spot offer, 64 GPUs at once, supplies it and gets its own line)."""
    job = ("train", "--tokens", "2T", "--model", "llama2-13b", "--job-gpus", "64")
    code, out, _ = run(capsys, *job)
    doc = json.loads(run(capsys, *job, "--format", "json")[1])
    assert code == 0 and f"{doc['goodput']:.1%} (" in out
    raw, effective = doc["time_to_train_s"] / 86400, doc["effective_time_to_train_s"] / 86400
    assert f"{raw:.1f} days raw, {effective:.1f} days effective" in out
    assert "Cost to train (own cluster)" in out and out.count(" raw, ") == 4   # time, own, cheapest cloud, spot


def test_a_spot_offer_short_of_the_jobs_gpus_is_listed_short_not_on_the_spot_line(capsys):
    """128 GPUs against a spot offer of 64 at once: no spot line, the offer under "Short of capacity" (as size
    excludes it by "capacity")."""
    doc = json.loads(run(capsys, "train", "--tokens", "2T", "--model", "llama2-13b", "--format", "json")[1])
    assert doc["spot"] is None and doc["cloud_excluded"]["nebius-h100-spot"] == "capacity: 64 GPUs at once"


def test_top_above_ten_lists_that_many_layouts(capsys):
    """--top is not capped: --search --top 15 lists 15 layouts when that many fit."""
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--search", "--top", "15", "--format", "json")
    assert code == 0 and len(json.loads(out)["layouts"]) == 15


def test_search_lists_layouts_best_first(capsys):
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--search", "--top", "4", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and len(doc["layouts"]) == 4 and doc["num_evaluated"] > 100
    steps = [row["step_time_s"] for row in doc["layouts"]]
    assert steps == sorted(steps) and doc["layouts"][0]["step_time_s"] == doc["step_time_s"]


def test_plan_with_a_workload_prints_time_and_cost_to_train(capsys):
    code, out, _ = run(capsys, "plan", "--set", "workload.model=llama2-13b", "--set", "workload.tokens=2T")
    assert code == 0
    assert "Time to train 2,000B tokens" in out and "Cost to train (own cluster)" in out
    assert "Goodput" in out and " days raw, " in out and " effective" in out


def test_roce_costs_more_per_trained_model_than_infiniband(capsys):
    costs = {}
    for fabric in ("ib-ndr200", "roce-200g"):
        code, out, _ = run(capsys, "train", "--model", "llama2-70b", "--tokens", "1T", "--format", "json",
                           "--set", f"network.fabric={fabric}")
        assert code == 0
        costs[fabric] = json.loads(out)["time_to_train_s"]
    assert costs["roce-200g"] >= costs["ib-ndr200"]


@pytest.mark.parametrize("argv, message", [
    (["--model", "gpt-5"], "--model: unknown model 'gpt-5'"),
    (["--model", "llama2-13b", "--tp", "3"], "--tp: 3 does not divide the 128 GPUs"),
    (["--model", "llama2-13b", "--gpus", "12"], "--gpus: 12 GPUs are not whole nodes of 8"),
    (["--model", "llama2-13b", "--job-gpus", "12"], "--job-gpus: 12 GPUs are not whole nodes of 8"),
    (["--model", "llama2-13b", "--job-gpus", "256"], "--job-gpus: the cluster has 128 GPUs, got 256"),
    (["--model", "llama2-13b", "--tp", "8", "--pp", "4", "--dp", "8"], "tp x pp x dp x cp = 256"),
    (["--model", "gpt-1.7b", "--tp", "16"], "24 attention heads are not divisible by tp = 16"),
    (["--tp", "2"], "no model"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "train", *argv)
    assert code == 2 and out == ""
    first, *candidates = err.strip().splitlines()
    assert message in first and all(line.startswith("  ") for line in candidates)   # a list of names, indented


def test_unknown_model_lists_the_candidates_on_short_lines(capsys):
    """Issue 30: the known models follow the one-line error on indented lines of at most 72 characters."""
    code, _, err = run(capsys, "train", "--model", "gpt-5")
    first, *candidates = err.rstrip("\n").split("\n")
    assert code == 2 and first.endswith("known models:") and len(candidates) > 3
    assert all(line.startswith("  ") and len(line) <= 72 for line in candidates)
    assert "llama3-70b" in " ".join(candidates)


def test_gpus_sizes_the_cluster_as_plan_does(capsys):
    """A newcomer's `train --model llama3-70b --gpus 256` plans the 256-GPU cluster, even where the file gives
    num_nodes (the command line wins), and the job takes it all; --job-gpus 128 runs on half (issue 29)."""
    reference = str(Path(__file__).parents[2] / "examples" / "reference-128x-h100.toml")
    code, out, err = run(capsys, "train", reference, "--model", "llama3-70b", "--gpus", "256", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and err == "" and doc["num_gpus"] == 256 and doc["scenario"]["cluster"]["num_nodes"] == 32
    code, out, _ = run(capsys, "train", reference, "--model", "llama3-70b", "--gpus", "256", "--job-gpus", "128",
                       "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["num_gpus"] == 128 and doc["scenario"]["cluster"]["num_nodes"] == 32


def test_config_json_missing_keys(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32}')
    code, _, err = run(capsys, "train", "--model-config", str(path))
    assert code == 2 and "num_attention_heads: missing key" in err


def test_unknown_architecture_names_it_and_the_known_families(capsys, tmp_path):
    """A config of a family the reader does not know is one line naming it and the families, exit 2."""
    path = tmp_path / "config.json"
    path.write_text('{"architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": 768}')
    code, out, err = run(capsys, "train", "--model-config", str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "unknown architecture (model_type 'mamba' architectures 'MambaForCausalLM')" in err
    assert "known families: Llama 2/3/3.1/3.2/3.3, Mistral, Mixtral" in err and "DeepSeek-V3" in err


def test_infeasible_layout_is_exit_3_with_the_reason(capsys):
    code, out, err = run(capsys, "train", "--model", "gpt-1t", "--gpus", "8", "--tp", "8")
    assert code == 3 and out == ""
    assert "does not fit in GPU memory" in err and "GiB per GPU, has 76 of 80 with 5% kept free" in err


def _gemm_doc(path, fractions, dtype="bf16"):
    rows = [{"shape": f"s{i}", "m": 4096, "n": 4096, "k": 4096, "dtype": dtype, "flop": 1.0, "time_s": 1.0,
             "tflops": 1.0, "peak_tflops": 989.4, "fraction_of_peak": f, "skipped": None}
            for i, f in enumerate(fractions)]
    path.write_text(json.dumps({"schema": "clusterplan.gemm/1", "rows": rows}))
    return str(path)


def test_calibration_sets_the_measured_gemm_efficiency(capsys, tmp_path):
    """--calibration takes the median measured fraction of peak: a slower GEMM gives a slower step."""
    args = ("train", "--model", "llama2-7b", "--tp", "1", "--pp", "1", "--zero", "1", "--format", "json")
    code, out, _ = run(capsys, *args)
    base = json.loads(out)
    code, out, err = run(capsys, *args, "--calibration", _gemm_doc(tmp_path / "g.json", [0.3, 0.4, 0.9]))
    assert code == 0 and err == ""
    slow = json.loads(out)
    assert slow["scenario"]["workload"]["gemm_efficiency"] == pytest.approx(0.4)
    assert slow["step_time_s"] > 1.2 * base["step_time_s"]


def test_calibration_bad_file_is_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "clusterplan.bench/1"}')
    for path, words in ((str(bad), "not a clusterplan.gemm/1"), (str(tmp_path / "none.json"), "cannot read"),
                        (_gemm_doc(tmp_path / "fp32.json", [0.5], dtype="fp32"), "no bf16 or fp16")):
        code, out, err = run(capsys, "train", "--model", "llama2-7b", "--calibration", path)
        assert code == 2 and out == "" and words in err and len(err.strip().splitlines()) == 1


def test_no_storage_gives_raw_figures_and_a_warning(capsys):
    """Without storage there is nothing to checkpoint to: goodput is null, no effective figures, plan warns."""
    code, out, err = run(capsys, "train", "--model", "llama2-7b", "--tokens", "1T", "--set", "storage.usable_tb=0",
                         "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["goodput"] is None and doc["time_to_train_s"] > 0
    assert "effective_time_to_train_s" not in doc and "effective_cost_to_train_usd" not in doc
    code, out, err = run(capsys, "plan", "--set", "storage.usable_tb=0", "--set", "workload.model=llama2-7b",
                         "--set", "workload.tokens=1T")
    assert code == 0 and "no storage" in out and "days raw" in out and "effective" not in out.split("Workload")[1]


def test_model_config_errors_name_the_flag(capsys, tmp_path):
    """A non-UTF-8 config.json given with --model-config is one line naming --model-config, exit 2 (issue 19 item 5)."""
    path = tmp_path / "config.json"
    path.write_bytes(b'{"a": "\xe9"}')
    code, out, err = run(capsys, "train", "--model-config", str(path))
    assert code == 2 and out == ""
    assert err == f"clusterplan: error: --model-config: cannot read {path}: not UTF-8 text\n"


def test_a_budget_the_cluster_cannot_train_is_warned(capsys):
    """405B on 15T tokens on the 128-GPU reference: days past the 3-year life and cost past TCO are warned (issue 14)."""
    code, out, err = run(capsys, "train", "--model", "llama3-405b", "--tokens", "15T", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    life_days = 3 * 365.25
    assert doc["effective_time_to_train_s"] / 86400 > life_days
    assert any("3-year life" in w for w in doc["warnings"]) and any("TCO" in w for w in doc["warnings"])
    code, out, _ = run(capsys, "plan", "--set", 'workload.model="llama3-405b"', "--set", "workload.tokens=15e12",
                       "--format", "json")
    plan_doc = json.loads(out)
    assert doc["warnings"] and set(doc["warnings"]) <= set(plan_doc["warnings"])
    assert plan_doc["training"]["effective_cost_to_train_usd"] > plan_doc["cost"]["tco_usd"]
    code, out, _ = run(capsys, "train", "--model", "llama3-405b", "--tokens", "15T")
    assert "3-year life" in out
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--tokens", "100B", "--format", "json")
    assert json.loads(out)["warnings"] == []


def test_the_search_finds_the_larger_global_batch_at_scale(capsys):
    """405B on 16,384 GPUs: the default 4M-token batch gave 28.8 % MFU; the batch search finds 2,048 (issue 14)."""
    scale = ["--set", "cluster.num_nodes=2048", "--set", "network.tiers=3"]
    code, out, err = run(capsys, "train", "--model", "llama3-405b", "--tokens", "15T", *scale, "--format", "json")
    assert code == 0, err
    searched = json.loads(out)
    assert searched["global_batches_searched"] == [512, 1024, 2048]
    assert searched["layout"]["global_batch"] == searched["global_batch"] == 2048 and searched["mfu"] > 0.38
    code, out, _ = run(capsys, "train", "--model", "llama3-405b", "--tokens", "15T", *scale, "--global-batch", "512",
                       "--format", "json")
    fixed = json.loads(out)
    assert fixed["global_batches_searched"] == [512] and fixed["mfu"] < searched["mfu"]
    assert searched["time_to_train_s"] < fixed["time_to_train_s"]


def test_recomputation_and_precision_peaks_are_labelled(capsys):
    """"(hardware ... with recomputation)" only when something is recomputed; FP8 and 2:4 MFU name both peaks."""
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--recompute", "none")
    line = next(x for x in out.splitlines() if x.startswith("Model TFLOP/s"))
    assert "recomputation" not in line and "peak" not in line
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--recompute", "full")
    assert "with recomputation" in next(x for x in out.splitlines() if x.startswith("Model TFLOP/s"))
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--precision", "fp8", "--format", "json")
    doc = json.loads(out)
    assert doc["precision_peak_fraction"] == pytest.approx(doc["mfu"] / 2, rel=1e-3)   # H100: FP8 = 2 x BF16
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--precision", "fp8")
    assert f"{doc['mfu']:.1%} of BF16 dense peak, {doc['precision_peak_fraction']:.1%} of FP8 dense peak" in out
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--set", "workload.sparsity_speedup=1.3")
    assert "of BF16 dense peak" in out and "of BF16 2:4-sparse peak" in out


def test_every_train_flag_has_help_and_errors_name_the_typed_flag(capsys):
    """`train --help` explains every flag; `train --model xyz` names --model, not --set workload.model (issue 14)."""
    code, out, _ = run(capsys, "train", "--help")
    text = " ".join(out.split())
    assert code == 0
    for flag, (_, help_text) in FLAGS.items():
        assert help_text and f"--{flag.replace('_', '-')}" in text and " ".join(help_text.split()) in text
    code, out, err = run(capsys, "train", "--model", "xyz")
    assert code == 2 and err.startswith("clusterplan: error: --model: unknown model 'xyz'") and "--set" not in err


def test_overlap_grad_reduce_is_a_workload_setting(capsys):
    """workload.overlap_grad_reduce = false shows the whole gradient reduction; true (default) hides part of it."""
    argv = ["train", "--model", "llama2-70b", "--dp", "16", "--format", "json"]
    code, out, _ = run(capsys, *argv)
    hidden = json.loads(out)
    code, out, _ = run(capsys, *argv, "--set", "workload.overlap_grad_reduce=false")
    exposed = json.loads(out)
    assert hidden["scenario"]["workload"]["overlap_grad_reduce"] is True
    assert exposed["step_breakdown_s"]["dp_comm"] > hidden["step_breakdown_s"]["dp_comm"]
    assert exposed["step_time_s"] > hidden["step_time_s"]


def test_model_config_reads_a_snapshot_folder_and_names_the_model_by_it(capsys, tmp_path):
    """--model-config DIR reads DIR/config.json; a Hugging Face cache folder names the model (issue 22)."""
    snapshot = tmp_path / "models--Qwen--Qwen3-32B" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text((CONFIGS / "qwen3-32b.json").read_text())
    code, out, _ = run(capsys, "train", "--model-config", str(snapshot), "--format", "json")
    model = json.loads(out)["model"]
    assert code == 0 and model["name"] == "Qwen/Qwen3-32B" and model["head_dim"] == 128
    assert model["params"] == pytest.approx(32.8e9, rel=0.002) and model["seq_len"] == 8192
    assert "the pre-training context (capped at the default 8,192)" in model["seq_len_source"]
    code, _, err = run(capsys, "train", "--model-config", str(tmp_path))
    assert code == 2 and err == f"clusterplan: error: --model-config: {tmp_path} is a folder without a config.json\n"


def test_mfu_as_papers_count_it_is_printed_and_in_the_json(capsys):
    """train prints the causal-attention MFU on its own line and the JSON carries it, below the full-attention MFU."""
    code, out, _ = run(capsys, "train", "--model", "llama2-7b")
    assert code == 0 and any(line.startswith("MFU as papers count it") for line in out.splitlines())
    code, out, _ = run(capsys, "train", "--model", "llama2-7b", "--format", "json")
    doc = json.loads(out)
    assert 0 < doc["mfu_causal"] < doc["mfu"]
