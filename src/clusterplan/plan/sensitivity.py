"""How TCO, cost per GPU-hour and break-even move with the uncertain prices and rates (docs/sensitivity.md).

``cost.sensitivity`` holds the numbers (the closed-form model, tornado and Monte Carlo); this module
reads a ``Spec`` and a ``Catalog`` to build its ``Model``, runs the analysis for a command, and runs a
perturbed scenario the long way for comparison.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from clusterplan.catalog import Catalog, Priced
from clusterplan.cost import breakeven_month, cloud_cost
from clusterplan.cost.tco import licence_usd_per_year, loan_interest_usd
from clusterplan.cost.sensitivity import (MAX_SAMPLES, RATES, Input, Model, Outcome, Sensitivity, monte_carlo,
                                          spread_input, tornado)
from clusterplan.errors import ConfigError
from clusterplan.plan.core import own
from clusterplan.plan.scenario import priced, resolved
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec


@dataclass(**FROZEN)
class Analysis:
    """The sensitivity of ``spec`` (resolved: the scenario as analysed)."""

    spec: Spec
    sensitivity: Sensitivity


def analysis(spec: Spec, catalog: Catalog | None = None, *, samples: int, seed: int, offer: str | None = None,
             progress: Callable[[int], None] | None = None) -> Analysis:
    """Tornado and Monte Carlo of the resolved ``spec``; ``offer``: break-even against it (default the first)."""
    check_sampling(samples, seed)
    catalog = priced(spec, catalog)
    spec = resolved(spec, catalog)
    return Analysis(spec=spec, sensitivity=sensitivity(spec, catalog, samples=samples, seed=seed, offer=offer,
                                                       progress=progress))


def check_sampling(samples: int, seed: int) -> None:
    """The Monte Carlo's sample count and seed, checked before any work."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise ConfigError(f"must be between 1 and {MAX_SAMPLES:,}, got {samples}", key="--samples")
    if seed < 0:
        raise ConfigError(f"must be >= 0, got {seed}", key="--seed")


def model(spec: Spec, catalog: Catalog, *, offer: str | None = None) -> Model:
    """The cost model of ``spec``: its design's quantities and every uncertain input.

    ``offer``: the cloud offer break-even is measured against (default: the first of ``cloud.offers``).
    """
    catalog = catalog.with_prices(spec.prices)
    built, owned = own(spec, catalog)
    offer = offer if offer is not None else (spec.cloud.offers[0] if spec.cloud.offers else None)
    offer_entry = catalog.get("cloud", offer, key="--offer") if offer else None
    weights: dict[str, list[float]] = {}   # input key -> [capex weight, one-off weight]
    categories: dict[str, dict[str, float]] = {}   # category -> input key -> quantity bought (with sales tax)
    inputs: list[Input] = []
    finance, years = spec.finance, spec.finance.years

    def add(item: Input, capex: float = 0.0, one_off: float = 0.0, category: str = "") -> None:
        if item.key not in weights:
            inputs.append(item)
            weights[item.key] = [0.0, 0.0]
        weights[item.key][0] += capex
        weights[item.key][1] += one_off
        if category:
            share = categories.setdefault(category, {})
            share[item.key] = share.get(item.key, 0.0) + capex

    for line in owned.bom:
        if line.catalog_id:
            add(_price_input(catalog, line.catalog_id), capex=line.quantity * (1 + finance.sales_tax),
                category=line.category)
    for line in owned.one_off:
        if line.catalog_id:
            add(_price_input(catalog, line.catalog_id), one_off=line.quantity)
    licences = {charge.licence: float(licence_usd_per_year(charge, years, price_usd=1.0))   # units x share charged
                for charge in owned.ownership.licences}
    for licence in licences:
        add(_price_input(catalog, licence))
    if offer:
        add(_price_input(catalog, offer))
    sections = {"facility": spec.facility, "staff": spec.staff, "finance": finance}
    engineer_years = sum(line.quantity for line in owned.one_off if not line.catalog_id)
    for key, name, unit, bounds in RATES:
        section, _, field = key.partition(".")
        item = spread_input(key, name, unit, getattr(sections[section], field), bounds)
        add(item, one_off=engineer_years if key == "staff.loaded_cost_usd_per_year" else 0.0)
    for terms in owned.ownership.assets:
        add(spread_input(f"finance.life_years.{terms.asset}", f"Economic life: {terms.category}", "years",
                         terms.life_years, (1.0, 30.0)))
    return Model(inputs=tuple(inputs), capex_weights=tuple(weights[item.key][0] for item in inputs),
                 one_off_weights=tuple(weights[item.key][1] for item in inputs),
                 typical_power_w=built.it_typical_power_w, power_w=built.it_power_w,
                 ops_engineers=built.staff.ops_engineers, years=years, num_gpus=built.num_gpus,
                 offer=offer or None, offer_pay_per_use=offer_entry is not None and not offer_entry.term_years,
                 assets=tuple((t.category, t.support_start_years, f"finance.life_years.{t.asset}")
                              for t in owned.ownership.assets),
                 category_weights={c.category: tuple(categories.get(c.category, {}).get(item.key, 0.0)
                                                     for item in inputs) for c in owned.ownership.assets},
                 licence_weights=tuple(licences.get(item.key.removeprefix("prices."), 0.0)
                                       if item.key.startswith("prices.") else 0.0 for item in inputs),
                 financing_per_capex=loan_interest_usd(principal_usd=1.0, rate=finance.loan_rate,
                                                       loan_years=finance.loan_years, years=years) / years)


def _price_input(catalog: Catalog, entry_id: str) -> Input:
    _, entry = catalog.find(entry_id)
    assert isinstance(entry, Priced)
    low, high = entry.price_low_usd, entry.price_high_usd
    if low is None and high is None:
        return spread_input(f"prices.{entry_id}", entry.name, f"USD per {entry.per}", entry.price_usd,
                            (0.0, np.inf))
    return Input(key=f"prices.{entry_id}", name=entry.name, unit=f"USD per {entry.per}", nominal=entry.price_usd,
                 low=entry.price_usd if low is None else low, high=entry.price_usd if high is None else high,
                 range_source="catalog")


def sensitivity(spec: Spec, catalog: Catalog, *, samples: int, seed: int, offer: str | None = None,
                progress: Callable[[int], None] | None = None) -> Sensitivity:
    """Tornado and Monte Carlo of the scenario's TCO, cost per GPU-hour and break-even."""
    built = model(spec, catalog, offer=offer)
    nominal, swings = tornado(built)
    return Sensitivity(model=built, nominal=nominal, tornado=swings,
                       monte_carlo=monte_carlo(built, samples=samples, seed=seed, progress=progress))


def perturbed(spec: Spec, model: Model, values) -> Spec:
    """``spec`` with every input of ``model`` set to ``values`` (prices as ``[prices]`` overrides)."""
    prices = dict(spec.prices)
    sections: dict[str, dict[str, float]] = {}
    lives = dict(spec.finance.life_years)
    for item, value in zip(model.inputs, values):
        section, _, name = item.key.partition(".")
        if section == "prices":
            prices[name] = float(value)
        elif name.startswith("life_years."):   # a life at its nominal is the catalog's: left unset
            if float(value) == item.nominal and name.removeprefix("life_years.") not in lives:
                continue
            lives[name.removeprefix("life_years.")] = float(value)
            sections.setdefault("finance", {})["life_years"] = lives   # type: ignore[assignment]
        else:
            sections.setdefault(section, {})[name] = float(value)
    changed = {section: dataclasses.replace(getattr(spec, section), **fields) for section, fields in sections.items()}
    return dataclasses.replace(spec, prices=prices, **changed)


def scalar_outcome(spec: Spec, model: Model, values, catalog: Catalog) -> Outcome:
    """The outputs at ``values`` computed the long way: a perturbed scenario through ``plan.own``."""
    changed = perturbed(spec, model, values)
    catalog = catalog.with_prices(changed.prices)
    built, owned = own(changed, catalog)
    month = None
    if model.offer:
        rent = cloud_cost(catalog.get("cloud", model.offer), num_gpus=built.num_gpus,
                          utilization=changed.finance.utilization, years=changed.finance.years,
                          resale_fraction=changed.cloud.resale_fraction)
        month = breakeven_month(owned, rent)
    return Outcome(tco_usd=owned.tco_usd, cost_per_gpu_hour_usd=owned.cost_per_gpu_hour_usd, breakeven_month=month)
