"""``clusterplan plan``: price a cluster end to end."""

from __future__ import annotations

import argparse

from clusterplan.cli.output import (add_gpus_option, add_output_options, add_scenario_options, emit, emit_binary,
                                    named_gpus, scenario_overrides, write_json)
from clusterplan.plan.ownership import today
from clusterplan.errors import ConfigError
from clusterplan.plan import plan
from clusterplan.report.export import plan_document
from clusterplan.report.tables import plan_heading, plan_tables, write_csv, write_markdown
from clusterplan.report.terminal import render_plan
from clusterplan.spec import load_scenario


def add_parser(commands) -> None:
    parser = commands.add_parser("plan", help="bill of materials, TCO, cloud comparison and design checks",
                                 description="Design and price the cluster a scenario describes.")
    add_scenario_options(parser)
    add_gpus_option(parser, "cluster size in GPUs: cluster.num_gpus, the nodes derived from gpus_per_node")
    add_output_options(parser, ("table", "json", "csv", "xlsx", "md"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args.scenario, scenario_overrides(args))
    except ConfigError as error:
        raise named_gpus(error, args) from None
    with scenario.located():
        document = plan_document(plan(scenario.spec, today=today()))
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    elif args.format in ("csv", "xlsx", "md"):
        export(document, args.format, args.output)
    else:
        emit(lambda stream: render_plan(document, stream), args.output)
    return 0


def export(document: dict, fmt: str, output: str | None) -> None:
    """The plan's tables for a spreadsheet or a document (docs/report.md, "Exports")."""
    if fmt == "xlsx":
        from clusterplan.report.xlsx import xlsx_bytes   # the workbook's writer, for --format xlsx only

        emit_binary(xlsx_bytes(document), output, what="xlsx")
        return
    tables = plan_tables(document)
    heading = plan_heading(document)
    if fmt == "csv":
        emit(lambda stream: write_csv(tables, stream), output)
    else:
        emit(lambda stream: write_markdown(tables, stream, heading=heading), output)
