"""``clusterplan compare``: scenarios side by side, with deltas against the first."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clusterplan.cli.output import add_output_options, emit, emit_binary, write_json
from clusterplan.compare import Column, Vary, compare, grid, parse_vary
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.plan.ownership import today
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
                                             "with its delta against the first; unchanged rows are folded. "
                                             "With --vary, one scenario (default: the reference) across the "
                                             "values of a key, one column per value (docs/compare.md).")
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                        help="two or more scenario TOML files (with --vary: one, or none for the reference)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a key in every scenario, every column alike (repeatable)")
    parser.add_argument("--vary", dest="varies", action="append", default=[], metavar="SECTION.KEY=V1,V2",
                        help="one column per value (2 to 16); repeat for a grid of up to 3 keys and 16 columns")
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
    varies = [parse_vary(text) for text in args.varies]
    if varies:
        plans, labels, sources = _varied(args, varies)
        specs = [planned.spec for planned in plans]
    else:
        if len(args.scenarios) < 2:
            raise ConfigError(f"needs two or more scenario files, got {len(args.scenarios)} (one scenario "
                              f"across values: --vary SECTION.KEY=V1,V2)", key="SCENARIO")
        plans = []
        for path in args.scenarios:
            scenario = load_scenario(path, args.overrides)
            with scenario.located():
                plans.append(plan(scenario.spec, today=today()))
        specs = [planned.spec for planned in plans]
        labels = labels_for(args.scenarios, [spec.about.name for spec in specs])
        sources = [scenario_source(path, args.overrides) for path in args.scenarios]   # each as given, with --set
    comparison = compare(labels, [plan_document(planned) for planned in plans])
    document = compare_document(comparison, sources=sources, scenarios=specs, varied=varies)
    if not varies and not any(row["changed"] for row in [*document["headlines"], *document["bom"]]):
        sys.stderr.write("clusterplan: note: the scenarios plan alike; --set changes every one of them "
                         "(one key across values: --vary SECTION.KEY=V1,V2)\n")
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    elif args.format == "xlsx":
        emit_binary(tables_xlsx_bytes(compare_tables(document)), args.output, what="xlsx")
    elif args.format == "html":
        emit(lambda stream: render_compare_html(document, stream), args.output)
    else:
        emit(lambda stream: render_compare(document, stream), args.output)
    return 0


def _varied(args: argparse.Namespace, varies: list[Vary]) -> tuple[list, list[str], list[str]]:
    """The plans of one scenario across the ``--vary`` grid, their labels and their command-line sources.

    Every column's scenario is read before any is planned, so a bad key or value is one line naming the
    ``--vary`` that gave it and nothing is half done; ``--set`` applies to every column, under the varied keys."""
    if len(args.scenarios) > 1:
        raise ConfigError(f"varies one scenario, got {len(args.scenarios)} files (--set changes every file "
                          f"alike; compare files without --vary)", key="--vary")
    path = args.scenarios[0] if args.scenarios else None
    columns = grid(varies)
    set_keys = {override.partition("=")[0].strip() for override in args.overrides}
    for vary in varies:
        if vary.key in set_keys:
            raise ConfigError("is both --set and --vary: give it once", key=vary.key, source=f"--vary {vary.text}")
    scenarios = [_scenario(path, args.overrides, column, varies) for column in columns]
    plans = []
    for column, scenario in zip(columns, scenarios):
        try:
            with scenario.located():
                plans.append(plan(scenario.spec, today=today()))
        except InfeasiblePlan as error:
            raise InfeasiblePlan(f"{column.label}: {error.reason}") from None
        except ConfigError as error:
            raise _named_by_vary(error, column, varies) from None
    sources = [scenario_source(path, [*args.overrides, *column.overrides]) for column in columns]
    return plans, [column.label for column in columns], sources


def _scenario(path: str | None, overrides: list[str], column: Column, varies: list[Vary]):
    try:
        return load_scenario(path, [*overrides, *column.overrides])
    except ConfigError as error:
        raise _named_by_vary(error, column, varies) from None


def _named_by_vary(error: ConfigError, column: Column, varies: list[Vary]) -> ConfigError:
    """An error about a varied key names the ``--vary`` that set it (not the ``--set`` it became)."""
    for vary, override in zip(varies, column.overrides):
        if error.source == f"--set {override}":
            return ConfigError(error.message, key=error.key, source=f"--vary {vary.text}")
    return error
