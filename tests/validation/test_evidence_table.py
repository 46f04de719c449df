"""The committed band table and docs/evidence.md equal what benchmarks/evidence.py produces from the validation
data now (a model change that moves a residual must regenerate them: python benchmarks/evidence.py --write)."""

import csv
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
evidence = pytest.importorskip("evidence")

if not evidence.validate_training.DATA.is_dir():
    pytest.skip("shared validation data not beside this checkout", allow_module_level=True)

DATA = evidence.table()


def test_the_committed_band_table_is_current():
    """src/clusterplan/perf/evidence.json is the script's output, byte for byte."""
    assert evidence.TABLE.read_text(encoding="utf-8") == evidence.table_text(DATA)


def test_docs_evidence_is_current():
    """docs/evidence.md is the script's output, byte for byte."""
    assert evidence.DOC.read_text(encoding="utf-8") == evidence.document(DATA)


def test_every_band_holds_its_median_and_few_points_widen_it():
    """low <= median <= high in every regime; a regime of fewer than 10 points covers its own extremes."""
    for kind in ("training", "collectives"):
        for key, row in DATA[kind]["regimes"].items():
            assert row["low"] <= row["median"] <= row["high"], key
            if row["n"] < 10:
                assert row["low"] <= row["min"] and row["high"] >= row["max"], key


def test_the_whole_run_band_is_its_runs_extremes_and_holds_most_runs_it_was_not_built_from():
    """The "whole run" band is exactly the extremes of the runs it is built from (no wider), and it is tested where it
    was not fitted: at least half the runs with an assumed or ambiguous input, which never build it, fall inside it,
    as many as docs/evidence.md quotes."""
    row = DATA["whole_run"]
    errors = sorted(row["runs"].values())
    assert row["n"] == len(errors) >= 10
    assert (row["low"], row["high"]) == (errors[0], errors[-1])
    outside = list(row["not_in_band"].values())
    inside = sum(row["low"] <= error <= row["high"] for error in outside)
    assert inside >= len(outside) / 2
    assert f"an assumed or ambiguous input; {inside} of {len(outside)} inside it" in evidence.DOC.read_text(encoding="utf-8")


def test_the_whole_run_band_is_built_from_the_runs_whose_inputs_are_published():
    """The band's runs are the rows whose GPU count and hours are both published; a run with an assumed GPU count or
    an ambiguous disclosure is listed beside it, never in it. Regression: Falcon-180B's "up to 4,096 GPUs" (a peak)
    built the band's upper end (+63.9 %) as if 4,096 GPUs had run the whole time."""
    rows = {row["run"]: row for row in csv.DictReader(open(evidence.validate_whole_run.DATA))}
    whole = DATA["whole_run"]
    assert {rows[run]["inputs"] for run in whole["runs"]} == {"published"}
    assert {rows[run]["inputs"] for run in whole["not_in_band"]} == {"assumed", "ambiguous"}
    assert set(whole["runs"]) | set(whole["not_in_band"]) == set(rows)
    assert "deepseek-v3" in whole["runs"]     # predicted on h800-sxm with DualPipe, its inputs all published
    assert rows["falcon-180b"]["inputs"] == "ambiguous" and "falcon-180b" in whole["not_in_band"]


def test_a_whole_run_is_predicted_on_its_software_era():
    """A row's software era sets the switches perf/software.py documents (no inline twin); a row whose era runs
    another attention kernel than the row states contradicts itself and is refused."""
    from dataclasses import replace

    from clusterplan.perf.hardware import Options

    software_of, base = evidence.validate_whole_run.software_of, Options(seq_len=2048, global_batch=8)
    older = software_of({"run": "x", "software": "deepspeed-2023"}, replace(base, attention="flash1"))
    assert (older.attention, older.overlap_grad_reduce, older.sequence_parallel) == ("flash1", False, False)
    assert software_of({"run": "x", "software": "current"}, base) == base
    with pytest.raises(ValueError, match="'unfused' attention"):
        software_of({"run": "x", "software": "megatron-2021"}, base)


def test_context_parallelism_is_searched_on_the_current_stack_only():
    """Regression: the search gave StarCoderBase (Megatron-LM, 2023) CP 4 and a quarter of its published dp 32, a
    mechanism its stack did not have; the 2021-23 eras hold CP at 1, the current one leaves it to the search."""
    layout = evidence.validate_whole_run.published_layout
    row = {"tp": "4", "pp": "4", "zero": "", "recompute": "", "ep": ""}
    assert layout({**row, "software": "deepspeed-2023"}).cp == 1
    assert layout({**row, "software": "megatron-2021"}).cp == 1
    assert layout({**row, "software": "current"}).cp is None


def test_a_whole_run_takes_its_stated_precision_schedule_and_expert_layout():
    """DeepSeek-V3's row: FP8, DualPipe, all-to-alls overlapped and sent once per node, ep 64 held; a row with those
    cells empty takes the keys' defaults (bf16, 1f1b, no overlap, alltoall) and searches ep."""
    rows = {row["run"]: row for row in csv.DictReader(open(evidence.validate_whole_run.DATA))}
    options = evidence.validate_whole_run.run_options(rows["deepseek-v3"])
    assert (options.precision, options.pipeline_schedule, options.moe_overlap, options.moe_dispatcher) == (
        "fp8", "dualpipe", True, "deepep")
    assert evidence.validate_whole_run.published_layout(rows["deepseek-v3"]).ep == 64
    plain = evidence.validate_whole_run.run_options(rows["llama3.1-405b"])
    assert (plain.precision, plain.pipeline_schedule, plain.moe_overlap, plain.moe_dispatcher) == (
        "bf16", "1f1b", False, "alltoall")
    assert evidence.validate_whole_run.published_layout(rows["llama3.1-405b"]).ep is None


def test_a_logged_interruption_rate_scales_every_failure_cause():
    """A run whose logbook publishes its interruptions a day (2.0) where the catalog's rates give 0.5: every cause's
    rate x 4, as a user who knows their cluster's record sets reliability.failure_rates; no logged rate, no change."""
    from clusterplan.catalog import load_catalog
    from clusterplan.plan.reliability_inputs import scenario_rates

    whole = evidence.validate_whole_run
    row = {"gpu": "h100-sxm", "num_gpus": "16", "fabric": "ib-ndr400", "nics_per_node": "8",
           "published_interruptions_per_day": "2.0"}
    spec, catalog = whole.spec_of(row), load_catalog()
    before = {rate.id: rate.per_1000_unit_days for rate in scenario_rates(spec, catalog)}
    after = {rate.id: rate.per_1000_unit_days for rate in scenario_rates(whole.logged_spec(row, spec, catalog, 0.5),
                                                                         catalog)}
    assert after == pytest.approx({cause: 4 * rate for cause, rate in before.items()}, rel=1e-5)
    assert whole.logged_spec({**row, "published_interruptions_per_day": "0"}, spec, catalog, 0.5) is spec


def test_multi_node_infiniband_collectives_are_validated():
    """Regression: the reference's fabric named itself out of domain ("no validated multi-node collective over
    infiniband") until NVIDIA's InfiniBand points were added."""
    from clusterplan.perf.evidence import collective_band

    assert "infiniband" in DATA["collectives"]["envelope"]["technologies"]
    band = collective_band(gpu="h100-sxm", num_nodes=2, size_bytes=2**30, technology="infiniband")
    assert not any("infiniband" in reason for reason in band.out_of_domain)
