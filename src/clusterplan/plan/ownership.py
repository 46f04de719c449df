"""The rules of owning a scenario's cluster (docs/cost.md): the catalog's asset classes and licences, the
scenario's finance keys, and the reliability model's spare nodes, joined for ``cost.tco``; and the warning for
prices observed long ago."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable

from clusterplan.catalog import AssetClass, Catalog, Licence
from clusterplan.cost.bom import Extras, Network
from clusterplan.cost.tco import AssetTerms, LicenceCharge, Ownership
from clusterplan.design import Design
from clusterplan.errors import CatalogError, ConfigError
from clusterplan.plan.reliability_inputs import reliability_settings, scenario_rates
from clusterplan.reliability.failures import cluster_spares
from clusterplan.spec import Spec

# The networks beside the fabric (catalog ids; the DGX SuperPOD reference architecture's choices): two front-end
# ports per node and per storage block; two management ports per node (BMC, host) and one per switch.
FRONTEND = ("front-end and storage Ethernet", "sn4600c-100g", "dac-qsfp28-100g-3m", 2, 2, 0)
MANAGEMENT = ("out-of-band management", "sn2201-1g-mgmt", "cat6-rj45-3m", 2, 1, 1)
STALE_DAYS = 365
TODAY_ENV = "CLUSTERPLAN_TODAY"


def today() -> dt.date:
    """The day prices are aged against, read by the edges (the CLI, the server) and passed in as ``today``:
    ``CLUSTERPLAN_TODAY`` (YYYY-MM-DD) when set, for reproducible runs and tests; else the system date."""
    value = os.environ.get(TODAY_ENV, "")
    if not value:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"expected a date YYYY-MM-DD, got {value!r}", key=TODAY_ENV) from None


def ownership(spec: Spec, catalog: Catalog, built: Design) -> Ownership:
    """``spec``'s finance keys over the catalog's asset classes and licences, with the spares ``built`` needs."""
    finance = spec.finance
    classes: dict[str, AssetClass] = dict(catalog.families["assets"])   # type: ignore[arg-type]
    for name in ("life_years", "warranty_years"):
        for asset in getattr(finance, name):
            if asset not in classes:
                raise ConfigError(f"unknown asset class {asset!r}; the classes are {', '.join(classes)}",
                                  key=f"finance.{name}.{asset}")

    def warranty(entry: AssetClass) -> float:
        return finance.warranty_years.get(entry.id, entry.warranty_years)

    assets = tuple(AssetTerms(
        asset=entry.id, category=entry.category, warranty_years=warranty(entry),
        support_start_years=warranty(entry) if finance.support_start_year is None else finance.support_start_year,
        life_years=finance.life_years.get(entry.id, entry.life_years), source=entry.source)
        for entry in classes.values())
    return Ownership(assets=assets, support_fraction_per_year=finance.support_fraction_per_year,
                     maintenance_fraction_per_year=finance.maintenance_fraction_per_year,
                     resale_fraction=finance.resale_fraction, licences=licences(spec, catalog, built),
                     loan_rate=finance.loan_rate, loan_years=finance.loan_years, extras=extras(spec, catalog, built))


def licences(spec: Spec, catalog: Catalog, built: Design) -> tuple[LicenceCharge, ...]:
    """The licences switched on, and the fabric manager of an InfiniBand fabric, each with its units."""
    chosen = [(licence_entry(catalog, key, f"finance.licences[{i}]")) for i, key in enumerate(spec.finance.licences)]
    if built.parts.fabric.technology == "infiniband":
        chosen.append(licence_entry(catalog, spec.finance.fabric_manager, "finance.fabric_manager"))
    bought = {built.parts.gpu.id, built.parts.server.id}
    return tuple(LicenceCharge(licence=entry.id, name=entry.name, unit=entry.unit, unit_price_usd=entry.price_usd,
                               units=built.num_gpus if entry.unit == "GPU" else built.num_nodes,
                               bundled_years=entry.bundled_years if bought & set(entry.bundled_with) else 0.0,
                               source=f"{entry.source} ({entry.date})" if entry.date else entry.source)
                 for entry in chosen)


def licence_entry(catalog: Catalog, entry_id: str, key: str) -> Licence:
    try:
        entry = catalog.get("licences", entry_id, key=key)
    except CatalogError as error:
        raise ConfigError(error.message, key=key) from None
    assert isinstance(entry, Licence)
    return entry


def recommended_spares(spec: Spec, catalog: Catalog, built: Design) -> int:
    """The reliability model's spare nodes for the whole cluster (reliability/failures.py): enough to cover the
    nodes in repair with probability ``reliability.spare_confidence``."""
    settings = reliability_settings(spec)
    return cluster_spares(scenario_rates(spec, catalog), built, repair_s=settings.repair_s,
                          confidence=settings.spare_confidence)


def extras(spec: Spec, catalog: Catalog, built: Design) -> Extras:
    count = spec.finance.spare_nodes
    if count is None:
        count = recommended_spares(spec, catalog, built)
        rule = (f"the reliability model's recommendation at {spec.reliability.spare_confidence:.0%} "
                f"(finance.spare_nodes)")
    else:
        rule = "finance.spare_nodes"
    return Extras(spare_nodes=count, spare_rule=rule, frontend=network(catalog, *FRONTEND),
                  management=network(catalog, *MANAGEMENT))


def network(catalog: Catalog, name: str, switch: str, cable: str, per_node: int, per_block: int,
            per_switch: int) -> Network:
    return Network(name=name, switch=catalog.get("switches", switch), cable=catalog.get("cables", cable),
                   ports_per_node=per_node, ports_per_storage_block=per_block, ports_per_switch=per_switch)


def observed(date: str) -> dt.date | None:
    """The last day a catalog date can mean ("2024-08" -> 2024-08-31, "2025" -> 2025-12-31, a span of years
    "2024-25" -> 2025-12-31); None if it names no year ("undated")."""
    match = re.search(r"(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", date)
    if not match:
        return None
    year, month, day = int(match.group(1)), match.group(2), match.group(3)
    if month and int(month) > 12:   # "2024-25": the later year of a span, not a month
        return dt.date(year // 100 * 100 + int(month), 12, 31)
    if day:
        return dt.date(year, int(month), int(day))
    if month:
        following = dt.date(year + int(month) // 12, int(month) % 12 + 1, 1)
        return following - dt.timedelta(days=1)
    return dt.date(year, 12, 31)


def stale_prices(entries: Iterable[tuple[str, str]], today: dt.date) -> str:
    """One warning naming the priced entries (id, date) observed more than 12 months before ``today``; "" if none."""
    old = sorted({entry_id for entry_id, date in entries
                  if (seen := observed(date)) is not None and (today - seen).days > STALE_DAYS})
    if not old:
        return ""
    return (f"prices: {len(old)} prices used were observed more than 12 months before {today.isoformat()} "
            f"({', '.join(old)}); refresh them under [prices] with current quotes")
