"""``clusterplan calibrate RESULTS... -o calibration.toml``: fit the collective model to measurements."""

from __future__ import annotations

import argparse
import json
import sys

from clusterplan.bench.calibrate import calibrate, to_toml
from clusterplan.bench.documents import BENCH_SCHEMA, log_document
from clusterplan.cli.exits import Exit
from clusterplan.cli.inputs import read_log, read_text
from clusterplan.cli.output import emit
from clusterplan.errors import ConfigError
from clusterplan.parsing import parse_json
from clusterplan.plan.accept_calibration import calibration_inputs
from clusterplan.verdicts import ACCEPT_SCHEMA


def add_parser(commands) -> None:
    parser = commands.add_parser("calibrate", help="fit collective latency and bandwidth to measured results",
                                 description="Fit latency and bus bandwidth per collective and group size from "
                                             "clusterplan.bench/1 JSON, clusterplan.accept/1 JSON (which also "
                                             "gives the device rates) or nccl-tests logs.")
    parser.add_argument("results", nargs="+", metavar="RESULTS",
                        help="benchmark or acceptance JSON files, or nccl-tests logs")
    parser.add_argument("--op", help="collective of logs that do not name their binary")
    parser.add_argument("--ranks", type=int, help="ranks of logs that do not list them")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the calibration TOML here (default stdout)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    documents, rates = [], []
    for path in args.results:
        found, found_rates = _documents(path, args.op, args.ranks)
        documents += found
        rates += found_rates
    if not documents:
        raise ConfigError("no collective rows to fit in the results", key="RESULTS")
    calibration = calibrate(documents, rates=rates)
    emit(lambda stream: stream.write(to_toml(calibration)), args.output)
    report = sys.stdout if args.output else sys.stderr
    for fit in calibration.fits:
        regimes = "; ".join(f">= {r.min_size_bytes} B: {r.latency_s * 1e6:.1f} us + {r.busbw_Bps / 1e9:.1f} GB/s"
                            for r in fit.regimes)
        report.write(f"{fit.op} on {fit.num_ranks} ranks, {fit.points} rows: {regimes}; fit error median "
                     f"{fit.median_error:.1%}, max {fit.max_error:.1%}\n")
    return Exit.OK


def _documents(path: str, op: str | None, ranks: int | None) -> tuple[list[dict], list[tuple[str, float]]]:
    """clusterplan.bench/1 documents (and device rates) from a JSON file or an nccl-tests log."""
    text = read_text(path, what="measurements")
    if text.lstrip().startswith("{"):
        try:
            doc = parse_json(text, source=path)
        except json.JSONDecodeError as error:
            raise ConfigError(f"malformed JSON: {error.msg}", source=path, line=error.lineno) from None
        if isinstance(doc, dict) and doc.get("schema") == ACCEPT_SCHEMA:
            return calibration_inputs(doc, source=path)
        if not isinstance(doc, dict) or doc.get("schema") != BENCH_SCHEMA:
            raise ConfigError(f"expected schema {BENCH_SCHEMA} or {ACCEPT_SCHEMA}, got "
                              f"{doc.get('schema') if isinstance(doc, dict) else type(doc).__name__!r}", source=path)
    else:
        doc = log_document(read_log(path, op, text=text), source=path)
    doc["source"] = path
    doc["op"] = doc.get("op") or op
    doc["world_size"] = doc.get("world_size") or ranks
    return [doc], []
