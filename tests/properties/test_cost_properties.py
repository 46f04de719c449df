"""Properties of the cost model: line items add up, more hardware never costs less,
electricity is linear in its drivers, break-even agrees with the cumulative curves,
and the hybrid burst share matches its load-duration integral."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import assume, event, example, given, settings
from hypothesis import strategies as st

from clusterplan.catalog import load_catalog
from clusterplan.cost import CloudCost, burst_fraction
from clusterplan.cost.cloud import breakeven_month
from clusterplan.errors import ConfigError
from clusterplan.plan import own, plan
from clusterplan.spec import Spec, load_spec

CATALOG = load_catalog()
GPUS = sorted(CATALOG.families["gpus"])
FABRICS = sorted(CATALOG.families["fabrics"])
TOPOLOGIES = ("fat-tree", "rail-optimized")
OVERSUBSCRIPTIONS = (1.0, 1.5, 2.0, 3.0)
H100_OFFERS = ("aws-p5-on-demand", "aws-p5-reserved-1y", "aws-p5-reserved-3y", "lambda-8x-h100-on-demand",
               "gcp-a3-highgpu-on-demand")
OPEX_CATEGORIES = {"electricity", "colocation", "support", "staff", "software", "financing"}

SETTINGS = settings(deadline=None, max_examples=100)


def _quote(text: str) -> str:
    return f'"{text}"'


@st.composite
def scenarios(draw, *, max_nodes: int = 300, topology: str | None = None) -> Spec:
    """A valid spec: any GPU on its default server, any fabric, topology and oversubscription; a rack-scale server
    (GB200 NVL72) in whole NVLink domains and liquid cooled (air cannot take its rack)."""
    gpu = draw(st.sampled_from(GPUS))
    server = CATALOG.get("servers", CATALOG.get("gpus", gpu).default_server)
    per = server.servers_per_domain
    overrides = [
        f"cluster.gpu={_quote(gpu)}",
        f"cluster.gpus_per_node={server.num_gpus}",
        f"cluster.num_nodes={draw(st.integers(1, max(1, max_nodes // per))) * per}",
        f"network.nics_per_node={draw(st.integers(1, server.max_nics))}",
        f"network.fabric={_quote(draw(st.sampled_from(FABRICS)))}",
        f"network.topology={_quote(topology or draw(st.sampled_from(TOPOLOGIES)))}",
        f"network.oversubscription={draw(st.sampled_from(OVERSUBSCRIPTIONS))}",
        "network.tiers=0",
        f"facility.cooling={_quote(draw(st.sampled_from(['liquid'] if per > 1 else ['liquid', 'air'])))}",
    ]
    return load_spec(overrides=overrides)


def _owned(spec: Spec):
    return own(spec, CATALOG.with_prices(spec.prices))


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-6)


@SETTINGS
@given(spec=scenarios(), price=st.floats(0, 1e6), part=st.sampled_from(["switch", "nic", "cable", "server"]))
def test_capex_is_the_sum_of_bom_line_totals(spec, price, part):
    """capex = sum of BoM lines, each line = quantity x unit price, and a [prices] override reaches its line."""
    design, _ = _owned(spec)
    part_id = (design.cabling[0].cable if part == "cable" else getattr(design.parts, part)).id   # the cable used
    spec = replace(spec, prices={part_id: price})
    design, costs = _owned(spec)
    assert costs.bom, "a cluster has a bill of materials"
    for line in costs.bom:
        assert line.quantity > 0
        assert _close(line.total_usd, line.quantity * line.unit_price_usd)
    assert _close(costs.capex_usd, math.fsum(line.quantity * line.unit_price_usd for line in costs.bom))
    assert _close(costs.capex_usd, math.fsum(costs.capex_by_category().values()))
    priced = [line for line in costs.bom if line.catalog_id == part_id]
    assert priced and all(line.unit_price_usd == price for line in priced)
    bought = [line for line in costs.bom if "spare node" not in line.item]   # the cluster, without its spares
    assert [line.quantity for line in bought if line.catalog_id == design.parts.gpu.id] == [design.num_gpus]

    def quantity(entry) -> float:
        return sum(line.quantity for line in bought if line.catalog_id == entry.id)

    assert quantity(design.parts.switch) == design.topology.num_switches
    assert sum(run.count for run in design.cabling) == design.topology.num_links
    assert all(run.cables * run.cable.links >= run.count for run in design.cabling), "every link has its cable"
    cables = {run.cable.id: run.cable for run in design.cabling}
    assert sum(quantity(cable) for cable in cables.values()) == sum(run.cables for run in design.cabling)
    assert quantity(design.parts.nic) == design.num_nodes * design.nics_per_node


@SETTINGS
@given(spec=scenarios(), years=st.integers(1, 30), maintenance=st.floats(0, 0.5),
       resale=st.floats(0, 1), ops=st.floats(0, 20), setup=st.floats(0, 20))
def test_tco_is_capex_plus_one_off_plus_years_of_opex(spec, years, maintenance, resale, ops, setup):
    """TCO = capex + one-off + years x (sum of the yearly opex categories) - residual; a flat maintenance
    fraction replaces support; the residual is at most the capex."""
    spec = replace(spec,
                   finance=replace(spec.finance, years=years, maintenance_fraction_per_year=maintenance,
                                   resale_fraction=resale),
                   staff=replace(spec.staff, ops_engineers=ops, setup_engineers=setup))
    design, costs = _owned(spec)
    assert set(costs.opex_usd_per_year) == OPEX_CATEGORIES
    capex = math.fsum(line.total_usd for line in costs.bom)
    one_off = math.fsum(line.total_usd for line in costs.one_off)
    opex = math.fsum(costs.opex_usd_per_year.values())
    assert _close(costs.tco_usd, capex + one_off + years * opex - costs.residual_usd)
    assert 0 <= costs.residual_usd <= resale * capex * (1 + 1e-9)
    if maintenance:
        assert _close(costs.opex_usd_per_year["support"], maintenance * capex)
    assert costs.opex_usd_per_year["software"] == 0
    assert _close(costs.opex_usd_per_year["staff"], ops * spec.staff.loaded_cost_usd_per_year)
    assert _close(one_off, math.fsum([setup * spec.staff.setup_months / 12 * spec.staff.loaded_cost_usd_per_year,
                                      design.parts.integration.price_usd * design.num_nodes]))
    # discounting lowers the opex and the residual credit alike: NPV lies below TCO with the credit undone
    assert costs.npv_usd <= (costs.tco_usd + costs.residual_usd) * (1 + 1e-12)


@SETTINGS
@given(data=st.data(), topology=st.sampled_from(TOPOLOGIES), extra=st.integers(1, 299))
def test_more_nodes_never_cost_less(data, topology, extra):
    """capex and TCO are non-decreasing in num_nodes (1..300), fat-tree and rail-optimized alike (in whole NVLink
    domains of a rack-scale server)."""
    spec = data.draw(scenarios(max_nodes=300 - extra, topology=topology))
    per = CATALOG.get("servers", CATALOG.get("gpus", spec.cluster.gpu).default_server).servers_per_domain
    smaller, larger = spec, spec.with_nodes(min(300 // per * per, spec.cluster.num_nodes + extra * per))
    _, small = _owned(smaller)
    _, large = _owned(larger)
    assert large.capex_usd >= small.capex_usd
    assert large.tco_usd >= small.tco_usd


def test_more_nodes_never_cost_less_on_the_reference_sweep():
    """On the reference fabric (automatic tiers) capex and TCO rise step by step over 1..300 nodes, both topologies."""
    for topology in TOPOLOGIES:
        spec = load_spec(overrides=[f"network.topology={_quote(topology)}"])
        previous = None
        for nodes in range(1, 301):
            _, costs = _owned(spec.with_nodes(nodes))
            if previous is not None:
                assert costs.capex_usd >= previous.capex_usd, (topology, nodes)
                assert costs.tco_usd >= previous.tco_usd, (topology, nodes)
            previous = costs


@SETTINGS
@given(nodes=st.integers(1, 2000), fabric=st.sampled_from(FABRICS), topology=st.sampled_from(TOPOLOGIES),
       tiers=st.sampled_from([0, 2, 3]), nics=st.integers(1, 8))
def test_two_to_one_oversubscription_costs_less_than_non_blocking(nodes, fabric, topology, tiers, nics):
    """2:1 never needs more switches than 1:1; with 2+ tiers it has strictly fewer links and network capex."""
    base = load_spec(overrides=[f"network.fabric={_quote(fabric)}", f"network.topology={_quote(topology)}",
                                f"network.tiers={tiers}", f"network.nics_per_node={nics}"]).with_nodes(nodes)
    try:
        blocking_free = _owned(replace(base, network=replace(base.network, oversubscription=1.0)))
    except ConfigError:
        assume(False)  # 1:1 needs more tiers than asked (or than three)
    design_1, costs_1 = blocking_free
    design_2, costs_2 = _owned(replace(base, network=replace(base.network, oversubscription=2.0)))
    fabric_1, fabric_2 = design_1.topology, design_2.topology
    assert fabric_2.num_switches <= fabric_1.num_switches
    # A leaf holding one NIC still needs one whole uplink, so 2:1 saves nothing when no leaf holds two
    # (as many leaves as NICs): rail-optimized with a single node (one NIC per rail), or two tiers forced
    # on two NICs (the two-leaf minimum).
    leaves = dict(fabric_2.switches).get("leaf", 1)
    if fabric_2.tiers >= 2 and leaves < fabric_2.num_endpoints:
        assert fabric_2.num_links < fabric_1.num_links
        assert costs_2.capex_by_category()["network"] < costs_1.capex_by_category()["network"]


def test_one_nic_per_leaf_gains_nothing_from_oversubscription():
    """With one NIC per leaf (one rail-optimized node; two NICs on forced two tiers) 2:1 wires as many links as 1:1."""
    rails = load_spec(overrides=['network.topology="rail-optimized"']).with_nodes(1)
    pair = load_spec(overrides=["network.nics_per_node=2", "network.tiers=2"]).with_nodes(1)
    for spec, expected in ((rails, 16), (pair, 4)):
        links = [_owned(replace(spec, network=replace(spec.network, oversubscription=o)))[0].topology.num_links
                 for o in (1.0, 2.0)]
        assert links == [expected, expected]


@SETTINGS
@given(spec=scenarios(), usd_per_kwh=st.floats(0.01, 1.0), pue=st.floats(1.0, 2.5))
def test_electricity_is_linear_in_price_and_pue(spec, usd_per_kwh, pue):
    """Doubling $/kWh or PUE doubles the electricity line and leaves capex and the other opex lines alone."""
    def facility(**change):
        return replace(spec, facility=replace(spec.facility, **change))

    _, base = _owned(facility(electricity_usd_per_kwh=usd_per_kwh, pue=pue))
    _, pricier = _owned(facility(electricity_usd_per_kwh=2 * usd_per_kwh, pue=pue))
    _, leakier = _owned(facility(electricity_usd_per_kwh=usd_per_kwh, pue=2 * pue))
    electricity = base.opex_usd_per_year["electricity"]
    assert electricity > 0
    for doubled in (pricier, leakier):
        assert _close(doubled.opex_usd_per_year["electricity"], 2 * electricity)
        assert doubled.capex_usd == base.capex_usd
        for category in OPEX_CATEGORIES - {"electricity"}:
            assert doubled.opex_usd_per_year[category] == base.opex_usd_per_year[category]


@SETTINGS
@example(utilization=0.8, offer="aws-p5-on-demand", price=0.5, years=3, nodes=16)   # renting never catches up
@example(utilization=1.0, offer="aws-p5-on-demand", price=200.0, years=3, nodes=16)  # renting is dearer at once
@given(utilization=st.floats(0.05, 1.0), offer=st.sampled_from(H100_OFFERS), price=st.floats(0.5, 60),
       years=st.integers(1, 6), nodes=st.integers(1, 64))
def test_breakeven_month_agrees_with_cumulative_curves(utilization, offer, price, years, nodes):
    """Break-even is the first month 0..12 x years where rent >= own on the cumulative curves, None iff none."""
    spec = load_spec(overrides=[f"cloud.offers={[*H100_OFFERS]!r}".replace("'", '"'), 'cloud.burst_offer=""',
                                f"prices.{offer}={price!r}"]).with_nodes(nodes)
    spec = replace(spec, finance=replace(spec.finance, utilization=utilization, years=years))
    result = plan(spec)
    assert [rental.cost.offer.id for rental in result.rentals] == list(H100_OFFERS)
    owned = result.costs
    for rental in result.rentals:
        rent = rental.cost
        billed_share = 1.0 if rent.offer.term_years else utilization  # reserved bills every hour of the term
        assert _close(rent.cumulative_usd(12), result.design.num_gpus * 8760 * billed_share * rent.offer.price_usd)
        month = breakeven_month(owned, rent)
        assert rental.breakeven_month == month
        reached = [m for m in range(12 * years + 1) if rent.cumulative_usd(m) >= owned.cumulative_usd(m)]
        assert month == (reached[0] if reached else None)
        event("never breaks even" if month is None else "breaks even at month 0" if month == 0 else "breaks even")
        if month is not None:
            assert 0 <= month <= 12 * years
            assert all(rent.cumulative_usd(m) < owned.cumulative_usd(m) for m in range(month))


def test_breakeven_month_on_hand_built_curves():
    """Rent of opex + half the up-front cost a year breaks even in month 24; rent equal to opex never does."""
    _, costs = own(load_spec(), CATALOG)
    upfront = costs.capex_usd + costs.one_off_usd
    yearly = costs.opex_total_usd_per_year
    offer = CATALOG.get("cloud", "aws-p5-on-demand")
    rent_per_year = yearly + upfront / 2  # catches up after exactly two years
    hours = rent_per_year / offer.price_usd
    month = breakeven_month(costs, CloudCost(offer=offer, num_gpus=128, billed_gpu_hours_per_year=hours * (1 + 1e-9),
                                             years=costs.years))
    assert month == 24
    assert breakeven_month(costs, CloudCost(offer=offer, num_gpus=128,
                                            billed_gpu_hours_per_year=yearly / offer.price_usd,
                                            years=costs.years)) is None


def _midpoint_burst(owned_fraction: float, utilization: float, points: int = 20_000) -> float:
    exponent = 1 / utilization - 1
    step = 1 / points
    return step * math.fsum(max((1 - (i + 0.5) * step) ** exponent - owned_fraction, 0.0) for i in range(points))


@settings(deadline=None, max_examples=50)
@example(utilization=0.5, owned_fraction=0.005)
@example(utilization=0.05, owned_fraction=0.5)
@example(utilization=1.0, owned_fraction=0.3)
@given(utilization=st.floats(0.05, 1.0), owned_fraction=st.floats(0.0, 1.0))
def test_burst_fraction_matches_the_load_duration_integral(utilization, owned_fraction):
    """burst_fraction(b, u) = integral over p of max((1 - p)^(1/u - 1) - b, 0), within 1e-3 (midpoint rule)."""
    got = burst_fraction(owned_fraction, utilization)
    assert abs(got - _midpoint_burst(owned_fraction, utilization)) <= 1e-3
    assert max(utilization - owned_fraction, 0.0) - 1e-12 <= got <= min(utilization, 1 - owned_fraction) + 1e-12


@settings(deadline=None, max_examples=100)
@given(utilization=st.floats(0.01, 1.0), low=st.floats(0.0, 1.0), high=st.floats(0.0, 1.0))
def test_burst_fraction_ends_and_monotone(utilization, low, high):
    """burst_fraction is u at b = 0, 0 at b = 1, and never rises as the owned fraction b rises."""
    low, high = sorted((low, high))
    assert burst_fraction(0.0, utilization) == utilization
    assert burst_fraction(1.0, utilization) == 0.0
    assert burst_fraction(high, utilization) <= burst_fraction(low, utilization) + 1e-12
