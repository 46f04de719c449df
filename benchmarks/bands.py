"""Signed residuals grouped by regime: n, median, max |error| and the band (docs/evidence.md).

A residual is e = predicted / measured - 1 of a time (a training step, a collective): e < 0 means the model
was too fast. A regime's band is the 10th to 90th percentile of its residuals where it has at least
N_MIN of them; with fewer it is widened to cover the regime's own extremes and its parent's band (the
regime one key shorter; for a one-key regime, the 10th-90th percentile of every residual of the kind).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

import numpy as np

N_MIN = 10
SHORTEST = 1        # the coarsest regime kept: the first key (the library looks up two keys or more)


def stats(errors: Sequence[float]) -> dict:
    """n, median, 10th and 90th percentile, min and max of signed residuals, rounded for a stable file."""
    values = np.asarray(errors, dtype=float)
    return {"n": len(values), "median": round(float(np.median(values)), 4),
            "p10": round(float(np.percentile(values, 10)), 4), "p90": round(float(np.percentile(values, 90)), 4),
            "min": round(float(values.min()), 4), "max": round(float(values.max()), 4)}


def regimes(residuals: Iterable[tuple[tuple[str, ...], float]]) -> dict[str, dict]:
    """Every prefix (SHORTEST keys or more) of every residual's regime key -> its stats and band."""
    residuals = list(residuals)
    grouped: dict[tuple[str, ...], list[float]] = {}
    for key, error in residuals:
        for length in range(SHORTEST, len(key) + 1):
            grouped.setdefault(key[:length], []).append(error)
    every = stats([error for _, error in residuals])
    table: dict[tuple[str, ...], dict] = {}
    for key in sorted(grouped, key=len):          # parents before children
        row = stats(grouped[key])
        parent = table.get(key[:-1], {"low": every["p10"], "high": every["p90"]})
        if row["n"] >= N_MIN:
            row["low"], row["high"] = row["p10"], row["p90"]
        else:
            row["low"], row["high"] = min(row["min"], parent["low"]), max(row["max"], parent["high"])
        table[key] = row
    return {" | ".join(key): table[key] for key in sorted(table)}


def widest(errors: Sequence[float]) -> dict:
    """The band of a prediction outside every validated regime: the extremes of every residual of its kind."""
    row = stats(errors)
    return {"n": row["n"], "median": row["median"], "low": row["min"], "high": row["max"]}


def summary_line(label: str, errors: Sequence[float], width: int = 58) -> str:
    """One line: n, median signed error, median and max |error|, the 10th-90th percentile band."""
    row = stats(errors)
    absolute = [abs(e) for e in errors]
    return (f"{label[:width]:{width}} {row['n']:5d} {row['median']:+8.1%} {statistics.median(absolute):8.1%} "
            f"{max(absolute):8.1%}   {row['p10']:+7.1%} to {row['p90']:+7.1%}")


def summary_header(first: str, width: int = 58) -> str:
    return (f"{first:{width}} {'n':>5} {'median':>8} {'|med|':>8} {'|max|':>8}   {'band (p10 to p90)':>19}")


def print_summary(title: str, groups: dict[str, list[float]], width: int = 58) -> None:
    """Per group (a source, a regime): n, median signed error, median and max |error|, band."""
    print(title)
    print(summary_header("", width))
    for label, errors in groups.items():
        print(summary_line(label, errors, width))
    print()


def print_regimes(title: str, residuals: list[tuple[tuple[str, ...], float]], width: int = 58) -> None:
    """Per full regime key: n, median signed error, median and max |error|, and the band the library uses
    (widened where n < N_MIN)."""
    table = regimes(residuals)
    grouped: dict[tuple[str, ...], list[float]] = {}
    for key, error in residuals:
        grouped.setdefault(key, []).append(error)
    print(title)
    print(f"{'':{width}} {'n':>5} {'median':>8} {'|med|':>8} {'|max|':>8}   {'band used':>19}")
    for key in sorted(grouped):
        row, errors = table[" | ".join(key)], grouped[key]
        absolute = [abs(e) for e in errors]
        print(f"{', '.join(key)[:width]:{width}} {row['n']:5d} {row['median']:+8.1%} "
              f"{statistics.median(absolute):8.1%} {max(absolute):8.1%}   {row['low']:+7.1%} to {row['high']:+7.1%}")
    print()
