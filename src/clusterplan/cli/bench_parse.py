"""``clusterplan bench parse FILE``: an nccl-tests log as clusterplan.bench/1 JSON."""

from __future__ import annotations

import argparse

from clusterplan.bench.documents import log_document
from clusterplan.cli.exits import Exit
from clusterplan.cli.inputs import read_log
from clusterplan.cli.output import emit, write_json


def add_parser(group) -> None:
    parser = group.add_parser("parse", help="turn an nccl-tests log into clusterplan.bench/1 JSON",
                              description="Read the text output of any nccl-tests/rccl-tests *_perf binary.")
    parser.add_argument("file", metavar="FILE", help="nccl-tests log")
    parser.add_argument("--op", help="the collective, where the log does not name its binary")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    log = read_log(args.file, args.op)
    emit(lambda stream: write_json(log_document(log, source=args.file), stream), args.output)
    return Exit.OK
