"""A mixture-of-experts model through the real commands: the search picks expert parallelism, and every output
(terminal, JSON, HTML report) names it."""

import json
from pathlib import Path

from clusterplan.cli.main import main
from clusterplan.report.size import _layout

REFERENCE = str(Path(__file__).parents[2] / "examples" / "reference-128x-h100.toml")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_train_searches_expert_parallel_layouts_for_mixtral(capsys):
    code, out, err = run(capsys, "train", "--model", "mixtral-8x7b", "--search", "--top", "5", "--format", "json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    lay = doc["layout"]
    assert lay["ep"] > 1 and (lay["tp"] * lay["dp"]) % (lay["ep"] * lay["etp"]) == 0 and 8 % lay["ep"] == 0
    assert doc["step_breakdown_s"]["ep_comm"] > 0
    assert list(lay)[:5] == ["tp", "pp", "dp", "cp", "ep"]
    code, out, _ = run(capsys, "train", "--model", "mixtral-8x7b", "--search", "--top", "5")
    whole = f", etp {lay['etp']}" if lay["etp"] != lay["tp"] else ""
    assert code == 0 and f"x cp {lay['cp']} (ep {lay['ep']}{whole})" in out
    assert "ep_comm" in out and " ep " in out.split("Top layouts")[1].splitlines()[1]


def test_a_dense_model_shows_no_ep(capsys):
    code, out, _ = run(capsys, "train", "--model", "llama2-13b", "--search", "--top", "3", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and "ep" not in doc["layout"] and "ep_comm" not in doc["step_breakdown_s"]
    assert all("ep" not in row["layout"] for row in doc["layouts"])


def test_the_report_shows_the_expert_parallel_layout(capsys, tmp_path):
    path = tmp_path / "moe.html"
    code, _, err = run(capsys, "report", REFERENCE, "--set", 'workload.model="mixtral-8x7b"', "--samples", "2000",
                       "-o", str(path))
    assert code == 0, err
    text = path.read_text()
    assert "/plan/training/layout/ep" in text and " · ep " in text


def test_the_size_tables_add_ep_after_the_degrees():
    assert _layout({"tp": 2, "pp": 2, "dp": 32, "cp": 1, "ep": 2}) == "2.2.32.1.ep2"
    assert _layout({"tp": 2, "pp": 2, "dp": 32, "cp": 1}) == "2.2.32.1"


def test_train_ep_holds_expert_parallelism_fixed(capsys):
    """--ep holds the expert-parallel size like --tp holds tp; the scenario key does the same."""
    code, out, err = run(capsys, "train", "--model", "mixtral-8x7b", "--ep", "2", "--format", "json")
    assert code == 0 and err == ""
    assert json.loads(out)["layout"]["ep"] == 2
    code, out, _ = run(capsys, "train", "--model", "mixtral-8x7b", "--set", "workload.ep=4", "--format", "json")
    assert code == 0 and json.loads(out)["layout"]["ep"] == 4


def test_bad_ep_values_exit_2_naming_the_flag_or_key(capsys):
    """An ep that the experts, the data-parallel ranks or a dense model cannot take is one line, exit 2."""
    cases = ((("--ep", "3"), "--ep: ep = 3 does not divide the model's 8 experts"),
             (("--ep", "-1"), "--ep: must be >= 0"),
             (("--ep", "8", "--tp", "2", "--pp", "8", "--gpus", "32"),     # not tp x dp = 4 either
              "--ep: ep = 8 does not divide the data-parallel ranks the 32 GPUs leave (pp x cp = 8)"),
             (("--ep", "8", "--tp", "8", "--pp", "8", "--gpus", "64", "--etp", "0"),
              "--ep: ep = 8 does not divide the data-parallel ranks the 64 GPUs leave (tp x pp x cp = 64)"),
             (("--set", "workload.ep=3"), "workload.ep: ep = 3 does not divide"))
    for argv, message in cases:
        code, out, err = run(capsys, "train", "--model", "mixtral-8x7b", *argv)
        assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, (argv, err)
    code, out, err = run(capsys, "train", "--model", "llama2-13b", "--ep", "2")
    assert code == 2 and "--ep: ep = 2 needs a mixture-of-experts model; llama2-13b is dense" in err


def test_train_etp_1_folds_expert_parallelism_over_the_tensor_parallel_ranks(capsys):
    """--etp 1 (whole experts) lets ep span tp x dp, as Megatron's parallel folding; terminal and JSON name it."""
    argv = ("train", "--model", "qwen3-30b-a3b", "--set", "cluster.num_nodes=2", "--tp", "2", "--ep", "16")
    code, _, err = run(capsys, *argv, "--etp", "0")
    assert code == 2 and "--ep: ep = 16 does not divide the data-parallel ranks" in err
    code, out, err = run(capsys, *argv, "--format", "json")      # etp searched: whole experts are the way
    assert code == 0 and json.loads(out)["layout"]["etp"] == 1
    code, out, err = run(capsys, *argv, "--etp", "1", "--format", "json")
    assert code == 0 and err == ""
    lay = json.loads(out)["layout"]
    assert (lay["tp"], lay["dp"], lay["ep"], lay["etp"]) == (2, 8, 16, 1)
    code, out, _ = run(capsys, *argv, "--etp", "1")
    assert code == 0 and "x cp 1 (ep 16, etp 1)" in out
    for bad, message in ((("--etp", "1", "--tp", "1"), "--etp: etp = 1 (whole experts) needs tp > 1"),
                         (("--set", "workload.etp=2"), "workload.etp: must be 0 (tp) or 1 (whole experts)")):
        code, out, err = run(capsys, "train", "--model", "qwen3-30b-a3b", *bad)
        assert code == 2 and out == "" and message in err, err


def test_a_moe_prediction_takes_the_moe_runs_band_or_names_why_not(capsys):
    """The published MoE runs (benchmarks/validate_moe.py) are a regime of their own: Qwen3-30B-A3B in FP8 on the
    reference H100 cluster at 4K tokens is inside their envelope; Mixtral 8x7B at its default 8K tokens is outside
    it (every published MoE run is at 4K) and says so in one line with the MoE runs' widest band."""
    code, out, _ = run(capsys, "train", "--model", "qwen3-30b-a3b", "--precision", "fp8",
                       "--set", "workload.seq_len=4096", "--format", "json")
    assert code == 0
    evidence = json.loads(out)["evidence"]
    assert evidence["regime"].startswith("mixture-of-experts, h100-sxm, fp8"), evidence
    code, out, _ = run(capsys, "train", "--model", "mixtral-8x7b", "--format", "json")
    assert code == 0
    evidence = json.loads(out)["evidence"]
    assert "longer than any validated mixture-of-experts run" in json.dumps(evidence)


DEEPSEEK_V3 = ("train", "--set", 'cluster.gpu="h800-sxm"', "--gpus", "2048", "--model", "deepseek-v3", "--tp", "1",
               "--pp", "16", "--cp", "1", "--ep", "64", "--precision", "fp8", "--seq-len", "4096", "--mbs", "1",
               "--zero", "1", "--set", 'workload.moe_dispatcher="deepep"', "--set",
               'workload.pipeline_schedule="dualpipe"')


def test_dualpipe_runs_deepseek_v3_as_published_without_pipeline_sends(capsys):
    """DeepSeek-V3's own layout under DualPipe: a step with no exposed pp_p2p; the JSON and the table name the
    schedule."""
    code, out, err = run(capsys, *DEEPSEEK_V3, "--global-batch", "15360", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["step_breakdown_s"]["pp_p2p"] == 0 and doc["step_breakdown_s"]["pp_bubble"] > 0
    assert doc["pipeline_schedule"] == "dualpipe"
    code, out, _ = run(capsys, *DEEPSEEK_V3, "--global-batch", "15360")
    assert code == 0 and "DualPipe (two chunks a GPU)" in out and "virtual stages" not in out


def test_dualpipe_refuses_an_odd_number_of_micro_batches_naming_the_batch(capsys):
    """15,488 sequences over dp 128 are 121 micro-batches: exit 2, one line naming --global-batch."""
    code, out, err = run(capsys, *DEEPSEEK_V3, "--global-batch", "15488")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--global-batch" in err and "121" in err


def test_dualpipe_refuses_fewer_than_two_micro_batches_per_stage(capsys):
    """2,048 sequences over dp 128 are 16 micro-batches, fewer than 2 x pp 16 = 32: exit 2, one line naming
    --global-batch (DeepSeek-V3's ramp started at 3,072: 24 micro-batches, as few)."""
    code, out, err = run(capsys, *DEEPSEEK_V3, "--global-batch", "2048")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--global-batch" in err and "at least 2 x pp (32)" in err


def test_the_report_names_dualpipe(capsys, tmp_path):
    """The HTML report of a DualPipe job says so beside the chosen layout (its v column is 1F1B's)."""
    path = tmp_path / "dualpipe.html"
    code, _, err = run(capsys, "report", REFERENCE, "--set", 'workload.model="mixtral-8x7b"', "--set",
                       'workload.pipeline_schedule="dualpipe"', "--samples", "2000", "-o", str(path))
    assert code == 0, err
    assert "Pipeline schedule: DualPipe" in path.read_text()


def test_token_dropping_under_a_whole_iteration_graph_is_outside_the_moe_runs_domain(capsys):
    """Regression: `train --model qwen3-30b-a3b --precision fp8` with workload.moe_routing "tokendrop" and
    workload.cuda_graphs "full" took the dropless runs' band (h100-sxm, fp8, 65-512 GPUs, n=2); every MoE run in the
    band is dropless and none captures the whole iteration, so both are named and the band is the MoE widest."""
    code, out, _ = run(capsys, "train", "--model", "qwen3-30b-a3b", "--precision", "fp8",
                       "--set", "workload.seq_len=4096", "--set", 'workload.moe_routing="tokendrop"',
                       "--set", 'workload.cuda_graphs="full"', "--format", "json")
    assert code == 0
    evidence = json.loads(out)["evidence"]
    assert evidence["regime"] == "out of domain"
    assert evidence["out_of_domain"] == ["no validated mixture-of-experts run with token dropping",
                                         "no validated mixture-of-experts run with a whole-iteration CUDA graph"]
