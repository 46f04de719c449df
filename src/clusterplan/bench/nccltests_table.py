"""The results table of an nccl-tests / rccl-tests log: its column layout and its rows (docs/nccltests.md).

The column layout comes from the table header (``#  size  count  type  redop
root  time  algbw  busbw  #wrong ...``), so older layouts (no ``root`` or no
``redop`` column, ``error`` instead of ``#wrong``), per-iteration columns and
the timestamp column are read by name. A table pasted without its header is
read by its number of columns. Rows wrapped onto several lines are joined.
Anything that looks like a result row but cannot be read is a ``ConfigError``
naming the line, except a row the log ends inside (a job killed while it
printed): that one is left out and counted, and the caller reports it. Times are converted from the printed microseconds to
seconds; bandwidths stay in GB/s (1e9 B/s) as nccl-tests prints them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

US_PER_S = 1e6  # the table prints times in microseconds


@dataclass(**FROZEN)
class Placement:
    """One timing of one size: out-of-place or in-place."""

    time_s: float
    algbw_GBps: float
    busbw_GBps: float
    wrong: int | None = None    # "#wrong" column; None when printed N/A or absent
    error: float | None = None  # older "error" column (max deviation); None when N/A

    def __post_init__(self) -> None:
        for name in ("time_s", "algbw_GBps", "busbw_GBps"):
            if getattr(self, name) < 0:
                raise ConfigError(f"must not be negative, got {getattr(self, name)}", key=name)
        if self.wrong is not None and self.wrong < 0:
            raise ConfigError(f"must not be negative, got {self.wrong}", key="wrong")


@dataclass(**FROZEN)
class Row:
    """One line of the results table."""

    size_bytes: int
    count: int
    dtype: str
    redop: str | None  # None where the op has none ("none") or the layout has no column
    root: int | None   # None where the op has none (-1) or the layout has no column
    out_of_place: Placement
    in_place: Placement | None

    def __post_init__(self) -> None:
        for name in ("size_bytes", "count"):
            if getattr(self, name) < 0:
                raise ConfigError(f"must not be negative, got {getattr(self, name)}", key=name)


@dataclass(**FROZEN)
class _Layout:
    names: tuple[str, ...]               # column names as the header prints them
    prefix: tuple[str, ...]              # size, count, type[, redop][, root]
    groups: tuple[tuple[str, ...], ...]  # per placement: time algbw busbw [wrong|error|check] [skip...]
    trailer: int = 0                     # tokens after the last placement (a timestamp: 2)

    @property
    def full(self) -> int:
        return len(self.prefix) + sum(map(len, self.groups)) + self.trailer

    @property
    def counts(self) -> frozenset[int]:
        """Token counts a row may have: complete, or out-of-place only."""
        return frozenset({self.full, len(self.prefix) + len(self.groups[0])})

    def describe(self) -> str:
        return " ".join(self.names[:9]) + (" ..." if len(self.names) > 9 else "")


_STANDARD = "size count type redop root time algbw busbw #wrong ..."
_GUESS_COUNTS = frozenset({13, 12, 9, 8})
_COLUMN_ROLES = {"time": "time", "cputime": "time", "algbw": "algbw", "busbw": "busbw",
                 "#wrong": "wrong", "error": "error",
                 "i_min": "skip", "i_max": "skip", "i_p99": "skip", "i_cv%": "skip"}
_DTYPES = frozenset({"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float",
                     "double", "bfloat16", "float16", "float32", "float64", "fp8_e4m3",
                     "fp8_e5m2", "f8e4m3", "f8e5m2", "char", "int", "uint"})
_LOG_LINE = re.compile(r"\b[NR]CCL (?:INFO|WARN|ERROR|TRACE|ABORT)\b")
_TABLE_END = re.compile(r"Out of bounds values|Avg bus bandwidth|Collective test concluded")
_FAILURE = re.compile(r"NCCL WARN|Test (?:NCCL|CUDA|HIP) failure|# error:")


def _is_header(tokens: list[str]) -> bool:
    return "algbw" in tokens and "busbw" in tokens


def _looks_like_row(tokens: list[str], *, in_table: bool) -> bool:
    """Inside a table, two of: a numeric size, a numeric count, a known data type third.

    Outside one (before the first header, after a footer) all three, so that
    stray numbers in a job log are not taken for rows, but rows are not lost.
    """
    if len(tokens) < 3:
        return False
    signs = (tokens[0][0].isdigit()) + (tokens[1][0].isdigit()) + (tokens[2] in _DTYPES)
    return signs >= (2 if in_table else 3)


@dataclass(**FROZEN)
class Table:
    """The rows read, and the row the log ends inside (left out), if any."""

    rows: tuple[Row, ...]
    truncated_line: int | None = None   # 1-based line of the last row, cut short by the end of the log

    @property
    def num_truncated_rows(self) -> int:
        return 0 if self.truncated_line is None else 1


def read_rows(lines: list[str], source: str) -> Table:
    """Every result row of ``lines`` (launcher prefixes already stripped); line numbers count from 1."""
    last = _last_line(lines)
    headed = any(line.lstrip().startswith("#") and _is_header(line.split()) for line in lines)
    layout, in_table, header_line = None, not headed, None
    rows: list[Row] = []
    truncated, row_layout = None, None   # the layout of the last row read: a cut-short row is judged by it
    index = 0
    while index < len(lines):
        number, body = index + 1, lines[index].strip()
        index += 1
        if not body or _LOG_LINE.search(body):
            continue
        if body.startswith("#"):
            tokens = body[1:].split()
            if _is_header(tokens):
                layout, in_table, header_line = _header_layout(tokens, number, source), True, number
            elif _TABLE_END.search(body):
                in_table = False
            continue
        if number == last and row_layout and _cut_short(body.split(), row_layout):
            truncated = number
            break
        if not _looks_like_row(body.split(), in_table=in_table):
            continue
        tokens, index = _gather(lines, index - 1, layout, source)
        row_layout = layout or _guess_layout(tokens)
        try:
            rows.append(_row(tokens, row_layout))
        except ConfigError as error:
            raise ConfigError(error.message, key=error.key, source=source, line=number) from None
    if not rows:
        raise _no_rows(lines, header_line, source)
    return Table(rows=tuple(rows), truncated_line=truncated)


def _last_line(lines: list[str]) -> int:
    """The 1-based number of the last line that holds anything (0 for none)."""
    return next((n for n in range(len(lines), 0, -1) if lines[n - 1].strip()), 0)


def _cut_short(tokens: list[str], layout: _Layout) -> bool:
    """A row begun but not finished: a whole number first, fewer tokens than a full row and not an
    out-of-place-only row (a log that ends inside a row, as when the job was killed while printing)."""
    return bool(tokens) and tokens[0].isdigit() and len(tokens) < layout.full and len(tokens) not in layout.counts


def _no_rows(lines: list[str], header_line: int | None, source: str) -> ConfigError:
    failure = next((f" (line {n}: {line.strip()[:120]})" for n, line in enumerate(lines, 1)
                    if _FAILURE.search(line)), "")
    if header_line is not None:
        return ConfigError(f"the nccl-tests table header has no result rows under it{failure}",
                           source=source, line=header_line)
    return ConfigError("no nccl-tests result table found (no '#  size  count  type ...' header "
                       f"and no result rows){failure}", source=source, line=max(len(lines), 1))


def _gather(lines: list[str], start: int, layout: _Layout | None,
            source: str) -> tuple[list[str], int]:
    """The tokens of the row at ``start``, joined with the next lines if it was wrapped."""
    tokens = lines[start].split()
    counts = layout.counts if layout else _GUESS_COUNTS
    if len(tokens) < max(counts):
        rest = []
        for line in lines[start + 1:start + 4]:
            if not line.strip() or line.lstrip().startswith("#") or _LOG_LINE.search(line):
                break
            rest.append(line)
        for target in sorted((c for c in counts if c > len(tokens)), reverse=True):
            if (joined := _join(lines[start], rest, target)) is not None:
                return joined[0], start + 1 + joined[1]
    if len(tokens) not in counts:
        what = layout.describe() if layout else _STANDARD
        raise ConfigError(f"expected {max(counts)} columns of an nccl-tests row ({what}), "
                          f"got {len(tokens)}", source=source, line=start + 1)
    return tokens, start + 1


def _join(head: str, rest: list[str], target: int) -> tuple[list[str], int] | None:
    """``head`` joined with the first lines of ``rest`` into exactly ``target`` tokens.

    Each break is tried at a column boundary first, then inside a number (a
    terminal wraps at a fixed width). Returns the tokens and the lines used.
    """
    if not rest:
        return None
    for glue in (" ", ""):
        joined = head + glue + rest[0]
        count = len(joined.split())
        if count == target:
            return joined.split(), 1
        if count < target and (deeper := _join(joined, rest[1:], target)) is not None:
            return deeper[0], deeper[1] + 1
    return None


# --- layouts and rows --------------------------------------------------------------------

def _header_layout(tokens: list[str], number: int, source: str) -> _Layout:
    """The layout a ``# size count type ...`` header line declares."""
    def fail(message: str) -> ConfigError:
        return ConfigError(f"{message} in the nccl-tests table header", source=source, line=number)

    if tokens[:1] == ["bytes"]:
        raise fail("columns 'bytes N type op ... res' (NCCL 1.x tests, time in ms) are not supported")
    if tokens[:3] != ["size", "count", "type"]:
        raise fail(f"expected the columns to start with 'size count type', got {' '.join(tokens[:3])!r}")
    position, prefix = 3, ["size", "count", "type"]
    for optional in ("redop", "root"):
        if position < len(tokens) and tokens[position] == optional:
            prefix.append(optional)
            position += 1
    groups: list[list[str]] = []
    trailer = 0
    for name in tokens[position:]:
        role = _COLUMN_ROLES.get(name)
        if trailer:
            raise fail(f"column {name!r} after the timestamp column")
        if name == "timestamp":
            trailer = 2  # printed as "YYYY-MM-DD HH:MM:SS"
        elif role is None:
            raise fail(f"unrecognised column {name!r}")
        elif role == "time":
            groups.append([role])
        elif not groups:
            raise fail(f"column {name!r} before any time column")
        else:
            groups[-1].append(role)
    if not 1 <= len(groups) <= 2 or any(g[:3] != ["time", "algbw", "busbw"] for g in groups):
        raise fail("expected one or two 'time algbw busbw' column groups (out-of-place, in-place)")
    return _Layout(names=tuple(tokens), prefix=tuple(prefix),
                   groups=tuple(tuple(g) for g in groups), trailer=trailer)


def _guess_layout(tokens: list[str]) -> _Layout:
    """The layout of a row read without a header, from its number of columns."""
    group = ("time", "algbw", "busbw", "check")
    if len(tokens) in (13, 9):
        prefix = ("size", "count", "type", "redop", "root")
    else:  # 12 or 8: older layouts with either a redop or a root column
        prefix = ("size", "count", "type", "root" if _is_int(tokens[3]) else "redop")
    groups = (group, group) if len(tokens) in (13, 12) else (group,)
    names = prefix + ("time", "algbw", "busbw", "#wrong") * len(groups)
    return _Layout(names=names, prefix=prefix, groups=groups)


def _row(tokens: list[str], layout: _Layout) -> Row:
    fields = dict(zip(layout.prefix, tokens))
    position = len(layout.prefix)
    placements = []
    for group in layout.groups:
        if position + len(group) > len(tokens):
            break  # out-of-place only
        placements.append(_placement(dict(zip(group, tokens[position:position + len(group)]))))
        position += len(group)
    if not re.fullmatch(r"[A-Za-z][\w]*", fields["type"]):
        raise ConfigError(f"type {fields['type']!r} is not a data type name")
    redop = fields.get("redop")
    root = _int(fields["root"], "root") if "root" in fields else None
    return Row(size_bytes=_int(fields["size"], "size"), count=_int(fields["count"], "count"),
               dtype=fields["type"], redop=None if redop in (None, "none") else redop,
               root=None if root == -1 else root, out_of_place=placements[0],
               in_place=placements[1] if len(placements) > 1 else None)


def _placement(values: dict[str, str]) -> Placement:
    wrong = error = None
    if "wrong" in values:
        wrong = _count_or_na(values["wrong"], "#wrong")
    elif "error" in values:
        error = _float_or_na(values["error"], "error")
    elif "check" in values:  # no header: a whole number is a #wrong count, else a max error
        token = values["check"]
        if _is_int(token):
            wrong = int(token)
        else:
            error = _float_or_na(token, "#wrong/error")
    return Placement(time_s=_float(values["time"], "time") / US_PER_S,
                     algbw_GBps=_float(values["algbw"], "algbw"),
                     busbw_GBps=_float(values["busbw"], "busbw"), wrong=wrong, error=error)


def _is_int(token: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", token) is not None


def _int(token: str, name: str) -> int:
    if not _is_int(token):
        raise ConfigError(f"{name} {token!r} is not a whole number")
    return int(token)


def _float(token: str, name: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise ConfigError(f"{name} {token!r} is not a number") from None
    if not math.isfinite(value):   # nan, inf, 1e400: no timing or bandwidth is one
        raise ConfigError(f"{name} {token!r} is not a finite number")
    return value


def _float_or_na(token: str, name: str) -> float | None:
    return None if token == "N/A" else _float(token, name)


def _count_or_na(token: str, name: str) -> int | None:
    value = _float_or_na(token, name)  # %g prints large counts as 1.23457e+06
    if value is not None and not value.is_integer():
        raise ConfigError(f"{name} {token!r} is not a whole number")
    return None if value is None else int(value)
