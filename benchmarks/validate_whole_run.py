"""Predicted vs published GPU-hours of whole training runs (benchmarks/data/validation/whole_run_disclosures.csv).

Each run is predicted as `clusterplan train` would: its steady state from the layout search on its own
hardware, on its software era (perf/software.py; context parallelism only on the current stack), its published
tp, pp, ep, ZeRO stage and recomputation held where stated, the rest searched, at its precision and (a mixture of
experts) its pipeline schedule, all-to-all overlap and dispatcher where stated; then

- before: the steady state divided by the goodput model's goodput (failures, restarts, checkpoints: the
  "effective" time to train), at the interruption rate the run's logbook records where it publishes one;
- after: the whole run by cause (plan.training.run_by_cause, docs/reliability.md#whole-run) with the run's
  published recipe (batch ramp-up, context-extension stages) and its evaluation cadence (Megatron-LM's defaults
  where the source is silent).

Errors are predicted / published GPU-hours - 1 (negative: the model too fast). What the causes leave is the
"whole run" evidence regime (benchmarks/evidence.py): its band, the extremes of the runs whose inputs (GPU count
and hours) are all published, covers each of them; runs with an assumed or ambiguous input are printed beside it.

    python benchmarks/validate_whole_run.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from dataclasses import replace

from validate_training import gpt
from validation_data import PROJECT

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.layout import Constraints
from clusterplan.perf.model import Transformer, with_seq_len
from clusterplan.perf.presets import PRESETS, preset
from clusterplan.perf.search import search
from clusterplan.perf.software import with_software
from clusterplan.plan.reliability import job_reliability
from clusterplan.plan.reliability_inputs import scenario_rates
from clusterplan.plan.training import evidence, run_by_cause
from clusterplan.reliability.whole_run import Recipe, linear_ramp_batch_fraction
from clusterplan.spec import load_spec

DATA = PROJECT / "whole_run_disclosures.csv"
EVAL = dict(eval_interval_steps=1000, eval_steps=100)   # Megatron-LM's --eval-interval and --eval-iters defaults
_LLAMA = dict(mlp="swiglu", norm="rmsnorm", bias=False, tied_embeddings=False, learned_positions=False, vocab=32000,
              seq_len=2048)
_FALCON = dict(vocab=65024, seq_len=2048, bias=False, tied_embeddings=False, learned_positions=False)
MODELS = {   # the runs' models the presets do not hold, from their papers and model cards
    "llama-7b": lambda: with_seq_len(preset("llama2-7b"), 2048),
    "llama-13b": lambda: with_seq_len(preset("llama2-13b"), 2048),
    "llama-33b": lambda: Transformer(name="llama-33b", layers=60, hidden=6656, heads=52, ffn_hidden=17920, **_LLAMA),
    "llama-65b": lambda: Transformer(name="llama-65b", layers=80, hidden=8192, heads=64, ffn_hidden=22016, **_LLAMA),
    "bloom-176b": lambda: gpt("bloom-176b", 70, 14336, 112, 250680, 2048, learned_positions=False),
    "falcon-40b": lambda: Transformer(name="falcon-40b", layers=60, hidden=8192, heads=128, kv_heads=8,
                                      ffn_hidden=32768, **_FALCON),
    "falcon-180b": lambda: Transformer(name="falcon-180b", layers=80, hidden=14848, heads=232, kv_heads=8,
                                       ffn_hidden=59392, **_FALCON),
    "mpt-7b": lambda: gpt("mpt-7b", 32, 4096, 32, 50432, 2048, learned_positions=False),
    "mpt-1b": lambda: gpt("mpt-1b", 24, 2048, 16, 50432, 2048, learned_positions=False, bias=False),
    "opt-175b": lambda: gpt("opt-175b", 96, 12288, 96, 50272, 2048),
    "starcoderbase": lambda: Transformer(name="starcoderbase", layers=40, hidden=6144, heads=48, kv_heads=1,
                                         ffn_hidden=24576, vocab=49152, seq_len=8192),
    # Phi-1.5 and Phi-2 (their config.json): GPT-style blocks, untied embeddings, rotary positions
    "phi-1.5": lambda: gpt("phi-1.5", 24, 2048, 32, 51200, 2048, learned_positions=False, tied_embeddings=False),
    "phi-2": lambda: gpt("phi-2", 32, 2560, 32, 51200, 2048, learned_positions=False, tied_embeddings=False),
    "phi-3-mini": lambda: preset("phi-3.5-mini"),     # the same architecture (their config.json), 4K context
    "phi-3-medium": lambda: Transformer(name="phi-3-medium", layers=40, hidden=5120, heads=40, kv_heads=10,
                                        ffn_hidden=17920, **{**_LLAMA, "vocab": 32064, "seq_len": 4096}),
    "phi-4": lambda: Transformer(name="phi-4", layers=40, hidden=5120, heads=40, kv_heads=10, ffn_hidden=17920,
                                 **{**_LLAMA, "vocab": 100352, "seq_len": 4096}),
    "smollm2-1.7b": lambda: Transformer(name="smollm2-1.7b", layers=24, hidden=2048, heads=32, ffn_hidden=8192,
                                        **{**_LLAMA, "vocab": 49152, "tied_embeddings": True}),
    "smollm3-3b": lambda: Transformer(name="smollm3-3b", layers=36, hidden=2048, heads=16, kv_heads=4,
                                      ffn_hidden=11008, **{**_LLAMA, "vocab": 128256, "tied_embeddings": True,
                                                           "seq_len": 4096}),
}
BAND_INPUTS = "published"   # the band is built from the runs whose GPU count and hours are both published (inputs)


def published_layout(row: dict) -> Constraints:
    """What a user who knows the run's recipe passes `train`: tp, pp, the ZeRO stage (FSDP = 3) and recomputation
    where the source states them; the rest searched as `train` searches it. Context parallelism is searched on the
    current stack only: the 2021-23 stacks had none (Megatron-LM's came with Megatron-Core in 2024, DeepSpeed-Ulysses
    in August 2023, after these runs), and held at 1 the search finds the data parallelism the runs publish (BLOOM
    8, Falcon 7B 192, Falcon-180B 64, StarCoderBase 32). On the current stack it stays searched: held at 1, Llama 3.1
    405B's 8K stage reads 16 % slower, a steady-state finding (docs/reliability.md#whole-run)."""
    return Constraints(tp=int(row["tp"]) or None, pp=int(row["pp"]) or None,
                       zero=int(row["zero"]) if row["zero"] else None, recompute=row["recompute"] or None,
                       cp=None if row["software"] == "current" else 1, ep=int(row["ep"]) if row["ep"] else None)


def run_options(row: dict) -> Options:
    """The run's software choices as `train` takes them (workload keys): its precision, and for a mixture of
    experts its pipeline schedule, expert all-to-all overlap and dispatcher where the source states them; an empty
    cell is the key's default (bf16, 1f1b, no overlap, Megatron's alltoall dispatcher)."""
    stated = {key: row[key] for key in ("precision", "pipeline_schedule", "moe_dispatcher") if row[key]}
    return Options(seq_len=int(row["seq_len"]), global_batch=int(row["global_batch"]), attention=row["attention"],
                   moe_overlap=row["moe_overlap"] == "true", **stated)


def ramp_batch(row: dict) -> float:
    """The ramp's batch fraction: a linear ramp's harmonic equivalent where the source gives its start (Megatron's
    --rampup-batch-size), else the fraction as written."""
    if row["ramp_start_batch_fraction"]:
        return linear_ramp_batch_fraction(float(row["ramp_start_batch_fraction"]))
    return float(row["ramp_batch_fraction"])


def eval_cadence(row: dict) -> dict:
    """The run's evaluation cadence where its source states it (training steps between evaluations, forward-only
    steps per evaluation), else Megatron-LM's defaults (ASSUMPTION: the source is silent)."""
    if row["eval_interval_steps"]:
        return dict(eval_interval_steps=int(row["eval_interval_steps"]), eval_steps=int(row["eval_steps"]))
    return EVAL


def software_of(row: dict, options: Options) -> Options:
    """``options`` as the run's software era runs them (workload.software, perf/software.py): 2021-22 Megatron
    forks and 2023 DeepSpeed-era stacks lack the overlaps the current default credits. The era's attention kernel
    must be the row's (the two columns say the same thing twice; a row that contradicts itself is refused)."""
    era = with_software(options, row["software"])
    if era.attention != options.attention:
        raise ValueError(f"{row['run']}: software {row['software']!r} runs {era.attention!r} attention, the row says "
                         f"{options.attention!r}")
    return era


def in_band(row: dict) -> bool:
    """Whether a run's errors build the whole-run band: its GPU count and its GPU-hours (or wall clock) are both
    published and unambiguous (the ``inputs`` column: "published"; "assumed" where the GPU count is inferred,
    "ambiguous" where the source gives a peak or contradicts itself). The other runs are printed, not fitted to."""
    return row["inputs"] == BAND_INPUTS


def model_of(name: str, seq_len: int) -> Transformer | None:
    if name in MODELS:
        return with_seq_len(MODELS[name](), seq_len)
    return with_seq_len(PRESETS[name], seq_len) if name in PRESETS else None


def spec_overrides(row: dict) -> list[str]:
    nodes = max(1, int(row["num_gpus"]) // 8)
    return [f'cluster.gpu="{row["gpu"]}"', f"cluster.num_nodes={nodes}", f'network.fabric="{row["fabric"]}"',
            f"network.nics_per_node={row['nics_per_node']}", "network.tiers=0"]


def spec_of(row: dict):
    return load_spec(overrides=spec_overrides(row))


def logged_spec(row: dict, spec, catalog, modelled_per_day: float):
    """The run's scenario with its logbook's interruption rate where it publishes one: every failure cause's rate
    scaled by the logged rate over the modelled one (``published_interruptions_per_day``), as a user who knows their
    cluster's record sets reliability.failure_rates; the scenario as it is where the row logs none."""
    logged = float(row["published_interruptions_per_day"])
    if not logged:
        return spec
    scale = logged / modelled_per_day
    rates = ", ".join(f'"{rate.id}" = {rate.per_1000_unit_days * scale:.6g}' for rate in scenario_rates(spec, catalog))
    return load_spec(overrides=[*spec_overrides(row), f"reliability.failure_rates = {{{rates}}}"])


def predict(row: dict):
    """(steady-state GPU-hours, before, after, the WholeRun, before's band range, the failure model's interruptions
    a day at the catalog's rates) of one run, its failures at the rate its logbook records where it publishes one;
    None where it cannot be predicted."""
    model = model_of(row["model"], int(row["seq_len"]))
    catalog = load_catalog()
    if model is None or row["gpu"] not in catalog.families["gpus"]:
        return None
    spec = spec_of(row)
    built = design(spec, catalog)
    gpus, seq = int(row["num_gpus"]), int(row["seq_len"])
    fixed = published_layout(row)
    options = software_of(row, run_options(row))
    found = search(model, hardware(built), options, gpus, fixed, top=1)
    if not found.best:
        return None
    best = found.best[0]
    steady_s = float(row["tokens"]) / best.tokens_per_s
    modelled = job_reliability(spec, catalog, built, model, gpus, tokens_per_s=best.tokens_per_s,
                               useful_s=steady_s).interruptions_per_day
    reliability = job_reliability(logged_spec(row, spec, catalog, modelled), catalog, built, model, gpus,
                                  tokens_per_s=best.tokens_per_s, useful_s=steady_s)
    recipe = Recipe(ramp_tokens_fraction=float(row["ramp_tokens_fraction"]),
                    ramp_batch_fraction=ramp_batch(row),
                    long_context_tokens_fraction=float(row["long_context_tokens_fraction"]),
                    long_context_seq_len=int(row["long_context_seq_len"]), **eval_cadence(row))
    run = run_by_cause(recipe, model, best, reliability, steady_s=steady_s, seq_len=seq)
    hours = gpus / 3600
    effective = steady_s / reliability.goodput * hours
    band = evidence(built, model, options, gpus)     # the steady state's own band, as `train` prints it
    return steady_s * hours, effective, run.billed_s * hours, run, band.time_range(effective), modelled


def residuals():
    """(run, published GPU-hours, steady, before, after, WholeRun, before's band range, the failure model's
    interruptions a day, whether the run builds the band) of every run the model predicts, and the runs it does not
    (run, reason)."""
    done, skipped = [], []
    for row in csv.DictReader(open(DATA)):
        result = predict(row)
        if result is None:
            skipped.append((row["run"], row["notes"]))
            continue
        done.append((row["run"], float(row["published_gpu_hours"]), *result, in_band(row)))
    return done, skipped


def band_of(done: list) -> tuple[float, float]:
    """The whole-run band: the extremes of the after-errors of the runs whose inputs are all published."""
    errors = [after / published - 1 for _, published, _, _, after, *_, banded in done if banded]
    return min(errors), max(errors)


def causes_alone() -> list[tuple[str, float, float]]:
    """(run, published GPU-hours, the causes on the source's own steady state) of the runs whose source also
    publishes its steady-state throughput: the whole run by cause with the steady state taken as published, so the
    residual is the causes' alone, free of the steady-state model's error."""
    rows = {row["run"]: row for row in csv.DictReader(open(DATA))}
    out = []
    for run, published, _, _, _, whole, *_ in residuals()[0]:
        rate = float(rows[run]["published_tokens_per_gpu_s"] or 0)
        if rate:
            steady_hours = float(rows[run]["tokens"]) / rate / 3600
            out.append((run, published, steady_hours * whole.billed_s / whole.steady_s))
    return out


def _summary(name: str, errors: list[float], what: str) -> str:
    return (f"{name:6}: median {statistics.median(errors):+.1%}, median |error| "
            f"{statistics.median(abs(e) for e in errors):.1%}, max |error| {max(abs(e) for e in errors):.1%} "
            f"over {len(errors)} {what}")


def main() -> int:
    done, skipped = residuals()
    inputs = {row["run"]: row["inputs"] for row in csv.DictReader(open(DATA))}
    print(f"{'run':14} {'inputs':9} {'published':>12} {'steady':>12} {'before':>12} {'error':>7} {'after':>12} "
          f"{'error':>7}   causes over steady state")
    before, after, banded = [], [], []
    for run, published, steady, pre, post, whole, _, _, in_the_band in done:
        before.append(pre / published - 1)
        after.append(post / published - 1)
        banded.append(in_the_band)
        causes = ", ".join(f"{name.split()[0]} +{seconds / whole.steady_s:.1%}"
                           for name, seconds in whole.breakdown().items() if name != "steady state" and seconds > 0)
        print(f"{run:14} {inputs[run]:9} {published:12,.0f} {steady:12,.0f} {pre:12,.0f} {before[-1]:+7.1%} "
              f"{post:12,.0f} {after[-1]:+7.1%}   {causes}")
    for run, why in skipped:
        print(f"{run:14} {why}")
    print("GPU-hours; error = predicted / published - 1 (negative: too fast); before = steady state / goodput, "
          "after = whole run by cause; inputs: GPU count and hours published, the GPU count assumed, or ambiguous")
    for name, errors in (("before", before), ("after", after)):
        print(_summary(name, errors, "runs"))
        print(_summary(name, [e for e, b in zip(errors, banded) if b], "runs whose inputs are all published"))
    covered = sum(low <= published <= high for _, published, *_, (low, high), _, _ in done)
    print(f"before: the steady state's own band (its training regime, on the effective time) covers {covered} of "
          f"{len(done)} published runs")
    alone = causes_alone()
    print("causes alone, on the steady state the same source publishes (tokens/s/GPU or MFU; "
          "benchmarks/data/validation/whole_run_disclosures.csv):")
    for run, published, predicted in alone:
        print(f"  {run:14} {published:12,.0f} {predicted:12,.0f} {predicted / published - 1:+7.1%}")
    logged = {row["run"]: float(row["published_interruptions_per_day"]) for row in csv.DictReader(open(DATA))}
    print("interruptions a day, the failure model (the catalog's rates on the run's GPUs) against the run's logbook "
          "(a check, not the band):")
    for run, *_, per_day, _ in done:
        if logged[run]:
            print(f"  {run:14} {logged[run]:6.2f} logged {per_day:6.2f} modelled ({per_day / logged[run] - 1:+.0%})")
    low, high = band_of(done)
    inside = [low <= e <= high for e in after]
    print(f"after:  the whole-run band {low:+.1%} to {high:+.1%} (the extremes of the {sum(banded)} runs whose inputs "
          f"are all published) covers {sum(i for i, b in zip(inside, banded) if b)} of {sum(banded)} of them, and "
          f"{sum(i for i, b in zip(inside, banded) if not b)} of the {len(banded) - sum(banded)} runs with an assumed "
          f"or ambiguous input")
    return 0


if __name__ == "__main__":
    sys.exit(main())
