"""``clusterplan sensitivity``: tornado and Monte Carlo of TCO, cost per GPU-hour and break-even."""

from __future__ import annotations

import argparse

from clusterplan.cli.output import (add_output_options, add_sampling_options, add_scenario_options, emit, emit_binary,
                                    progress, write_json)
from clusterplan.plan.sensitivity import analysis
from clusterplan.report.analysis_tables import sensitivity_tables
from clusterplan.report.documents import sensitivity_document
from clusterplan.report.terminal_analysis import render_sensitivity
from clusterplan.report.xlsx_book import tables_xlsx_bytes
from clusterplan.spec import load_scenario


def add_parser(commands) -> None:
    parser = commands.add_parser("sensitivity", help="tornado and Monte Carlo of TCO and break-even",
                                 description="How TCO, cost per GPU-hour and break-even move with each "
                                             "uncertain price and rate (docs/sensitivity.md).")
    add_scenario_options(parser)
    add_sampling_options(parser)
    add_output_options(parser, ("table", "json", "xlsx"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.overrides)
    with scenario.located(), progress(args, "Monte Carlo", total=args.samples) as shown:
        result = analysis(scenario.spec, samples=args.samples, seed=args.seed, offer=args.offer,
                          progress=shown.advance)
    document = sensitivity_document(result.sensitivity, spec=result.spec)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    elif args.format == "xlsx":
        emit_binary(tables_xlsx_bytes(sensitivity_tables(document)), args.output, what="xlsx")
    else:
        emit(lambda stream: render_sensitivity(document, stream), args.output)
    return 0
