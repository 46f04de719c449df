"""``clusterplan size``: the cheapest and the fastest way to a trained model, own, rent or both (docs/size.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys

from clusterplan.cli.exits import Exit
from clusterplan.cli.output import add_output_options, add_scenario_options, emit, emit_binary, progress, write_json
from clusterplan.errors import ConfigError
from clusterplan.plan.ownership import today
from clusterplan.plan.size import size
from clusterplan.report.size import infeasible_line, render_size, size_document, size_tables
from clusterplan.report.tables import write_csv, write_markdown
from clusterplan.report.xlsx_book import tables_xlsx_bytes
from clusterplan.spec import load_scenario

# [size] key -> the flag that sets it; an error about a key a flag set names the flag.
FLAGS = {"size.model": "--model", "size.tokens": "--tokens", "size.deadline_days": "--deadline",
         "size.deadline_date": "--deadline", "size.budget_usd": "--budget", "size.gpus": "--gpu-types",
         "size.fabrics": "--fabrics", "size.modes": "--modes", "size.start": "--start", "size.max_gpus": "--max-gpus"}
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def add_parser(commands) -> None:
    parser = commands.add_parser("size", help="cheapest and fastest way to a trained model: own, rent or both",
                                 description="Search GPU type x count x fabric x procurement mode for the job; "
                                             "print the frontier of (days to a trained model, cost), the cheapest "
                                             "candidate meeting the deadline and the fastest within the budget "
                                             "(docs/size.md). Exit 3 when nothing meets the deadline.")
    add_scenario_options(parser)
    parser.add_argument("--model", help="model preset (default: [size] model, else [workload] model)")
    parser.add_argument("--tokens", help="training tokens, e.g. 2T (default: [size] tokens, else [workload] tokens)")
    parser.add_argument("--deadline", metavar="DATE|DAYS", help="a date YYYY-MM-DD or days from the start")
    parser.add_argument("--budget", metavar="USD", help="most the job may cost, e.g. 5M or '$5M'")
    parser.add_argument("--gpu-types", dest="gpu_types", metavar="ID,...",
                        help="GPU ids to search, each on its default server in whole NVLink domains (gb200: 72, "
                             "144, ...; default: six 8-GPU parts, docs/size.md)")
    parser.add_argument("--gpus", help=argparse.SUPPRESS)   # a cluster's GPU count elsewhere: named, then refused
    parser.add_argument("--fabrics", metavar="ID,...", help="fabric ids (default: ib-ndr400, ib-ndr200, roce-400g)")
    parser.add_argument("--modes", metavar="MODE,...", help="own, reserved, on-demand, spot, hybrid (default: all)")
    parser.add_argument("--start", metavar="DATE", help="the day the decision is made, YYYY-MM-DD (default: today)")
    parser.add_argument("--max-gpus", dest="max_gpus", type=int, metavar="N",
                        help="the largest GPU count searched (default 16,384)")
    add_output_options(parser, ("table", "json", "csv", "md", "xlsx"))
    parser.set_defaults(run=run)


def _overrides(args: argparse.Namespace) -> list[str]:
    """The flags as ``[size]`` overrides (TOML values)."""
    if args.gpus is not None:   # --gpus is the cluster's GPU count in plan and train; size searches the count
        raise ConfigError("size searches the GPU count itself (the largest: --max-gpus N); the GPU types it "
                          "searches are --gpu-types ID,... (docs/scenario.md, \"--gpus\")", key="--gpus")
    out = []
    for name in ("model", "tokens", "start"):
        if getattr(args, name) is not None:
            out.append(f"size.{name}={json.dumps(getattr(args, name))}")
    for name, key in (("gpu_types", "gpus"), ("fabrics", "fabrics"), ("modes", "modes")):
        if getattr(args, name) is not None:
            out.append(f"size.{key}={json.dumps([item.strip() for item in getattr(args, name).split(',')])}")
    if args.deadline is not None:
        text = args.deadline.strip()
        if DATE.fullmatch(text):
            out.append(f"size.deadline_date={json.dumps(text)}")
        else:
            try:
                days = float(text)
            except ValueError:
                raise ConfigError(f"must be a date YYYY-MM-DD or a number of days, got {text!r}",
                                  key="--deadline") from None
            if not days > 0:
                raise ConfigError(f"must be > 0 days, got {text}", key="--deadline")
            out.append(f"size.deadline_days={days}")
    if args.budget is not None:
        out.append(f"size.budget_usd={json.dumps(args.budget.strip())}")
    if args.max_gpus is not None:
        out.append(f"size.max_gpus={args.max_gpus}")
    return out


def _named_by_flag(error: ConfigError, flags: list[str]) -> ConfigError:
    """An error about a ``[size]`` key a flag set names the flag."""
    key = re.sub(r"\[\d+\]$", "", error.key)
    set_by_flag = any(override.startswith(f"{key}=") for override in flags)
    return ConfigError(error.message, key=FLAGS[key]) if key in FLAGS and set_by_flag else error


def run(args: argparse.Namespace) -> int:
    flags = _overrides(args)
    try:
        scenario = load_scenario(args.scenario, [*args.overrides, *flags])
        with scenario.located(), progress(args, "size") as shown:
            result = size(scenario.spec, today=today(), progress=shown.update)
    except ConfigError as error:
        raise _named_by_flag(error, flags) from None
    document = size_document(result)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    elif args.format == "csv":
        emit(lambda stream: write_csv(size_tables(document), stream), args.output)
    elif args.format == "md":
        emit(lambda stream: write_markdown(size_tables(document), stream, heading="clusterplan size"), args.output)
    elif args.format == "xlsx":
        emit_binary(tables_xlsx_bytes(size_tables(document)), args.output, what="xlsx")
    else:
        emit(lambda stream: render_size(document, stream), args.output)
    if document["question"]["deadline"] and document["cheapest"] is None:
        sys.stderr.write(f"clusterplan: {infeasible_line(document)}\n")
        return Exit.INFEASIBLE
    return Exit.OK
