"""``clusterplan plan``: price a cluster end to end."""

from __future__ import annotations

import argparse

from clusterplan.cli.output import add_output_options, add_scenario_options, emit, emit_binary, write_json


def add_parser(commands) -> None:
    parser = commands.add_parser("plan", help="bill of materials, TCO, cloud comparison and design checks",
                                 description="Design and price the cluster a scenario describes.")
    add_scenario_options(parser)
    add_output_options(parser, ("table", "json", "csv", "xlsx", "md"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from clusterplan.plan import plan
    from clusterplan.report.export import plan_document
    from clusterplan.spec import load_scenario

    scenario = load_scenario(args.scenario, args.overrides)
    spec = effective_spec(scenario)
    with scenario.located():
        document = plan_document(plan(spec))
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    elif args.format in ("csv", "xlsx", "md"):
        export(document, args.format, args.output)
    else:
        from clusterplan.report.terminal import render_plan

        emit(lambda stream: render_plan(document, stream), args.output)
    return 0


def effective_spec(scenario):
    """The scenario's spec, with ``finance.utilization`` from its trace replay when it names one."""
    spec = scenario.spec
    with scenario.located():
        if spec.finance.utilization_from_trace:
            from clusterplan.plan import with_trace_utilization
            from clusterplan.sched.traces import read_trace

            spec = with_trace_utilization(spec, read_trace(spec.finance.utilization_from_trace))
    return spec


def export(document: dict, fmt: str, output: str | None) -> None:
    """The plan's tables for a spreadsheet or a document (docs/report.md, "Exports")."""
    from clusterplan.report.tables import plan_heading, plan_tables, write_csv, write_markdown

    tables = plan_tables(document)
    heading = plan_heading(document)
    if fmt == "xlsx":
        from clusterplan.report.xlsx import xlsx_bytes

        emit_binary(xlsx_bytes(tables), output, what="xlsx")
    elif fmt == "csv":
        emit(lambda stream: write_csv(tables, stream), output)
    else:
        emit(lambda stream: write_markdown(tables, stream, heading=heading), output)
