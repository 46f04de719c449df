"""plan_document: the figures the renderers would otherwise work out are in the document."""

import pytest

from clusterplan.plan import plan
from clusterplan.report.export import plan_document
from clusterplan.spec import load_spec


@pytest.fixture(scope="module")
def doc(reference_plan):
    return plan_document(reference_plan)


def test_each_offer_carries_its_cost_over_owning(doc):
    """vs_own = the offer's total over the horizon / the TCO of owning."""
    tco = doc["cost"]["tco_usd"]
    assert doc["cloud"] and all(offer["vs_own"] == offer["total_usd"] / tco for offer in doc["cloud"])


def test_the_cheapest_offer_is_the_lowest_total(doc):
    """cheapest_cloud copies the offer with the lowest total (its id, total, vs_own and break-even) among those
    that may head a 24/7 cluster: not spot, and supplying its GPUs at once."""
    lowest = min((offer for offer in doc["cloud"] if offer["pricing"] != "spot"), key=lambda offer: offer["total_usd"])
    assert doc["cheapest_cloud"] == {key: lowest[key] for key in ("offer", "total_usd", "vs_own", "breakeven_months")}


def test_the_horizon_in_months_and_the_cash_at_each_year_end(doc):
    """horizon_months = 12 x years; cumulative_usd_by_year[y] is the month-12y cumulative, ending at the TCO."""
    cost = doc["cost"]
    assert cost["horizon_months"] == 12 * cost["years"] == len(cost["cumulative_usd_by_month"]) - 1
    assert cost["cumulative_usd_by_year"] == cost["cumulative_usd_by_month"][::12]
    assert cost["cumulative_usd_by_year"][-1] == pytest.approx(cost["tco_usd"])


def test_a_plan_without_offers(catalog):
    """No offer: an empty cloud list and no cheapest offer."""
    doc = plan_document(plan(load_spec(None, ["cloud.offers=[]"]), catalog))
    assert doc["cloud"] == [] and doc["cheapest_cloud"] is None
