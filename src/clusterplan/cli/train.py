"""``clusterplan train``: step time, memory, MFU, time- and cost-to-train, and the best layout."""

from __future__ import annotations

import argparse
import json

from clusterplan.cli.inputs import measured_gemm_efficiency
from clusterplan.cli.output import (add_gpus_option, add_output_options, add_scenario_options, emit, named_gpus,
                                    scenario_overrides, write_json)
from clusterplan.plan.ownership import today
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.names import PRECISIONS, RECOMPUTE
from clusterplan.perf.presets import PRESETS
from clusterplan.plan import plan
from clusterplan.report.export import train_document
from clusterplan.report.training import reasons, render_training
from clusterplan.spec import load_scenario

# Command-line flag -> [workload] key (its type and help); a flag given holds that key fixed, the rest are searched.
# --gpus is not among them: it sizes the cluster (cluster.num_gpus) as in plan; the job's share is --job-gpus.
FLAGS = {
    "model": (str, "preset model: " + ", ".join(PRESETS)),
    "model_config": (str, "a Hugging Face config.json instead of a preset"),
    "job_gpus": (int, "GPUs the job uses, whole nodes: workload.gpus (default: the whole cluster)"),
    "tp": (int, "tensor-parallel degree (default: searched)"),
    "pp": (int, "pipeline-parallel degree (default: searched)"),
    "dp": (int, "data-parallel degree (default: what tp x pp x cp leave)"),
    "cp": (int, "context-parallel degree (default: searched)"),
    "ep": (int, "expert-parallel degree of a mixture-of-experts model (default: searched)"),
    "etp": (int, "its experts' tensor-parallel size: 0 = tp, 1 = whole experts, ep folded over tp x dp "
                 "(default: searched)"),
    "mbs": (int, "micro-batch size in sequences (default: searched)"),
    "global_batch": (int, "sequences per step (default: searched from about 4M tokens, docs/training.md)"),
    "seq_len": (int, "sequence length in tokens (default: the model's context length)"),
    "virtual_stages": (int, "interleaved pipeline stages per GPU (default: searched)"),
    "recompute": (str, "activation recomputation (default: searched)"),
    "zero": (int, "ZeRO stage, 3 = FSDP (default: searched)"),
    "precision": (str, "GEMM precision (default bf16)"),
    "tokens": (str, "token budget for time- and cost-to-train, e.g. 2T, 300B (default: none)"),
}


KEYS = {"job_gpus": "gpus"}        # a flag whose [workload] key has another name


def _named_by_flag(error: ConfigError, args: argparse.Namespace) -> ConfigError:
    """An error about a key that a flag set names the flag (``--model-config``, ``--gpus``), not ``--set``."""
    named = named_gpus(error, args)
    if named is not error:
        return named
    section, _, name = error.key.partition(".")
    flag = next((flag for flag, key in KEYS.items() if key == name), name)
    if section != "workload" or getattr(args, flag, None) is None:
        return error
    return ConfigError(error.message, key=f"--{flag.replace('_', '-')}")


def add_parser(commands) -> None:
    parser = commands.add_parser("train", help="predict LLM training speed, memory and cost; search layouts",
                                 description="Training step time, MFU, memory per GPU and time/cost to train "
                                             "for the scenario's [workload], on the planned cluster.")
    add_scenario_options(parser)
    add_gpus_option(parser, "cluster size in GPUs: cluster.num_gpus, as in plan (the job takes them all "
                            "unless --job-gpus says)")
    for flag, (kind, text) in FLAGS.items():
        parser.add_argument(f"--{flag.replace('_', '-')}", dest=flag, type=kind, help=text,
                            choices={"recompute": RECOMPUTE, "precision": PRECISIONS,
                                     "zero": (0, 1, 2, 3), "etp": (0, 1)}.get(flag))
    parser.add_argument("--calibration", metavar="FILE",
                        help="clusterplan bench gemm --gpu ID --format json output: use its measured GEMM efficiency")
    parser.add_argument("--search", action="store_true", help="show the top layouts and what was rejected")
    parser.add_argument("--top", type=int, default=10, help="layouts to show with --search (default 10, any number)")
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    overrides = scenario_overrides(args)
    for flag, (kind, _) in FLAGS.items():
        value = getattr(args, flag)
        if value is not None:
            key = KEYS.get(flag, flag)
            overrides.append(f"workload.{key}={value if kind is int else json.dumps(value)}")  # a TOML string
    if args.calibration:
        overrides.append(f"workload.gemm_efficiency={measured_gemm_efficiency(args.calibration)}")
    if args.top < 1:
        raise ConfigError(f"must be >= 1, got {args.top}", key="--top")
    try:
        scenario = load_scenario(args.scenario, overrides)
        if not scenario.spec.workload.defined:
            raise ConfigError("no model: give --model NAME, --model-config FILE or a [workload] model",
                              key="--model")
        with scenario.located():
            result = plan(scenario.spec, top=args.top if args.search else 1, today=today())
    except ConfigError as error:
        raise _named_by_flag(error, args) from None
    document = train_document(result)
    if not document["feasible"]:
        raise InfeasiblePlan(f"no layout of {document['model']['name']} fits {document['num_gpus']} GPUs: "
                             f"{reasons(document['rejected'])}")
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        emit(lambda stream: render_training(document, stream), args.output)
    return 0
