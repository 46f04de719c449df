"""``clusterplan collectives``: what nccl-tests would measure on the planned cluster."""

from __future__ import annotations

import argparse
import sys

from clusterplan.cli.inputs import read_calibration_file, read_measured
from clusterplan.cli.output import (add_output_options, add_scenario_options, add_sweep_options, emit, sweep_bytes,
                                    write_json)
from clusterplan.errors import ConfigError
from clusterplan.names import dtype_name
from clusterplan.perf.collectives import DTYPE_BYTES, OPS, size_sweep
from clusterplan.plan.collectives import collectives
from clusterplan.report.export import collectives_document
from clusterplan.report.nccl import render_collectives
from clusterplan.spec import load_scenario


def add_parser(commands) -> None:
    parser = commands.add_parser("collectives", help="predict nccl-tests results on the designed cluster",
                                 description="Predicted collective time, algbw and busbw per message size.")
    add_scenario_options(parser)
    parser.add_argument("--op", default="all_reduce", choices=OPS, help="collective (default all_reduce)")
    add_sweep_options(parser, default_min="8", default_max="16G")
    parser.add_argument("--gpus", type=int, help="GPUs in the group (default: the whole cluster)")
    parser.add_argument("--dtype", default="float", type=dtype_name, choices=sorted(DTYPE_BYTES),
                        help="element type: " + ", ".join(sorted(DTYPE_BYTES)) + "; or bf16, fp16, fp32 (default float)")
    parser.add_argument("--measured", metavar="FILE", help="nccl-tests log or clusterplan.bench/1 JSON to compare")
    parser.add_argument("--calibration", metavar="FILE", help="calibration TOML from `clusterplan calibrate`")
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.overrides)
    low, high, increment = sweep_bytes(args)
    try:
        sizes = size_sweep(low, high, factor=args.stepfactor, increment=increment)
    except ValueError as error:
        raise ConfigError(str(error), key="-b/-e/-f/-i") from None
    measured = read_measured(args.measured, args.op) if args.measured else None
    calibration = read_calibration_file(args.calibration) if args.calibration else None
    with scenario.located():
        result = collectives(scenario.spec, op=args.op, sizes=sizes, gpus=args.gpus, dtype=args.dtype,
                             measured=measured, calibration=calibration)
    if result.calibrated is False:
        sys.stderr.write(f"clusterplan: {args.calibration} has no fit for {args.op} on "
                         f"{result.prediction.num_ranks} ranks; the model is used\n")
    document = collectives_document(result)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        emit(lambda stream: render_collectives(document, stream), args.output)
    return 0
