"""size (plan/size.py, plan/size_modes.py): time to capacity, reserved terms, residual value, the frontier."""

import datetime

import pytest

from clusterplan.errors import ConfigError
from clusterplan.plan.size import frontier, size
from clusterplan.plan.size_platform import domain_rack_w, platform
from clusterplan.cost.cloud import rented
from clusterplan.plan.size_modes import (USEFUL_LIFE_YEARS, Candidate, Window, committed_usd, own_window,
                                         residual_usd)
from clusterplan.spec import load_spec

TODAY = datetime.date(2026, 12, 4)


def test_own_window_sums_the_catalog_steps(catalog):
    """Order + delivery + install (growing with the GPUs) + burn-in, low and high alike."""
    window = own_window(catalog, "h100-sxm", 16_384)
    steps = [catalog.get("leadtimes", key) for key in ("order-h100-sxm", "delivery", "install", "burn-in")]
    assert window.days == pytest.approx(sum(step.days for step in steps) + 2 * 16.384)
    assert window.low_days < window.days < window.high_days and window.assumption
    assert own_window(catalog, "b200", 8).days > own_window(catalog, "h100-sxm", 8).days


def test_reservations_bill_whole_terms(catalog):
    """A run of 13 months on a 1-year term pays two years; on a 3-year term one term."""
    one, three = catalog.get("cloud", "aws-p5-reserved-1y"), catalog.get("cloud", "aws-p5-reserved-3y")
    run_s = 13 / 12 * 8760 * 3600
    assert rented(one, num_gpus=8, run_s=run_s).total_usd == pytest.approx(8 * 8760 * 2 * one.price_usd)
    assert rented(three, num_gpus=8, run_s=run_s).total_usd == pytest.approx(8 * 8760 * 3 * three.price_usd)


def test_residual_value_is_straight_line_and_floored():
    """Book value after t years of a 5-year life; nothing after it."""
    assert residual_usd(1e6, 0) == 1e6
    assert residual_usd(1e6, 3) == pytest.approx(1e6 * (1 - 3 / USEFUL_LIFE_YEARS))
    assert residual_usd(1e6, 7) == 0


def test_frontier_keeps_only_the_undominated():
    """Sorted by days; a later candidate joins only if it is cheaper than every earlier one."""
    def candidate(days, usd):
        return Candidate(gpu="h100-sxm", num_gpus=8, fabric="ib-ndr400", mode="on-demand",
                         capacity=Window(days=0, low_days=0, high_days=0), train_days=days, cost_usd=usd)
    points = [candidate(10, 5), candidate(5, 9), candidate(20, 5), candidate(30, 1), candidate(6, 20)]
    assert [(c.done_days, c.cost_usd) for c in frontier(points)] == [(5, 9), (10, 5), (30, 1)]


def test_hybrid_hands_over_or_is_excluded(catalog):
    """A run longer than the owned lead time mixes rented and owned cost; a shorter one has no handover."""
    spec = load_spec(None, ['size.model="llama2-13b"', 'size.tokens="2T"', 'size.gpus=["h100-sxm"]',
                            'size.fabrics=["ib-ndr400"]', "size.max_gpus=64", 'size.modes=["own", "on-demand", "hybrid"]'])
    result = size(spec, catalog, today=TODAY)
    by = {(c.num_gpus, c.mode): c for c in result.candidates}
    long_run = by[(8, "hybrid")]
    owned, rented = by[(8, "own")], by[(8, "on-demand")]
    share = owned.capacity.days / owned.train_days
    assert long_run.rented_usd == pytest.approx(rented.cost_usd * share)
    assert long_run.own_share_usd == pytest.approx(owned.own_share_usd * (1 - share))
    held = owned.train_days - owned.capacity.days   # the owned cluster commits capex and setup, opex while held
    assert long_run.committed_usd < owned.committed_usd
    assert long_run.cost_usd == pytest.approx(long_run.rented_usd + long_run.committed_usd)
    assert held > 0
    assert long_run.done_days == rented.done_days < owned.done_days
    short = size(load_spec(None, ['size.model="llama2-13b"', 'size.tokens="10B"', 'size.gpus=["h100-sxm"]',
                                  'size.fabrics=["ib-ndr400"]', "size.max_gpus=8", 'size.modes=["hybrid"]']),
                 catalog, today=TODAY)
    assert [c.reason for c in short.candidates] == ["no handover"] and short.excluded == {"no handover": 1}


def test_a_gpu_without_spot_offers_counts_no_offer(catalog):
    """B200 has no spot offer in the catalog: every spot candidate is 'no offer'."""
    spec = load_spec(None, ['size.model="llama2-13b"', 'size.tokens="100B"', 'size.gpus=["b200"]',
                            'size.fabrics=["ib-ndr400"]', "size.max_gpus=16", 'size.modes=["spot"]'])
    result = size(spec, catalog, today=TODAY)
    assert result.excluded == {"no offer": 2} and result.cheapest is None


def test_a_deadline_date_before_the_start_is_an_error(catalog):
    spec = load_spec(None, ['size.model="llama2-13b"', 'size.tokens="1T"', 'size.deadline_date="2026-12-01"'])
    with pytest.raises(ConfigError, match="is not after the start") as error:
        size(spec, catalog, today=TODAY)
    assert error.value.key == "size.deadline_date"


def test_every_catalog_gpu_has_an_order_lead_time(catalog):
    """size can date an owned cluster of every GPU the catalog has."""
    for gpu in catalog.families["gpus"]:
        step = catalog.get("leadtimes", f"order-{gpu}")
        assert step.low_days <= step.days <= step.high_days and step.source and step.date


def test_platform_is_the_default_server_in_whole_domains(catalog):
    """One place decides a GPU's build: HGX keeps the scenario's NICs per GPU and cooling; NVL72 comes in 72s,
    one NIC a GPU, and on air it gets the cheapest cooling that takes its ~120 kW rack (liquid)."""
    spec = load_spec(None, ['facility.cooling="air"'])
    hgx = platform(spec, catalog, "b200", 64, key="size.gpus[0]")
    assert (hgx.server, hgx.gpus_per_node, hgx.nics_per_node, hgx.cooling) == ("hgx-b200", 8, 8, "air")
    assert hgx.counts == (8, 16, 32, 64) and not hgx.rack_scale
    rack = platform(spec, catalog, "gb200", 1000, key="size.gpus[0]")
    assert (rack.server, rack.gpus_per_node, rack.nics_per_node, rack.cooling) == ("gb200-nvl72", 4, 4, "liquid")
    assert rack.counts == (72, 144, 288, 576) and rack.rack_scale
    assert domain_rack_w(catalog, catalog.get("servers", "gb200-nvl72")) == pytest.approx(18 * 6470 + 9 * 400)
    half = platform(load_spec(None, ["network.nics_per_node=4"]), catalog, "gb200", 72, key="size.gpus[0]")
    assert half.nics_per_node == 2
    with pytest.raises(ConfigError) as error:
        platform(spec, catalog, "gb200", 64, key="size.gpus[0]")
    assert error.value.key == "size.max_gpus" and "72 GPUs" in error.value.message


def test_an_owned_candidate_costs_the_money_committed(catalog):
    """Owning commits capex + setup + opex over the run, which the budget is checked against; the job's
    share of the TCO is beside it and much smaller (the issue's $2.51M share of a $378M cluster)."""
    spec = load_spec(None, ['size.model="llama2-13b"', 'size.tokens="100B"', 'size.gpus=["h100-sxm"]',
                            'size.fabrics=["ib-ndr400"]', "size.max_gpus=64", 'size.modes=["own"]'])
    result = size(spec, catalog, today=TODAY)
    owned = {c.num_gpus: c for c in result.candidates}[64]
    from clusterplan.plan.core import own
    from clusterplan.plan.size import scenario
    _, costs = own(scenario(result.spec, result.question, result.question.platforms[0], "ib-ndr400", 64), catalog)
    assert owned.cost_usd == owned.committed_usd == pytest.approx(committed_usd(costs, owned.train_days))
    assert owned.committed_usd == pytest.approx(costs.upfront_usd + costs.opex_total_usd_per_year
                                                 * owned.train_days / 365.25)
    assert owned.own_share_usd < owned.committed_usd
    budget = (owned.own_share_usd + owned.committed_usd) / 2   # above the share, below the money committed
    tight = size(load_spec(None, [*spec_lines(), f"size.budget_usd={budget}"]), catalog, today=TODAY)
    assert {c.num_gpus: c for c in tight.candidates if c.mode == "own"}[64] not in (tight.cheapest, tight.fastest)
    assert tight.excluded.get("budget", 0) >= 1


def spec_lines():
    return ['size.model="llama2-13b"', 'size.tokens="100B"', 'size.gpus=["h100-sxm"]', 'size.fabrics=["ib-ndr400"]',
            "size.max_gpus=64", 'size.modes=["own", "on-demand"]']


def test_no_offer_supplies_more_than_its_capacity(catalog):
    """Past every on-demand offer's max_gpus a candidate is out with "capacity", counted; within it, the
    cheapest offer that supplies the GPUs is rented."""
    spec = load_spec(None, ['size.model="llama2-13b"', 'size.tokens="100B"', 'size.gpus=["h100-sxm"]',
                            'size.fabrics=["ib-ndr400"]', "size.max_gpus=1024", 'size.modes=["on-demand"]'])
    result = size(spec, catalog, today=TODAY)
    offers = {o.id: o for o in catalog.families["cloud"].values() if o.gpu == "h100-sxm" and "-pre-" not in o.id
              and o.pricing == "on-demand"}
    largest = max(o.max_gpus for o in offers.values())
    for c in result.candidates:
        if c.num_gpus > largest:
            assert c.reason == "capacity"
        else:
            assert not c.reason and c.num_gpus <= offers[c.offer].max_gpus
    assert result.excluded["capacity"] == sum(1 for c in result.candidates if c.num_gpus > largest)


def test_spot_is_never_the_headline_of_a_multi_node_job(catalog):
    """Spot candidates past one instance are interruptible: never the cheapest, the fastest nor on the
    frontier; the cheapest such is on its own line (Sizing.spot)."""
    spec = load_spec(None, ['size.model="llama2-13b"', 'size.tokens="100B"', 'size.gpus=["h100-sxm"]',
                            'size.fabrics=["ib-ndr400"]', "size.max_gpus=64", 'size.modes=["spot", "on-demand"]'])
    result = size(spec, catalog, today=TODAY)
    spot = [c for c in result.candidates if c.mode == "spot" and not c.reason]
    assert spot and all(c.interruptible == (c.num_gpus > 8) for c in spot)
    multi = [c for c in spot if c.interruptible]
    assert result.cheapest not in multi and result.fastest not in multi
    assert not set(map(id, result.frontier)) & set(map(id, multi))
    assert result.spot in multi


def test_the_tables_fit_100_columns_whole(catalog):
    """A frontier row with the longest GPU id and provider name fits 100 columns, nothing cut (no ellipsis)."""
    import io

    from clusterplan.report.console import new_console
    from clusterplan.report.size import _rows_table
    row = {"num_gpus": 16384, "gpu": "a100-40gb-sxm", "fabric": "ib-ndr400", "mode": "on-demand",
           "provider": "Voltage Park", "layout": {"tp": 8, "pp": 16, "dp": 128, "cp": 1}, "capacity_days": 254,
           "trained": "2027-11-26", "done_days": 5160.2, "cost_usd": 123.45e6}
    stream = io.StringIO()
    console = new_console(stream)
    console.width = 100
    console.print(_rows_table("Pareto frontier", [row]))
    lines = stream.getvalue().splitlines()
    assert all(len(line.rstrip()) <= 100 for line in lines)
    body = lines[-1]
    assert "…" not in stream.getvalue() and "Voltage Park" in body and "2027-11-26" in body
