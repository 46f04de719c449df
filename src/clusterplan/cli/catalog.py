"""``clusterplan catalog [ID]``: list entries, or show one with its source."""

from __future__ import annotations

import argparse

from clusterplan.catalog import load_catalog
from clusterplan.cli.output import add_output_options, emit, write_json
from clusterplan.errors import ConfigError
from clusterplan.report.export import catalog_document
from clusterplan.report.terminal import render_catalog
from clusterplan.schema import suggest


def add_parser(commands) -> None:
    parser = commands.add_parser("catalog", help="list catalog entries, or show one with its source",
                                 description="Hardware, prices and cloud offers, each with source and date.")
    parser.add_argument("id", nargs="?", metavar="ID", help="show this entry in full")
    parser.add_argument("--family", help="list one family only (gpus, servers, fabrics, cloud, ...)")
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    if args.id:
        entries = [catalog.find(args.id, key="ID")]
    else:
        families = catalog.families
        if args.family and args.family not in families:
            raise ConfigError(f"unknown family {args.family!r}{suggest(args.family, families)}; the families are "
                              f"{', '.join(sorted(families))}", key="--family")
        entries = [(family, entry) for family, group in families.items()
                   if not args.family or family == args.family for entry in group.values()]
    document = catalog_document(entries)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        emit(lambda stream: render_catalog(document, stream), args.output)
    return 0
