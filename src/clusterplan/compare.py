"""Scenarios side by side: headline figures and BoM lines, each with its deltas against the first.

Works on plan documents (``clusterplan.plan/1``), the result every renderer
draws. The headline figures are those of the one figures table that compare
shows (``report.figures.HEADLINES``, view ``compare``), so a figure added to the
document is one more entry there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterplan.report.figures import COMPARE, shown
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class Figure:
    """One figure across the scenarios; ``None`` where a scenario has none (or never breaks even)."""

    key: str
    name: str
    unit: str
    values: tuple[float | None, ...]
    notes: tuple[str | None, ...] = ()   # where each value came from, where the figure says (figures.Headline.note)

    @property
    def deltas(self) -> tuple[float | None, ...]:
        """Each value minus the first scenario's (None where either is None)."""
        base = self.values[0]
        return tuple(None if base is None or v is None else v - base for v in self.values)

    @property
    def changed(self) -> bool:
        return any(v != self.values[0] for v in self.values[1:]) or any(n != self.notes[0] for n in self.notes[1:])


@dataclass(**FROZEN)
class Line:
    """One BoM line (category, catalog id, item) across the scenarios; absent = quantity 0."""

    category: str
    catalog_id: str
    item: str
    per: str
    quantities: tuple[float, ...]
    unit_prices_usd: tuple[float | None, ...]
    totals_usd: tuple[float, ...]

    @property
    def deltas_usd(self) -> tuple[float, ...]:
        return tuple(total - self.totals_usd[0] for total in self.totals_usd)

    @property
    def changed(self) -> bool:
        first = (self.quantities[0], self.unit_prices_usd[0], self.totals_usd[0])
        return any((q, p, t) != first for q, p, t in zip(self.quantities, self.unit_prices_usd, self.totals_usd))


@dataclass(**FROZEN)
class Comparison:
    labels: tuple[str, ...]
    headlines: tuple[Figure, ...]
    bom: tuple[Line, ...]


def compare(labels: Sequence[str], documents: Sequence[Mapping[str, Any]]) -> Comparison:
    """Every headline, break-even and BoM line of ``documents`` (plan documents), the first the baseline.

    A headline that no document has (every value None) is left out.
    """
    if len(documents) < 2 or len(labels) != len(documents):
        raise ValueError("compare needs two or more documents, one label each")
    figures = [Figure(key=headline.key, name=headline.title(COMPARE), unit=headline.unit,
                      values=tuple(headline.value(doc) for doc in documents),
                      notes=tuple(headline.note_of(doc) for doc in documents) if headline.note else ())
               for headline in shown(COMPARE)]
    figures = [figure for figure in figures if any(v is not None for v in figure.values)]
    for offer in _union(doc["cloud"] for doc in documents):
        by_offer = [{c["offer"]: c for c in doc["cloud"]}.get(offer) for doc in documents]
        figures.append(Figure(key=f"cloud.{offer}.breakeven_months", name=f"Break-even vs {offer}", unit="month",
                              values=tuple(None if c is None else c["breakeven_months"] for c in by_offer)))
    return Comparison(labels=tuple(labels), headlines=tuple(figures), bom=_lines(documents))


def _lines(documents: Sequence[Mapping[str, Any]]) -> tuple[Line, ...]:
    keyed = [{(line["category"], line["id"], line["item"]): line for line in doc["cost"]["bom"]}
             for doc in documents]
    out = []
    for key in _union(list(by_key) for by_key in keyed):
        present = [by_key.get(key) for by_key in keyed]
        first = next(line for line in present if line)
        out.append(Line(category=key[0], catalog_id=key[1], item=key[2], per=first["per"],
                        quantities=tuple(line["quantity"] if line else 0.0 for line in present),
                        unit_prices_usd=tuple(line["unit_price_usd"] if line else None for line in present),
                        totals_usd=tuple(line["total_usd"] if line else 0.0 for line in present)))
    categories = list(dict.fromkeys(line.category for line in out))
    return tuple(sorted(out, key=lambda line: categories.index(line.category)))


def _union(groups) -> list:
    """Items of every group, first appearance first."""
    seen: dict = {}
    for group in groups:
        for item in group:
            seen.setdefault(item["offer"] if isinstance(item, Mapping) else item, None)
    return list(seen)
