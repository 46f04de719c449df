"""Before and after: a validation script's signed residuals saved once (``--write-baseline``, before a model
change) and printed beside the current ones, per source and per regime (n, median, MAPE, max |error|).

The baseline file holds one line per point in the order the script yields them (its label and size or run name
check that the same point is compared); a point with no baseline line prints as new. Each point is yielded
with its kind, once: ``SOURCE`` (grouped by the source or run it comes from) or ``REGIME`` (grouped by its
regime; the same measurement again), and each kind prints as its own table.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent / "data" / "baselines"
SOURCE, REGIME = "source", "regime"


def write(name: str, points: list[tuple[str, str, str, float]], model: str) -> Path:
    """Save (group, point key, signed error) of every (kind, group, key, error) point as the baseline ``name``;
    ``model`` says which."""
    HERE.mkdir(parents=True, exist_ok=True)
    path = HERE / f"{name}.csv"
    with open(path, "w", newline="") as out:
        out.write(f"# signed errors (predicted / measured - 1) of the model at {model}\n")
        writer = csv.writer(out)
        writer.writerow(("group", "point", "error"))
        for _, group, key, error in points:
            writer.writerow((group, key, f"{error:.6f}"))
    return path


def read(name: str) -> dict[tuple[str, str], float]:
    """(group, point key) -> the baseline's signed error; empty where no baseline was saved."""
    path = HERE / f"{name}.csv"
    if not path.is_file():
        return {}
    lines = (line for line in open(path) if not line.startswith("#"))
    return {(row["group"], row["point"]): float(row["error"]) for row in csv.DictReader(lines)}


def header(name: str) -> str:
    """The model the baseline ``name`` was saved from (its first line), or '' where there is none."""
    path = HERE / f"{name}.csv"
    return open(path).readline().strip("# \n") if path.is_file() else ""


def _cells(errors: list[float]) -> str:
    if not errors:
        return f"{'-':>5} {'-':>8} {'-':>7} {'-':>8}"
    absolute = [abs(e) for e in errors]
    return f"{len(errors):5d} {statistics.median(errors):+8.1%} {statistics.mean(absolute):7.1%} {max(absolute):8.1%}"


def print_change(titles: dict[str, str], points: list[tuple[str, str, str, float]],
                 before: dict[tuple[str, str], float], widths: dict[str, int] | None = None) -> None:
    """One table per kind of point (``titles``: kind -> title), in the order of ``titles``."""
    for kind, title in titles.items():
        rows = [(group, key, error) for point_kind, group, key, error in points if point_kind == kind]
        _print_table(title, rows, before, (widths or {}).get(kind, 58))


def _print_table(title: str, points: list[tuple[str, str, float]], before: dict[tuple[str, str], float],
                 width: int) -> None:
    """Per group: n, median signed error, MAPE (mean |error|) and max |error| before (the baseline) and after."""
    after_by: dict[str, list[float]] = {}
    before_by: dict[str, list[float]] = {}
    for group, key, error in points:
        after_by.setdefault(group, []).append(error)
        if (group, key) in before:
            before_by.setdefault(group, []).append(before[(group, key)])
    every_after = [e for values in after_by.values() for e in values]
    every_before = [e for values in before_by.values() for e in values]
    print(title)
    print(f"{'':{width}} {'before: n':>9} {'median':>8} {'MAPE':>7} {'|max|':>8}   "
          f"{'after: n':>8} {'median':>8} {'MAPE':>7} {'|max|':>8}")
    for group in [*after_by, "ALL"]:
        old = every_before if group == "ALL" else before_by.get(group, [])
        new = every_after if group == "ALL" else after_by[group]
        print(f"{group[:width]:{width}} {_cells(old):>35}   {_cells(new)}")
    print()
