"""``clusterplan report``: the whole plan as one self-contained HTML file (docs/report.md)."""

from __future__ import annotations

import argparse

from clusterplan.cli.inputs import read_acceptance, read_measured
from clusterplan.cli.output import (add_output_options, add_sampling_options, add_scenario_options, emit, progress,
                                    write_json)
from clusterplan.plan.ownership import today
from clusterplan.plan.report import report
from clusterplan.report.accept import accept_part
from clusterplan.report.documents import report_document, scenario_source, scenario_title
from clusterplan.report.html import SECTIONS, render_report
from clusterplan.spec import load_scenario


def add_parser(commands) -> None:
    parser = commands.add_parser("report", help="self-contained HTML report with charts",
                                 description="Summary, BoM, opex, owning vs renting, power, fabric, checks, "
                                             "collectives, training (with a [workload]) and sensitivity in one "
                                             "offline HTML file.")
    add_scenario_options(parser)
    parser.add_argument("--measured", metavar="FILE",
                        help="nccl-tests log or clusterplan.bench/1 JSON to draw beside the predicted busbw, or a "
                             "clusterplan.accept/1 document (clusterplan accept --json) to include as a section")
    add_sampling_options(parser)
    add_output_options(parser, ("html", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.overrides)
    acceptance = read_acceptance(args.measured) if args.measured else None
    measured = read_measured(args.measured) if args.measured and acceptance is None else None
    with scenario.located(), progress(args, "Monte Carlo", total=args.samples) as shown:
        result = report(scenario.spec, samples=args.samples, seed=args.seed, offer=args.offer, measured=measured,
                        today=today(),
                        progress=shown.advance)
    title = scenario_title(result.plan.spec.about.name, args.scenario, args.overrides)
    document = report_document(result, title=title, source=scenario_source(args.scenario, args.overrides))
    sections = SECTIONS
    if acceptance is not None:
        document["acceptance"] = acceptance
        sections = (*SECTIONS, lambda doc: accept_part(doc["acceptance"], "/acceptance"))
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        emit(lambda stream: render_report(document, stream, sections), args.output)
    return 0
