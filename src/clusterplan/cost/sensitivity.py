"""How TCO, cost per GPU-hour and break-even move with the uncertain inputs (docs/sensitivity.md).

The design fixes every quantity (GPUs, switches, kW, engineer-years); what is
uncertain is the price or rate each quantity is multiplied by. With those as a
vector ``theta`` every output is a closed form, evaluated for many ``theta`` at
once with numpy by the formulas of ``cost.tco`` and ``cost.cloud`` themselves:

    capex_c     = sum_i q_ci theta_i                    BoM quantities of asset class c x unit prices (x sales tax)
    one_off     = nodes x theta_integration + setup engineer-years x theta_loaded_cost
    opex / year = the lines of ``opex_lines_usd_per_year`` at the sampled rates: support of each class after
                  its warranty at theta_support, licences past their bundled years, loan interest
    residual    = theta_resale x sum_c capex_c x max(0, 1 - years / theta_life_c)
    TCO         = capex + one_off + years x opex - residual
    $/GPU-hour  = TCO / (GPUs x 8,760 x theta_utilization x years)
    break-even  = ``breakeven_months``: the first month m in 0 .. 12 x years with
                  rent_year x m / 12 >= capex + one_off + opex x m / 12,
                  rent_year = GPUs x 8,760 x (theta_utilization, or 1 when reserved) x theta_offer_price

Inputs vary over the catalog's low/high where sources disagree, otherwise
+-20 % of the nominal value. The tornado moves one input at a time to its
low and high end; the Monte Carlo draws every input from a triangular
distribution (low, nominal, high), seeded, and ranks the inputs by their
Spearman rank correlation with each output.

Numbers only: building a ``Model`` from a scenario and a catalog is the caller's work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from clusterplan.cost.cloud import billed_gpu_hours_per_year, breakeven_months
from clusterplan.cost.tco import (delivered_gpu_hours_per_year, opex_lines_usd_per_year, owned_support_usd_per_year,
                                  residual_usd, total_cost_of_ownership_usd, usd_per_gpu_hour)
from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

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
    ("finance.support_fraction_per_year", "Support rate", "fraction of a class's capex a year", (0.0, 1.0)),
    ("finance.maintenance_fraction_per_year", "Flat maintenance", "fraction of capex a year", (0.0, 1.0)),
    ("finance.resale_fraction", "Resale", "fraction of book value", (0.0, 1.0)),
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
    """The scenario's outputs as closed forms in the inputs; quantities fixed by the design.

    ``inputs`` holds one ``Input`` per BoM and one-off price, the offer's price (when there is an offer)
    and one per ``RATES`` key.
    """

    inputs: tuple[Input, ...]
    capex_weights: tuple[float, ...]      # per input: quantity bought at that price
    one_off_weights: tuple[float, ...]
    typical_power_w: float                # average IT draw: x PUE x electricity price
    power_w: float                        # nameplate IT power: x colocation rate
    ops_engineers: float                  # x loaded engineer cost, a year
    years: int
    num_gpus: int
    offer: str | None                     # the cloud offer break-even is measured against
    offer_pay_per_use: bool
    # Owning: per asset class (category, support start, key of its life input), the capex weights of each
    # category (with sales tax), the licence weights (units x share of the horizon charged), loan interest
    # per dollar of capex a year
    assets: tuple[tuple[str, float, str], ...] = ()
    category_weights: Mapping[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    licence_weights: tuple[float, ...] = ()
    financing_per_capex: float = 0.0

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


def spread_input(key: str, name: str, unit: str, nominal: float, bounds: tuple[float, float]) -> Input:
    """``nominal`` +-20 %, kept inside ``bounds`` (lowest, highest allowed)."""
    low = min(max(nominal * (1 - SPREAD), bounds[0]), nominal)
    high = max(min(nominal * (1 + SPREAD), bounds[1]), nominal)
    return Input(key=key, name=name, unit=unit, nominal=float(nominal), low=float(low), high=float(high),
                 range_source="+-20 %")


def evaluate(model: Model, theta: np.ndarray) -> dict[str, np.ndarray]:
    """Outputs for each row of ``theta`` (samples x inputs); break-even ``inf`` = never."""
    theta = np.atleast_2d(np.asarray(theta, dtype=float))

    def rate(key: str) -> np.ndarray:
        return theta[:, model.index(key)]

    capex = theta @ np.asarray(model.capex_weights)
    upfront = capex + theta @ np.asarray(model.one_off_weights)
    by_category = {category: theta @ np.asarray(weights) for category, weights in model.category_weights.items()}
    support = owned_support_usd_per_year(
        by_category, {category: start for category, start, _ in model.assets},
        rate=rate("finance.support_fraction_per_year"), flat=rate("finance.maintenance_fraction_per_year"),
        span_years=model.years)
    residual = residual_usd(by_category, {category: rate(life) for category, _, life in model.assets},
                            resale=rate("finance.resale_fraction"), years=model.years) + np.zeros(len(theta))
    software = theta @ np.asarray(model.licence_weights) if model.licence_weights else 0.0
    opex = sum(opex_lines_usd_per_year(
        typical_power_w=model.typical_power_w, power_w=model.power_w, pue=rate("facility.pue"),
        electricity_usd_per_kwh=rate("facility.electricity_usd_per_kwh"),
        colocation_usd_per_kw_month=rate("facility.colocation_usd_per_kw_month"), support_usd=support,
        ops_engineers=model.ops_engineers, loaded_cost_usd_per_year=rate("staff.loaded_cost_usd_per_year"),
        software_usd=software, financing_usd=capex * model.financing_per_capex).values())
    tco = total_cost_of_ownership_usd(upfront_usd=upfront, opex_usd_per_year=opex, years=model.years,
                                      residual_usd=residual)
    utilization = rate("finance.utilization")
    delivered = delivered_gpu_hours_per_year(num_gpus=model.num_gpus, utilization=utilization)
    out = {"tco_usd": tco, "cost_per_gpu_hour_usd": usd_per_gpu_hour(total_usd=tco, gpu_hours_per_year=delivered,
                                                                     years=model.years),
           "capex_usd": capex, "opex_usd_per_year": opex}
    if model.offer:
        billed = billed_gpu_hours_per_year(num_gpus=model.num_gpus, utilization=utilization,
                                           reserved=not model.offer_pay_per_use)
        out["breakeven_months"] = breakeven_months(upfront_usd=upfront, opex_usd_per_year=opex,
                                                   rent_usd_per_year=billed * rate(f"prices.{model.offer}"),
                                                   horizon_months=model.horizon_months)
    return out


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
