"""``clusterplan train``: step time, memory, MFU, time- and cost-to-train, and the best layout."""

from __future__ import annotations

import argparse
import json

from clusterplan.cli.output import add_output_options, add_scenario_options, emit, write_json

# Command-line flag -> [workload] key; a flag given holds that key fixed, the rest are searched.
FLAGS = {"model": str, "model_config": str, "gpus": int, "tp": int, "pp": int, "dp": int, "cp": int, "mbs": int,
         "global_batch": int, "seq_len": int, "virtual_stages": int, "recompute": str, "zero": int,
         "precision": str, "tokens": str}


def add_parser(commands) -> None:
    from clusterplan.names import PRECISIONS, RECOMPUTE

    parser = commands.add_parser("train", help="predict LLM training speed, memory and cost; search layouts",
                                 description="Training step time, MFU, memory per GPU and time/cost to train "
                                             "for the scenario's [workload], on the planned cluster.")
    add_scenario_options(parser)
    for flag, kind in FLAGS.items():
        parser.add_argument(f"--{flag.replace('_', '-')}", dest=flag, type=kind,
                            choices={"recompute": RECOMPUTE, "precision": PRECISIONS,
                                     "zero": (0, 1, 2, 3)}.get(flag))
    parser.add_argument("--calibration", metavar="FILE",
                        help="clusterplan bench gemm --gpu ID --format json output: use its measured GEMM efficiency")
    parser.add_argument("--search", action="store_true", help="show the top layouts and what was rejected")
    parser.add_argument("--top", type=int, default=10, help="layouts to show with --search (default 10, any number)")
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from clusterplan.errors import ConfigError, InfeasiblePlan
    from clusterplan.plan import plan
    from clusterplan.report.export import train_document
    from clusterplan.spec import load_scenario

    overrides = list(args.overrides)
    for flag, kind in FLAGS.items():
        value = getattr(args, flag)
        if value is not None:
            overrides.append(f"workload.{flag}={value if kind is int else json.dumps(value)}")  # a TOML string
    if args.calibration:
        overrides.append(f"workload.gemm_efficiency={measured_gemm_efficiency(args.calibration)}")
    if args.top < 1:
        raise ConfigError(f"must be >= 1, got {args.top}", key="--top")
    scenario = load_scenario(args.scenario, overrides)
    if not scenario.spec.workload.defined:
        raise ConfigError("no model: give --model NAME, --model-config FILE or a [workload] model",
                          key="--model")
    with scenario.located():
        result = plan(scenario.spec, top=args.top if args.search else 1)
    document = train_document(result)
    if not document["feasible"]:
        from clusterplan.report.training import reasons

        raise InfeasiblePlan(f"no layout of {document['model']['name']} fits {document['num_gpus']} GPUs: "
                             f"{reasons(document['rejected'])}")
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        from clusterplan.report.training import render_training

        emit(lambda stream: render_training(document, stream), args.output)
    return 0


def measured_gemm_efficiency(path: str) -> float:
    """The median fraction of peak of the BF16 (else FP16) multiplies in a ``clusterplan.gemm/1`` document."""
    import statistics

    from clusterplan.bench.gemm import SCHEMA
    from clusterplan.errors import ConfigError

    try:
        with open(path, encoding="utf-8") as stream:
            doc = json.load(stream)
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}", key="--calibration") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"not JSON ({error.msg})", source=path, line=error.lineno) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ConfigError(f"not a {SCHEMA} document (clusterplan bench gemm --format json)", source=path)
    for dtype in ("bf16", "fp16"):
        fractions = [row["fraction_of_peak"] for row in doc.get("rows", [])
                     if isinstance(row, dict) and row.get("dtype") == dtype and row.get("fraction_of_peak")]
        if fractions:
            return min(statistics.median(fractions), 1.0)
    raise ConfigError("no bf16 or fp16 multiply with a fraction of peak: run clusterplan bench gemm --gpu ID",
                      source=path)
