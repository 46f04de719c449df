"""``clusterplan compare``: scenarios side by side, with deltas against the first."""

from __future__ import annotations

import argparse
from pathlib import Path

from clusterplan.cli.output import add_output_options, emit, emit_binary, write_json
from clusterplan.compare import compare
from clusterplan.plan.ownership import today
from clusterplan.errors import ConfigError
from clusterplan.plan import plan
from clusterplan.report.analysis_tables import compare_tables
from clusterplan.report.documents import compare_document, scenario_source
from clusterplan.report.export import plan_document
from clusterplan.report.html_analysis import render_compare as render_compare_html
from clusterplan.report.terminal_analysis import render_compare
from clusterplan.report.xlsx_book import tables_xlsx_bytes
from clusterplan.spec import load_scenario


def add_parser(commands) -> None:
    parser = commands.add_parser("compare", help="scenarios side by side: headline figures and BoM deltas",
                                 description="Plan each scenario and show every headline figure and BoM line "
                                             "with its delta against the first; unchanged rows are folded.")
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="two or more scenario TOML files")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a key in every scenario (repeatable)")
    add_output_options(parser, ("table", "json", "html", "xlsx"))
    parser.set_defaults(run=run)


def labels_for(paths: list[str], names: list[str]) -> list[str]:
    """Each scenario's ``about.name``, else its file name (the path where two file names clash)."""
    stems = [Path(path).stem for path in paths]
    out = []
    for path, stem, name in zip(paths, stems, names):
        out.append(name or (stem if stems.count(stem) == 1 else path))
    return [label if out.count(label) == 1 else f"{label} ({i + 1})" for i, label in enumerate(out)]


def run(args: argparse.Namespace) -> int:
    if len(args.scenarios) < 2:
        raise ConfigError(f"needs two or more scenario files, got {len(args.scenarios)}", key="SCENARIO")
    plans = []
    for path in args.scenarios:
        scenario = load_scenario(path, args.overrides)
        with scenario.located():
            plans.append(plan(scenario.spec, today=today()))
    specs = [planned.spec for planned in plans]
    labels = labels_for(args.scenarios, [spec.about.name for spec in specs])
    comparison = compare(labels, [plan_document(planned) for planned in plans])
    sources = [scenario_source(path, args.overrides) for path in args.scenarios]   # each as given, with --set
    document = compare_document(comparison, sources=sources, scenarios=specs)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    elif args.format == "xlsx":
        emit_binary(tables_xlsx_bytes(compare_tables(document)), args.output, what="xlsx")
    elif args.format == "html":
        emit(lambda stream: render_compare_html(document, stream), args.output)
    else:
        emit(lambda stream: render_compare(document, stream), args.output)
    return 0
