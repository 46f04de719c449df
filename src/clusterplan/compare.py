"""Scenarios side by side: headline figures and BoM lines, each with its deltas against the first.

Works on plan documents (``clusterplan.plan/1``), the result every renderer
draws. The headline figures are those of the one figures table that compare
shows (``report.figures.HEADLINES``, view ``compare``), so a figure added to the
document is one more entry there.

A what-if without files is a grid of ``--vary KEY=V1,V2[,...]``: one scenario, one
column per value (per combination of values where several keys vary), each column
the scenario with those keys set (``grid``; docs/compare.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterplan.errors import ConfigError
from clusterplan.report.figures import COMPARE, shown
from clusterplan.schema import FROZEN

MAX_VALUES = 16       # values of one --vary list (the bound)
MAX_KEYS = 3          # keys varied at once: a grid of a few keys stays readable
MAX_COLUMNS = 16      # scenarios a grid may make: 16 plans, and a table a person can still read


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
        figures.append(Figure(key=f"cloud.{offer}.breakeven_months", name=f"Cash break-even vs {offer}", unit="month",
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


@dataclass(**FROZEN)
class Vary:
    """One ``--vary KEY=V1,V2[,...]``: a scenario key and the values (TOML text, as ``--set`` reads them) it takes."""

    key: str
    values: tuple[str, ...]
    text: str           # as given, for error messages


@dataclass(**FROZEN)
class Column:
    """One scenario of a grid: the ``--set`` overrides that make it and its label."""

    label: str
    overrides: tuple[str, ...]


def parse_vary(text: str) -> Vary:
    """``KEY=V1,V2[,...]``: 2 to 16 distinct values, split at commas outside brackets and quotes (a list value
    such as ``size.gpus=["b200"],["h100-sxm"]`` keeps its own commas); errors name the ``--vary`` given."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    where = f"--vary {text}"
    if not sep or "." not in key or not key.split(".")[0] or not raw.strip():
        raise ConfigError("expected section.key=V1,V2[,...]", source=where)
    values = tuple(value.strip() for value in _split(raw))
    if any(not value for value in values):
        raise ConfigError("an empty value in the list", source=where)
    if len(values) < 2:
        raise ConfigError(f"needs two or more values to compare, got one ({values[0]}); for one value use "
                          f"--set {key}={values[0]}", source=where)
    if len(values) > MAX_VALUES:
        raise ConfigError(f"{len(values)} values, at most {MAX_VALUES}", source=where)
    twice = sorted({value for value in values if values.count(value) > 1})
    if twice:
        raise ConfigError(f"{', '.join(twice)} given twice", source=where)
    return Vary(key=key, values=values, text=text)


def grid(varies: Sequence[Vary]) -> tuple[Column, ...]:
    """Every combination of the varied values, the first key slowest, the first combination the baseline."""
    if not varies:
        raise ValueError("grid needs one --vary or more")
    keys = [vary.key for vary in varies]
    for vary in varies:
        if keys.count(vary.key) > 1:
            raise ConfigError("varied twice: give its values in one list", key=vary.key,
                              source=f"--vary {vary.text}")
    if len(varies) > MAX_KEYS:
        raise ConfigError(f"{len(varies)} keys varied, at most {MAX_KEYS}", key="--vary")
    columns = 1
    for vary in varies:
        columns *= len(vary.values)
    if columns > MAX_COLUMNS:
        sizes = " x ".join(str(len(vary.values)) for vary in varies)
        raise ConfigError(f"{sizes} = {columns} scenarios, at most {MAX_COLUMNS}: vary fewer values",
                          key="--vary")
    names = [_short(vary.key, keys) for vary in varies]
    combos: list[tuple[str, ...]] = [()]
    for vary in varies:
        combos = [(*combo, value) for combo in combos for value in vary.values]
    return tuple(Column(label=" ".join(f"{name}={_plain(value)}" for name, value in zip(names, combo)),
                        overrides=tuple(f"{key}={value}" for key, value in zip(keys, combo)))
                 for combo in combos)


def _split(raw: str) -> list[str]:
    """``raw`` split at its top-level commas (not inside [], {} or quotes)."""
    parts, depth, quote, current = [], 0, "", []
    for char in raw:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    return [*parts, "".join(current)]


def _short(key: str, keys: Sequence[str]) -> str:
    """A varied key's label: its last part (``fabric``) unless another varied key ends the same way."""
    name = key.rpartition(".")[2]
    return name if sum(other.rpartition(".")[2] == name for other in keys) == 1 else key


def _plain(value: str) -> str:
    """A TOML string value without its quotes, for a label."""
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value
