"""``clusterplan reliability``: interruptions, checkpoints, goodput and storage of the training job."""

from __future__ import annotations

import argparse
import math
from dataclasses import replace

from clusterplan.cli.output import (add_gpus_option, add_output_options, add_scenario_options, emit, named_gpus,
                                    scenario_overrides, write_json)
from clusterplan.errors import ConfigError
from clusterplan.plan.reliability import reliability
from clusterplan.report.reliability import reliability_document, render_reliability
from clusterplan.spec import load_scenario


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "reliability", help="interruptions, checkpoint interval, goodput and storage of the training job",
        description="Failures per day, job mean time to interruption, checkpoint size and write time, "
                    "Young's and Daly's intervals, goodput, spare nodes and storage for the scenario's "
                    "[workload] (default model: llama2-13b).")
    add_scenario_options(parser)
    add_gpus_option(parser, "cluster size in GPUs: cluster.num_gpus, as in plan and train")
    parser.add_argument("--job-gpus", dest="job_gpus", type=int, metavar="N",
                        help="GPUs the job uses, whole nodes (default: workload.gpus or all)")
    parser.add_argument("--days", type=float, help="length of the run in days (default: reliability.days)")
    parser.add_argument("--checkpoint-interval-min", type=float, metavar="M",
                        help="checkpoint every M minutes (default: Daly's optimum)")
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args.scenario, scenario_overrides(args))
    except ConfigError as error:
        raise named_gpus(error, args) from None
    spec = _with_options(scenario.spec, args)
    with scenario.located():
        try:
            result = reliability(spec)
        except ConfigError as error:   # the job's GPUs come from --job-gpus when it is given
            if args.job_gpus is None or error.key != "workload.gpus":
                raise
            raise ConfigError(error.message, key="--job-gpus") from None
    document = reliability_document(spec=result.spec, job=result.job, sizes=result.sizes,
                                    warnings=result.warnings)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        emit(lambda stream: render_reliability(document, stream), args.output)
    return 0


def _with_options(spec, args: argparse.Namespace):
    """The scenario with the command-line options applied, so that the echoed scenario is the one used."""
    settings, workload = spec.reliability, spec.workload
    if args.days is not None:
        if not (math.isfinite(args.days) and args.days > 0):
            raise ConfigError(f"must be a number of days > 0, got {args.days:g}", key="--days")
        settings = replace(settings, days=args.days)
    if args.checkpoint_interval_min is not None:
        if not (math.isfinite(args.checkpoint_interval_min) and args.checkpoint_interval_min > 0):
            raise ConfigError(f"must be > 0 minutes (leave it out for Daly's optimum), got "
                              f"{args.checkpoint_interval_min:g}", key="--checkpoint-interval-min")
        settings = replace(settings, checkpoint_interval_min=args.checkpoint_interval_min)
    if args.job_gpus is not None:
        if args.job_gpus < 1:
            raise ConfigError(f"must be >= 1, got {args.job_gpus}", key="--job-gpus")
        workload = replace(workload, gpus=args.job_gpus)
    return replace(spec, reliability=settings, workload=workload)
