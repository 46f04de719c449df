"""Read the text output of nccl-tests and rccl-tests ``*_perf`` binaries.

``parse_nccl_tests(text)`` turns a log (a bare table, a whole job log with
NCCL INFO lines, or output tagged by mpirun/srun/kubectl) into a frozen
``NcclTestsLog``: the collective, the ranks, the footer's average bus bandwidth,
the versions printed and one ``Row`` per message size with its out-of-place and
in-place ``Placement``. The table itself, its layouts and rows, is read by
``bench.nccltests_table``; this module strips the launchers' line prefixes and
reads what the log says about the run. See docs/nccltests.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from clusterplan.bench.nccltests_table import Row, read_rows
from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class NcclTestsLog:
    """What one nccl-tests run printed."""

    op: str | None                 # canonical collective: "all_reduce", "alltoall", ...
    rows: tuple[Row, ...]
    num_ranks: int | None
    avg_busbw_GBps: float | None   # the "# Avg bus bandwidth" footer
    version: str | None            # nccl-tests / rccl-tests version, else the NCCL library's
    nccl_version: str | None = None  # the NCCL (or RCCL) library version alone
    truncated_line: int | None = None  # the last row, cut short by the end of the log and left out

    @property
    def num_truncated_rows(self) -> int:
        return 0 if self.truncated_line is None else 1

    def notes(self, source: str) -> list[str]:
        """What a reader of the log should be told (the row left out)."""
        if self.truncated_line is None:
            return []
        return [f"{source}:{self.truncated_line}: the log ends inside this row (1 truncated row left out; "
                f"{len(self.rows)} rows read)"]


_OPS = ("all_reduce|all_gather|reduce_scatter|alltoallv|alltoall|broadcast|reduce"
        "|sendrecv|hypercube|gather|scatter")

_PREFIX = re.compile(r"""
    \[\d+,\d+\]<std(?:out|err)>:                  # mpirun --tag-output
  | \[pod/[^\]]*\]                                # kubectl logs --prefix
  | \[?\d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?:?
  | \[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?:?(?=\s)   # time of day
  | \[\d+\]                                       # mpiexec -prepend-rank
  | \d+:(?=\s)                                    # srun --label
  | [A-Za-z][\w.-]*:(?=\s)                        # pdsh host and similar tags
""", re.VERBOSE)
_STARTING = re.compile(r"Collective test starting:\s*(\S+)")
_BINARY = re.compile(rf"\b({_OPS})_perf\w*")
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\b")
_NRANKS = re.compile(r"\bn[Rr]anks\s*[=:]?\s*(\d+)\b")
_TESTS_VERSION = re.compile(r"\b(?:nccl-tests version|rccl-tests:?\s+Version)\s+(\S+)")
_LIBRARY_VERSION = re.compile(r"\b[NR]CCL version\s*:?\s*(\d[\w.+-]*)")
_AVG_BUSBW = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)")


def parse_nccl_tests(text: str, *, source: str = "<log>", op: str | None = None) -> NcclTestsLog:
    """Read the text output of an nccl-tests / rccl-tests ``*_perf`` binary.

    ``op`` names the collective when the log does not (the binary's name in the
    header or on the command line wins). Raises ``ConfigError`` with ``source``
    and the 1-based ``line`` for a log without result rows or with a row that
    cannot be read.
    """
    raw = _lines(text)
    lines = [_strip_prefix(line) for line in raw]
    table = read_rows(lines, source)
    tests_version = _first(_TESTS_VERSION, raw)
    library_version = _first(_LIBRARY_VERSION, raw)
    return NcclTestsLog(
        op=_detect_op(raw, source) or (_canonical_op(op) if op else None),
        rows=table.rows,
        truncated_line=table.truncated_line,
        num_ranks=_num_ranks(lines),
        avg_busbw_GBps=_avg_busbw(raw, source),
        version=tests_version or library_version,
        nccl_version=library_version,
    )


# --- lines and prefixes ----------------------------------------------------------------

def _lines(text: str) -> list[str]:
    """Lines as an editor numbers them; of a line redrawn with carriage returns, the last drawing."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines]


def _strip_prefix(line: str) -> str:
    """``line`` without leading launcher tags and timestamps ("[1,0]<stdout>:", "0: ", ...)."""
    rest = line
    while (match := _PREFIX.match(stripped := rest.lstrip())):
        rest = stripped[match.end():]
    return rest


# --- what the log says about the run -----------------------------------------------------

def _canonical_op(name: str) -> str:
    """"./build/all_reduce_perf_mpi" -> "all_reduce"."""
    return name.rsplit("/", 1)[-1].split("_perf")[0]


def _detect_op(raw: list[str], source: str) -> str | None:
    started: dict[str, int] = {}
    for number, line in enumerate(raw, start=1):
        if (match := _STARTING.search(line)):
            started.setdefault(_canonical_op(match.group(1)), number)
            if len(started) > 1:
                first, second = started.items()
                raise ConfigError(f"the log holds more than one test ({first[0]} at line {first[1]}, "
                                  f"{second[0]} at line {second[1]}); split it", source=source,
                                  line=number)
    if started:
        return next(iter(started))
    return next((m.group(1) for line in raw if (m := _BINARY.search(line))), None)


def _num_ranks(lines: list[str]) -> int | None:
    """Highest "#  Rank N" + 1 (robust to elided lists), else the largest "nranks" hint."""
    ranks = [int(m.group(1)) for line in lines if (m := _RANK.match(line.strip()))]
    if ranks:
        return max(ranks) + 1
    hints = [int(m.group(1)) for line in lines for m in _NRANKS.finditer(line)]
    return max(hints) if hints else None


def _avg_busbw(raw: list[str], source: str) -> float | None:
    value = None
    for number, line in enumerate(raw, start=1):
        if (match := _AVG_BUSBW.search(line)):
            try:
                value = float(match.group(1))
            except ValueError:
                raise ConfigError(f"average bus bandwidth {match.group(1)!r} is not a number",
                                  source=source, line=number) from None
            if not math.isfinite(value):
                raise ConfigError(f"average bus bandwidth {match.group(1)!r} is not a finite number",
                                  source=source, line=number)
    return value


def _first(pattern: re.Pattern[str], raw: list[str]) -> str | None:
    return next((m.group(1) for line in raw if (m := pattern.search(line))), None)
