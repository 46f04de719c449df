"""Files the commands read besides the scenario: measured collective runs and calibrations, parsed once here."""

from __future__ import annotations

import json
import statistics
import sys

from clusterplan.bench.calibrate import Calibration, read_calibration
from clusterplan.bench.gemm import SCHEMA as GEMM_SCHEMA
from clusterplan.bench.nccltests import NcclTestsLog, parse_nccl_tests
from clusterplan.errors import ConfigError
from clusterplan.files import read_input_text
from clusterplan.parsing import parse_json
from clusterplan.plan.collectives import Measured
from clusterplan.verdicts import ACCEPT_SCHEMA


def read_text(path: str, *, what: str) -> str:
    """The text of ``path``; a ``ConfigError`` naming the file when it cannot be read."""
    return read_input_text(path, what=what, errors="replace")


def read_log(path: str, op: str | None = None, *, text: str | None = None) -> NcclTestsLog:
    """An nccl-tests log, read the one way ``bench parse``, ``calibrate`` and ``report --measured`` share:
    decoded alike, one verdict on its rows, and a note on stderr for a last row the log ends inside."""
    text = read_text(path, what="the log") if text is None else text
    log = parse_nccl_tests(text, source=path, op=op)
    for note in log.notes(path):
        sys.stderr.write(f"clusterplan: warning: {note}\n")
    return log


def read_measured(path: str, op: str | None = None) -> Measured:
    """An nccl-tests log or a ``clusterplan.bench/1`` document: its collective, ranks and out-of-place rows."""
    text = read_text(path, what="measurements")
    if text.lstrip().startswith("{"):
        try:
            doc = parse_json(text, source=path)
            rows = {int(r["size_bytes"]): r["out_of_place"] for r in doc["rows"]}
            return Measured(op=doc.get("op"), num_ranks=doc.get("world_size"), rows=rows, source=path)
        except ConfigError:
            raise
        except (ValueError, KeyError, TypeError) as error:
            raise ConfigError(f"not a clusterplan.bench/1 document ({error})", source=path) from None
    log = read_log(path, op, text=text)
    rows = {row.size_bytes: {"time_s": row.out_of_place.time_s, "algbw_GBps": row.out_of_place.algbw_GBps,
                             "busbw_GBps": row.out_of_place.busbw_GBps} for row in log.rows}
    return Measured(op=log.op, num_ranks=log.num_ranks, rows=rows, source=path)


def read_acceptance(path: str) -> dict | None:
    """A ``clusterplan.accept/1`` document (``clusterplan accept --json``), or None when the file is another kind."""
    text = read_text(path, what="measurements")
    if not text.lstrip().startswith("{"):
        return None
    try:
        doc = parse_json(text, source=path)
    except json.JSONDecodeError:
        return None           # read_measured names the problem
    if not isinstance(doc, dict) or doc.get("schema") != ACCEPT_SCHEMA:
        return None
    missing = [key for key in ("verdict", "exit_code", "counts", "expectations", "thresholds", "nodes", "checks")
               if key not in doc]
    if missing:
        raise ConfigError(f"{ACCEPT_SCHEMA} document without {', '.join(missing)}", source=path)
    return doc


def read_calibration_file(path: str) -> Calibration:
    """A calibration TOML written by ``clusterplan calibrate``."""
    return read_calibration(read_text(path, what="the calibration"), source=path)


def measured_gemm_efficiency(path: str) -> float:
    """The median fraction of peak of the BF16 (else FP16) multiplies in a ``clusterplan.gemm/1`` document."""
    try:
        doc = parse_json(read_text(path, what="the calibration"), source=path)
    except json.JSONDecodeError as error:
        raise ConfigError(f"not JSON ({error.msg})", source=path, line=error.lineno) from None
    if not isinstance(doc, dict) or doc.get("schema") != GEMM_SCHEMA:
        raise ConfigError(f"not a {GEMM_SCHEMA} document (clusterplan bench gemm --format json)", source=path)
    for dtype in ("bf16", "fp16"):
        fractions = [row["fraction_of_peak"] for row in doc.get("rows", [])
                     if isinstance(row, dict) and row.get("dtype") == dtype and row.get("fraction_of_peak")]
        if fractions:
            return min(statistics.median(fractions), 1.0)
    raise ConfigError("no bf16 or fp16 multiply with a fraction of peak: run clusterplan bench gemm --gpu ID",
                      source=path)
