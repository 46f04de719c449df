"""perf/evidence.py: regimes, the lookup into the committed band table, out-of-domain reasons, ranges."""

import pytest

from clusterplan.perf.evidence import Band, collective_band, gpus_band, size_band, table, training_band

H100 = dict(gpu="h100-sxm", precision="bf16", num_gpus=768, params=70e9, attention="flash", technology="infiniband",
            seq_len=4096)


def test_bands_of_scale_and_size_are_closed_on_the_right():
    """8 GPUs is one node's band, 9 the next; 1B parameters starts the 1-10B band."""
    assert gpus_band(8) == "1-8 GPUs" and gpus_band(9) == "9-64 GPUs" and gpus_band(16385) == "> 16,384 GPUs"
    assert size_band(0.9e9) == "0-1B" and size_band(1e9) == "1-10B" and size_band(405e9) == ">= 100B"


def test_a_validated_regime_is_found_with_its_n_and_a_band_around_its_median():
    """H100 BF16 at 768 GPUs is validated (Megatron-Core): in domain, n >= 1, low <= median <= high."""
    band = training_band(**H100)
    assert not band.out_of_domain and band.warning == ""
    assert band.regime.startswith("h100-sxm, bf16") and band.n >= 1
    assert band.low <= band.median <= band.high


def test_the_most_specific_regime_wins_and_matches_the_table():
    """The band is the table's row for the longest matching key prefix."""
    band = training_band(**H100)
    row = table()["training"]["regimes"][band.regime.replace(", ", " | ")]
    assert (band.n, band.low, band.high) == (row["n"], row["low"], row["high"])


@pytest.mark.parametrize("change, reason", [
    (dict(gpu="mi300x"), "no validated run on mi300x"),
    (dict(gpu="b200"), "no validated bf16 run on b200"),
    (dict(gpu="a100-80gb-sxm", precision="fp8"), "no validated fp8 run on a100-80gb-sxm"),
    (dict(num_gpus=100_000), "more than any validated run"),
    (dict(seq_len=1_048_576), "longer than any validated run"),
    (dict(technology="nvlink-rack"), "no validated multi-node run over nvlink-rack"),
])
def test_out_of_domain_names_why_and_gets_the_widest_band(change, reason):
    """Each out-of-domain input is named in the one-line warning and the band is the widest of its kind."""
    band = training_band(**{**H100, **change})
    widest = table()["training"]["widest"]
    assert any(reason in text for text in band.out_of_domain)
    assert reason in band.warning and "\n" not in band.warning
    assert (band.low, band.high, band.regime) == (widest["low"], widest["high"], "out of domain")
    assert band.high - band.low >= max(row["high"] - row["low"] for row in table()["training"]["regimes"].values())


def test_ranges_invert_for_times_and_scale_for_rates():
    """A time t reads as t / (1 + e): a model too fast (e < 0) widens the upper end; rates scale by 1 + e."""
    band = Band(kind="training", regime="x", n=10, median=0.0, low=-0.2, high=0.1)
    assert band.time_range(1.0) == pytest.approx((1 / 1.1, 1 / 0.8))
    assert band.rate_range(100.0) == pytest.approx((80.0, 110.0))


def test_a_collective_on_one_node_of_a_validated_gpu_is_in_domain():
    """One H200 node at 1 GiB: the single-node NVLS sweeps cover it."""
    band = collective_band(gpu="h200-sxm", num_nodes=1, size_bytes=2**30, technology="infiniband")
    assert not band.out_of_domain and band.regime.startswith("one node, h200-sxm")


def test_a_collective_over_an_unvalidated_fabric_is_out_of_domain():
    band = collective_band(gpu="h200-sxm", num_nodes=2, size_bytes=2**30, technology="token-ring")
    assert "no validated multi-node collective over token-ring" in band.warning


def test_a_moe_model_takes_the_moe_runs_band_inside_their_envelope():
    """FP8 on H100 at 256 GPUs and 4K tokens is inside the published MoE runs' envelope: its regime is the MoE
    kind's (mixture-of-experts, h100-sxm, fp8, ...), never the dense runs' one."""
    band = training_band(**{**H100, "precision": "fp8", "num_gpus": 256, "experts": 128})
    assert not band.out_of_domain and band.regime.startswith("mixture-of-experts, h100-sxm, fp8")
    row = table()["moe"]["regimes"][band.regime.replace(", ", " | ")]
    assert (band.n, band.low, band.high) == (row["n"], row["low"], row["high"])


@pytest.mark.parametrize("change, reason", [
    (dict(gpu="b200", precision="bf16"), "no validated bf16 mixture-of-experts run on b200"),
    (dict(gpu="a100-80gb-sxm"), "no validated mixture-of-experts run on a100-80gb-sxm"),
    (dict(seq_len=8192), "longer than any validated mixture-of-experts run (4,096)"),
    (dict(num_gpus=4096), "more than any validated mixture-of-experts run (1,024)"),
    (dict(routing="tokendrop"), "no validated mixture-of-experts run with token dropping"),
    (dict(graphs="full", routing="tokendrop"), "no validated mixture-of-experts run with a whole-iteration CUDA graph"),
    (dict(schedule="dualpipe"), "no validated mixture-of-experts run with the DualPipe schedule"),
])
def test_a_moe_model_outside_the_moe_envelope_names_why_and_gets_the_moe_widest_band(change, reason):
    """Outside the MoE runs' envelope: the reason named, the MoE kind's widest band."""
    band = training_band(**{**H100, "precision": "fp8", "num_gpus": 256, "experts": 128, **change})
    widest = table()["moe"]["widest"]
    assert any(reason in text for text in band.out_of_domain), band.out_of_domain
    assert (band.low, band.high, band.regime) == (widest["low"], widest["high"], "out of domain")


def test_the_moe_envelope_records_the_runs_routing_and_cuda_graphs():
    """The published MoE runs in the band are all dropless, with no graphs, a router graph or attention+router
    graphs: those stay in domain; token dropping or a whole-iteration graph is named (regression: both were
    looked up as if dropless without graphs)."""
    envelope = table()["moe"]["envelope"]
    assert envelope["routings"] == ["dropless"]
    assert envelope["cuda_graphs"] == ["attention+router", "none", "router"]
    moe = {**H100, "precision": "fp8", "num_gpus": 256, "experts": 128}
    assert training_band(**moe, graphs="attention+router").out_of_domain == ()
    both = training_band(**moe, routing="tokendrop", graphs="full").out_of_domain
    assert both == ("no validated mixture-of-experts run with token dropping",
                    "no validated mixture-of-experts run with a whole-iteration CUDA graph")


@pytest.mark.parametrize("change, reason", [
    (dict(graphs="full"), "no validated run with a whole-iteration CUDA graph"),
    (dict(schedule="dualpipe"), "no validated run with the DualPipe schedule"),
])
def test_a_dense_run_with_settings_no_validated_run_used_is_out_of_domain(change, reason):
    """Every validated dense run is predicted without CUDA graphs on 1F1B (the envelope says so); a whole-iteration
    graph (no host launches) or DualPipe (a smaller bubble, hidden sends) is a prediction none of them checked."""
    envelope = table()["training"]["envelope"]
    assert (envelope["cuda_graphs"], envelope["schedules"]) == (["none"], ["1f1b"])
    band = training_band(**{**H100, **change})
    assert band.out_of_domain == (reason,) and band.regime == "out of domain"
