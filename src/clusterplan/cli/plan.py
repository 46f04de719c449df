"""``clusterplan plan``: price a cluster end to end."""

from __future__ import annotations

import argparse

from clusterplan.cli.output import add_output_options, add_scenario_options, emit, write_json


def add_parser(commands) -> None:
    parser = commands.add_parser("plan", help="bill of materials, TCO, cloud comparison and design checks",
                                 description="Design and price the cluster a scenario describes.")
    add_scenario_options(parser)
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from clusterplan.plan import plan
    from clusterplan.report.export import plan_document
    from clusterplan.spec import load_scenario

    scenario = load_scenario(args.scenario, args.overrides)
    spec = scenario.spec
    with scenario.located():
        if spec.finance.utilization_from_trace:
            from clusterplan.plan import with_trace_utilization
            from clusterplan.sched.traces import read_trace

            spec = with_trace_utilization(spec, read_trace(spec.finance.utilization_from_trace))
        document = plan_document(plan(spec))
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        from clusterplan.report.terminal import render_plan

        emit(lambda stream: render_plan(document, stream), args.output)
    return 0
