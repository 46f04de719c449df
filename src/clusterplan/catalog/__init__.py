"""The catalog: hardware, prices and cloud offers, each with source and date.

Entries live in ``data/<family>.toml``, one table per id; ids are unique
across families and are looked up exactly, never by substring.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources

from clusterplan.catalog.entries import (FAMILIES, Cable, CloudOffer, Cooling, Entry, Fabric, FailureRate,
                                         Gpu, LeadTime, Nic, Pdu, Priced, Rack, Server, Service, StorageTier, Switch,
                                         Transceiver)
from clusterplan.errors import CatalogError, ConfigError
from clusterplan.schema import build, locator, suggest

__all__ = ["Catalog", "load_catalog", "parse_family", "Entry", "Priced", "Gpu", "Server", "Nic", "Switch",
           "Transceiver", "Cable", "Fabric", "StorageTier", "Rack", "Pdu", "Cooling", "Service",
           "CloudOffer", "FailureRate", "LeadTime"]


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every entry by family and id; ``get`` looks one up exactly."""

    families: Mapping[str, Mapping[str, Entry]]

    def get(self, family: str, entry_id: str, *, key: str = "") -> Entry:
        """The entry ``entry_id`` of ``family``; a ``CatalogError`` naming ``key`` if absent."""
        entries = self.families[family]
        if entry_id not in entries:
            raise CatalogError(f"unknown {family[:-1] if family.endswith('s') else family} id "
                               f"{entry_id!r}{suggest(entry_id, entries)}", key=key)
        return entries[entry_id]

    def find(self, entry_id: str, *, key: str = "") -> tuple[str, Entry]:
        """(family, entry) for an id of any family."""
        for family, entries in self.families.items():
            if entry_id in entries:
                return family, entries[entry_id]
        raise CatalogError(f"unknown catalog id {entry_id!r}{suggest(entry_id, self.ids())}", key=key)

    def ids(self) -> Iterator[str]:
        for entries in self.families.values():
            yield from entries

    def with_prices(self, prices: Mapping[str, float], *, key: str = "prices") -> "Catalog":
        """A catalog with the given ``price_usd`` overrides (a scenario's ``[prices]``)."""
        if not prices:
            return self
        families = {family: dict(entries) for family, entries in self.families.items()}
        for entry_id, price in prices.items():
            family, entry = self.find(entry_id, key=f"{key}.{entry_id}")
            if not isinstance(entry, Priced):
                raise CatalogError(f"{entry_id!r} has no price to override", key=f"{key}.{entry_id}")
            if price < 0:
                raise CatalogError(f"must be >= 0, got {price}", key=f"{key}.{entry_id}")
            families[family][entry_id] = dataclasses.replace(
                entry, price_usd=price, price_low_usd=None, price_high_usd=None,
                source="scenario [prices] override", date="", assumption=False)
        return Catalog({f: types.MappingProxyType(e) for f, e in families.items()})

    def with_capacity(self, capacity: Mapping[str, int], *, key: str = "cloud.capacity") -> "Catalog":
        """A catalog whose cloud offers supply the given ``max_gpus`` at once (a scenario's quotes)."""
        if not capacity:
            return self
        offers = dict(self.families["cloud"])
        for offer_id, gpus in capacity.items():
            entry = self.get("cloud", offer_id, key=f"{key}.{offer_id}")
            offers[offer_id] = dataclasses.replace(entry, max_gpus=gpus, capacity_source="scenario cloud.capacity")
        return Catalog({**self.families, "cloud": types.MappingProxyType(offers)})


@functools.cache
def load_catalog() -> Catalog:
    """The catalog shipped with the package (read once, validated)."""
    data = resources.files("clusterplan.catalog") / "data"
    families: dict[str, Mapping[str, Entry]] = {}
    seen: dict[str, str] = {}
    for family, cls in FAMILIES.items():
        name = f"catalog/{family}.toml"
        entries = parse_family((data / f"{family}.toml").read_text(encoding="utf-8"), cls, source=name)
        for entry_id in entries:
            if entry_id in seen:
                raise CatalogError(f"duplicate id (also in {seen[entry_id]})", key=entry_id, source=name)
            seen[entry_id] = name
        families[family] = types.MappingProxyType(entries)
    return Catalog(types.MappingProxyType(families))


def parse_family(text: str, cls: type[Entry], *, source: str) -> dict[str, Entry]:
    """One family file: a table per id, validated into ``cls`` entries."""
    try:
        tables = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CatalogError(f"malformed TOML: {error}", source=source) from None
    locate = locator(text)
    entries = {}
    for entry_id, table in tables.items():
        if isinstance(table, dict) and "id" in table:
            raise CatalogError("the table name is the id; remove the 'id' key", key=f"{entry_id}.id",
                               source=source, line=locate(f"{entry_id}.id"))
        try:
            entries[entry_id] = build(cls, {**table, "id": entry_id} if isinstance(table, dict) else table,
                                      path=entry_id, locate=locate)
        except ConfigError as error:  # a fault of the catalog file, not of the user's scenario
            raise CatalogError(error.message, key=error.key, source=source, line=error.line) from None
    return entries
