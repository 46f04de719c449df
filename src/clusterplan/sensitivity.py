"""How TCO, cost per GPU-hour and break-even move with the uncertain inputs (docs/sensitivity.md).

The design fixes every quantity (GPUs, switches, kW, engineer-years); what is
uncertain is the price or rate each quantity is multiplied by. With those as a
vector ``theta`` every output is a closed form, evaluated for many ``theta`` at
once with numpy:

    capex       = sum_i q_i theta_i                     BoM quantities x unit prices
    one_off     = nodes x theta_integration + setup engineer-years x theta_loaded_cost
    opex / year = kWh_typical x theta_pue x theta_electricity + kW_max x 12 x theta_colocation
                  + capex x theta_maintenance + ops engineers x theta_loaded_cost + GPUs x theta_software
    TCO         = capex + one_off + years x opex
    $/GPU-hour  = TCO / (GPUs x 8,760 x theta_utilization x years)
    break-even  = first month m in 0 .. 12 x years with  rent_year x m / 12 >= capex + one_off + opex x m / 12,
                  rent_year = GPUs x 8,760 x (theta_utilization, or 1 when reserved) x theta_offer_price

Inputs vary over the catalog's low/high where sources disagree, otherwise
+-20 % of the nominal value. The tornado moves one input at a time to its
low and high end; the Monte Carlo draws every input from a triangular
distribution (low, nominal, high), seeded, and ranks the inputs by their
Spearman rank correlation with each output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from clusterplan.catalog import Catalog, Priced, load_catalog
from clusterplan.cost import HOURS_PER_YEAR, cloud_cost
from clusterplan.cost.cloud import breakeven_month
from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec

SPREAD = 0.20          # +-20 % where the catalog gives no range
CHUNK = 50_000         # Monte Carlo samples drawn and evaluated at a time
MAX_SAMPLES = 1_000_000
DRIVER_SAMPLES = 200_000   # rank correlations use the first samples, at most this many
QUANTILES = (0.10, 0.50, 0.90)
# Scenario rates that vary: key, name, unit, (lowest, highest) allowed value.
RATES = (
    ("facility.electricity_usd_per_kwh", "Electricity price", "USD/kWh", (0.0, np.inf)),
    ("facility.pue", "PUE", "ratio", (1.0, np.inf)),
    ("facility.colocation_usd_per_kw_month", "Colocation rate", "USD/kW-month", (0.0, np.inf)),
    ("staff.loaded_cost_usd_per_year", "Loaded engineer cost", "USD/engineer-year", (0.0, np.inf)),
    ("finance.maintenance_fraction_per_year", "Maintenance", "fraction of capex a year", (0.0, np.inf)),
    ("finance.software_usd_per_gpu_year", "Software licences", "USD/GPU-year", (0.0, np.inf)),
    ("finance.utilization", "Utilization", "fraction of hours", (1e-9, 1.0)),
)


@dataclass(**FROZEN)
class Input:
    """One uncertain price or rate: the scenario key that sets it, and its range."""

    key: str              # "prices.h100-sxm", "facility.pue": what `--set` would change
    name: str
    unit: str
    nominal: float
    low: float
    high: float
    range_source: str     # "catalog" (sources disagree) or "+-20 %"

    @property
    def varies(self) -> bool:
        return self.high > self.low


@dataclass(**FROZEN)
class Model:
    """The scenario's outputs as closed forms in the inputs; quantities fixed by the design."""

    inputs: tuple[Input, ...]
    capex_weights: tuple[float, ...]      # per input: quantity bought at that price
    one_off_weights: tuple[float, ...]
    opex_weights: tuple[float, ...]       # the linear part of the yearly opex
    typical_kwh_per_year: float           # x PUE x electricity price
    years: int
    num_gpus: int
    offer: str | None                     # the cloud offer break-even is measured against
    offer_pay_per_use: bool

    def index(self, key: str) -> int:
        return next(i for i, item in enumerate(self.inputs) if item.key == key)

    @property
    def nominal(self) -> np.ndarray:
        return np.array([item.nominal for item in self.inputs])

    @property
    def horizon_months(self) -> int:
        return 12 * self.years


@dataclass(**FROZEN)
class Outcome:
    """The three outputs at one point; ``breakeven_month`` None = never within the horizon."""

    tco_usd: float
    cost_per_gpu_hour_usd: float
    breakeven_month: int | None


@dataclass(**FROZEN)
class Swing:
    """The outputs with one input at its low and at its high end, the others nominal."""

    input: Input
    low: Outcome
    high: Outcome

    @property
    def tco_swing_usd(self) -> float:
        return abs(self.high.tco_usd - self.low.tco_usd)


@dataclass(**FROZEN)
class Distribution:
    """P10, P50, P90 and mean of one output over the samples (None: never breaks even)."""

    p10: float | None     # an int for months
    p50: float | None
    p90: float | None
    mean: float | None    # None where some samples never break even


@dataclass(**FROZEN)
class MonteCarlo:
    samples: int
    seed: int
    tco_usd: Distribution
    cost_per_gpu_hour_usd: Distribution
    breakeven_month: Distribution | None
    breakeven_probability: float | None         # share of samples that break even within the horizon
    drivers: Mapping[str, tuple[tuple[str, float], ...]]   # output -> (input key, rank correlation), strongest first
    tco_histogram: tuple[tuple[float, ...], tuple[int, ...]]  # (bin edges, counts)


@dataclass(**FROZEN)
class Sensitivity:
    model: Model
    nominal: Outcome
    tornado: tuple[Swing, ...]   # by TCO swing, largest first; then by cost-per-GPU-hour swing
    monte_carlo: MonteCarlo


def model(spec: Spec, catalog: Catalog | None = None, *, offer: str | None = None) -> Model:
    """The affine cost model of ``spec``: its design's quantities and every uncertain input."""
    from clusterplan.plan import own

    catalog = (catalog or load_catalog()).with_prices(spec.prices)
    built, owned = own(spec, catalog)
    offer = offer if offer is not None else (spec.cloud.offers[0] if spec.cloud.offers else None)
    offer_entry = None
    inputs: list[Input] = []
    weights: dict[str, list[float]] = {}

    def add(item: Input, capex: float = 0.0, one_off: float = 0.0, opex: float = 0.0) -> None:
        if item.key not in weights:
            inputs.append(item)
            weights[item.key] = [0.0, 0.0, 0.0]
        for slot, value in enumerate((capex, one_off, opex)):
            weights[item.key][slot] += value

    for line in owned.bom:
        add(_price_input(catalog, line.catalog_id), capex=line.quantity)
    for line in owned.one_off:
        if line.catalog_id:
            add(_price_input(catalog, line.catalog_id), one_off=line.quantity)
    if offer:
        offer_entry = catalog.get("cloud", offer, key="--offer")
        add(_price_input(catalog, offer))
    values = {"facility": spec.facility, "staff": spec.staff, "finance": spec.finance}
    engineer_years = sum(line.quantity for line in owned.one_off if not line.catalog_id)
    for key, name, unit, bounds in RATES:
        section, _, field = key.partition(".")
        item = _spread_input(key, name, unit, getattr(values[section], field), bounds)
        if key == "staff.loaded_cost_usd_per_year":
            add(item, one_off=engineer_years, opex=spec.staff.ops_engineers)
        elif key == "facility.colocation_usd_per_kw_month":
            add(item, opex=built.it_power_w / 1e3 * 12)
        elif key == "finance.software_usd_per_gpu_year":
            add(item, opex=built.num_gpus)
        else:
            add(item)
    columns = list(zip(*(weights[item.key] for item in inputs)))
    return Model(inputs=tuple(inputs), capex_weights=columns[0], one_off_weights=columns[1],
                 opex_weights=columns[2], typical_kwh_per_year=built.it_typical_power_w / 1e3 * HOURS_PER_YEAR,
                 years=spec.finance.years, num_gpus=built.num_gpus, offer=offer or None,
                 offer_pay_per_use=offer_entry is not None and not offer_entry.term_years)


def _price_input(catalog: Catalog, entry_id: str) -> Input:
    _, entry = catalog.find(entry_id)
    assert isinstance(entry, Priced)
    low, high = entry.price_low_usd, entry.price_high_usd
    if low is None and high is None:
        return _spread_input(f"prices.{entry_id}", entry.name, f"USD per {entry.per}", entry.price_usd,
                             (0.0, np.inf))
    return Input(key=f"prices.{entry_id}", name=entry.name, unit=f"USD per {entry.per}", nominal=entry.price_usd,
                 low=entry.price_usd if low is None else low, high=entry.price_usd if high is None else high,
                 range_source="catalog")


def _spread_input(key: str, name: str, unit: str, nominal: float, bounds: tuple[float, float]) -> Input:
    low = min(max(nominal * (1 - SPREAD), bounds[0]), nominal)
    high = max(min(nominal * (1 + SPREAD), bounds[1]), nominal)
    return Input(key=key, name=name, unit=unit, nominal=float(nominal), low=float(low), high=float(high),
                 range_source="+-20 %")


def evaluate(model: Model, theta: np.ndarray) -> dict[str, np.ndarray]:
    """Outputs for each row of ``theta`` (samples x inputs); break-even ``inf`` = never."""
    theta = np.atleast_2d(np.asarray(theta, dtype=float))
    capex = theta @ np.asarray(model.capex_weights)
    upfront = capex + theta @ np.asarray(model.one_off_weights)
    energy = model.typical_kwh_per_year * theta[:, model.index("facility.pue")] \
        * theta[:, model.index("facility.electricity_usd_per_kwh")]
    opex = (energy + theta @ np.asarray(model.opex_weights)
            + capex * theta[:, model.index("finance.maintenance_fraction_per_year")])
    tco = upfront + model.years * opex
    utilization = theta[:, model.index("finance.utilization")]
    delivered = model.num_gpus * HOURS_PER_YEAR * utilization
    out = {"tco_usd": tco, "cost_per_gpu_hour_usd": tco / (delivered * model.years), "capex_usd": capex,
           "opex_usd_per_year": opex}
    if model.offer:
        billed = delivered if model.offer_pay_per_use else np.full_like(tco, model.num_gpus * HOURS_PER_YEAR)
        rent = billed * theta[:, model.index(f"prices.{model.offer}")]
        out["breakeven_months"] = _breakeven(upfront, opex, rent, model.horizon_months)
    return out


def _breakeven(upfront: np.ndarray, opex: np.ndarray, rent: np.ndarray, horizon: int) -> np.ndarray:
    """First whole month with rent x m / 12 >= upfront + opex x m / 12, as ``breakeven_month`` counts."""
    def rented_more(month: np.ndarray) -> np.ndarray:
        return rent * month / 12 >= upfront + opex * month / 12

    gap = rent - opex
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.where(gap > 0, np.ceil(12 * upfront / np.where(gap > 0, gap, 1.0)), horizon + 1.0)
    month = np.clip(np.where(upfront <= 0, 0.0, guess), 0, horizon + 1)
    month = np.where((month > 0) & rented_more(month - 1), month - 1, month)   # the division's rounding, both ways
    month = np.where((month <= horizon) & ~rented_more(month), month + 1, month)
    return np.where((month <= horizon) & rented_more(month), month, np.inf)


def _outcome(values: dict[str, np.ndarray], row: int = 0) -> Outcome:
    month = values.get("breakeven_months")
    month = None if month is None or not np.isfinite(month[row]) else int(month[row])
    return Outcome(tco_usd=float(values["tco_usd"][row]),
                   cost_per_gpu_hour_usd=float(values["cost_per_gpu_hour_usd"][row]), breakeven_month=month)


def tornado(model: Model) -> tuple[Outcome, tuple[Swing, ...]]:
    """The nominal outcome, and each varying input at its low and its high end alone."""
    varying = [i for i, item in enumerate(model.inputs) if item.varies]
    theta = np.tile(model.nominal, (1 + 2 * len(varying), 1))
    for row, i in enumerate(varying):
        theta[1 + 2 * row, i] = model.inputs[i].low
        theta[2 + 2 * row, i] = model.inputs[i].high
    values = evaluate(model, theta)
    swings = [Swing(input=model.inputs[i], low=_outcome(values, 1 + 2 * row), high=_outcome(values, 2 + 2 * row))
              for row, i in enumerate(varying)]
    swings.sort(key=lambda s: (-s.tco_swing_usd,
                               -abs(s.high.cost_per_gpu_hour_usd - s.low.cost_per_gpu_hour_usd)))
    return _outcome(values), tuple(swings)


def draw(model: Model, samples: int, rng: np.random.Generator) -> np.ndarray:
    """``samples`` rows of inputs: triangular(low, nominal, high) for the varying ones, nominal otherwise."""
    theta = np.tile(model.nominal, (samples, 1))
    varying = [i for i, item in enumerate(model.inputs) if item.varies]
    if varying:
        low = np.array([model.inputs[i].low for i in varying])
        mode = np.array([model.inputs[i].nominal for i in varying])
        high = np.array([model.inputs[i].high for i in varying])
        theta[:, varying] = rng.triangular(low, mode, high, size=(samples, len(varying)))
    return theta


def monte_carlo(model: Model, *, samples: int, seed: int,
                progress: Callable[[int], None] | None = None) -> MonteCarlo:
    """P10/P50/P90 of the outputs over ``samples`` seeded draws, and the inputs that drive them."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise ConfigError(f"must be between 1 and {MAX_SAMPLES:,}, got {samples}", key="--samples")
    rng = np.random.default_rng(seed)
    thetas, outputs = [], []
    for start in range(0, samples, CHUNK):
        theta = draw(model, min(CHUNK, samples - start), rng)
        thetas.append(theta)
        outputs.append(evaluate(model, theta))
        if progress:
            progress(len(theta))
    theta = np.concatenate(thetas)
    values = {name: np.concatenate([o[name] for o in outputs]) for name in outputs[0]}
    metrics = ["tco_usd", "cost_per_gpu_hour_usd"] + (["breakeven_months"] if model.offer else [])
    varying = [i for i, item in enumerate(model.inputs) if item.varies]
    head = slice(0, DRIVER_SAMPLES)
    input_ranks = {i: _ranks(theta[head, i]) for i in varying}
    drivers = {}
    for name in metrics:
        output = values[name][head]
        ranks = _ranks(np.where(np.isfinite(output), output, model.horizon_months + 1))
        pairs = [(model.inputs[i].key, _correlation(input_ranks[i], ranks)) for i in varying]
        drivers[name] = tuple(sorted(pairs, key=lambda pair: -abs(pair[1])))
    counts, edges = np.histogram(values["tco_usd"], bins=min(40, max(1, samples // 25)))
    months = values.get("breakeven_months")
    return MonteCarlo(
        samples=samples, seed=seed, tco_usd=_distribution(values["tco_usd"]),
        cost_per_gpu_hour_usd=_distribution(values["cost_per_gpu_hour_usd"]),
        breakeven_month=None if months is None else _distribution(months, whole=True),
        breakeven_probability=None if months is None else float(np.isfinite(months).mean()),
        drivers=drivers, tco_histogram=(tuple(float(e) for e in edges), tuple(int(c) for c in counts)))


def _distribution(values: np.ndarray, *, whole: bool = False) -> Distribution:
    """Quantiles as sample values (inverted CDF), so a month stays a whole month and 'never' stays never."""
    quantiles = np.quantile(values, QUANTILES, method="inverted_cdf")
    finite = np.isfinite(values).all()
    kind = int if whole else float
    as_value = [kind(q) if np.isfinite(q) else None for q in quantiles]
    return Distribution(p10=as_value[0], p50=as_value[1], p90=as_value[2],
                        mean=float(values.mean()) if finite else None)


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties sharing their average rank (as Spearman's rho needs)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    if not (ordered[1:] == ordered[:-1]).any():   # no ties: one sort is enough
        ranks = np.empty(len(values))
        ranks[order] = np.arange(1, len(values) + 1)
        return ranks
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    average = np.cumsum(counts) - (counts - 1) / 2
    return average[inverse.ravel()]


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x - x.mean(), y - y.mean()
    scale = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / scale) if scale > 0 else 0.0


def sensitivity(spec: Spec, catalog: Catalog | None = None, *, samples: int, seed: int, offer: str | None = None,
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
    for item, value in zip(model.inputs, values):
        section, _, name = item.key.partition(".")
        if section == "prices":
            prices[name] = float(value)
        else:
            sections.setdefault(section, {})[name] = float(value)
    changed = {section: dataclasses.replace(getattr(spec, section), **fields) for section, fields in sections.items()}
    return dataclasses.replace(spec, prices=prices, **changed)


def scalar_outcome(spec: Spec, model: Model, values, catalog: Catalog | None = None) -> Outcome:
    """The outputs at ``values`` computed the long way: a perturbed scenario through ``plan.own``."""
    from clusterplan.plan import own

    changed = perturbed(spec, model, values)
    catalog = (catalog or load_catalog()).with_prices(changed.prices)
    built, owned = own(changed, catalog)
    month = None
    if model.offer:
        rent = cloud_cost(catalog.get("cloud", model.offer), num_gpus=built.num_gpus,
                          utilization=changed.finance.utilization, years=changed.finance.years)
        month = breakeven_month(owned, rent)
    return Outcome(tco_usd=owned.tco_usd, cost_per_gpu_hour_usd=owned.cost_per_gpu_hour_usd, breakeven_month=month)
