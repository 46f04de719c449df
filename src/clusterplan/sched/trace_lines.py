"""What the trace readers share: bad-line bookkeeping, names as dense ids, and times.

A malformed line is an error naming the file and line (exit 2); with
``skip_bad`` it is skipped and counted in ``Trace.num_bad_lines``.
"""

from __future__ import annotations

from datetime import datetime, timezone

from clusterplan.errors import ConfigError

SKIP_HINT = "(--skip-bad skips bad lines)"


class BadLine(ValueError):
    """One line is malformed (the reader turns it into a ConfigError with the line number)."""


LARGEST = 2**53   # past it an integer id or count is no longer exact in a float, and int64 casts can wrap


def number(text: str) -> float:
    """A trace field as a number: finite and below 2**53 in size, else ``BadLine`` (nan, inf, 1e30 GPUs)."""
    try:
        value = float(text)
    except ValueError:
        raise BadLine("is not a number") from None
    if not abs(value) < LARGEST:   # also false for nan
        raise BadLine("is not a finite number below 2**53")
    return value


class Lines:
    """Collects bad lines: the first raises unless ``skip_bad``; then they are counted."""

    def __init__(self, name: str, skip_bad: bool):
        self.name, self.skip_bad, self.bad = name, skip_bad, 0

    def reject(self, line: int | None, reason: str) -> None:
        if not self.skip_bad:
            raise ConfigError(f"{reason} {SKIP_HINT}", source=self.name, line=line)
        self.bad += 1


class Names:
    """Strings -> dense ints in order of first appearance (users, partitions, QOS)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text in ("", "-1"):
            return -1
        return self.ids.setdefault(text, len(self.ids))

    def names(self) -> tuple[str, ...]:
        return tuple(self.ids)


def timestamp(text: str) -> float | None:
    """Seconds from a number or an ISO date ('2020-04-01 00:00:05', '2024-03-01T12:00:00'); None if empty."""
    text = text.strip()
    if text in ("", "None", "Unknown", "nan", "NaN", "NULL"):
        return None
    try:
        return number(text)
    except BadLine as error:
        if str(error) != "is not a number":   # a number, but inf, nan or past 2**53
            raise BadLine(f"not a finite time: {text!r}") from None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadLine(f"not a time: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def shifted(submit: list[float], *others: list[float]) -> list[list[float]]:
    """Times relative to the first submission (a trace's epoch does not matter)."""
    origin = min(submit, default=0.0)
    return [[t - origin for t in column] for column in (submit, *others)]
