"""The one table of headline figures: rows per view, labels, formats, and figures a document lacks."""

import pytest

from clusterplan.plan import plan
from clusterplan.report.export import plan_document
from clusterplan.report.figures import (COMPARE, HEADLINES, HTML, TABLES, TERMINAL, VIEWS, lookup, money, months,
                                        pointer, present, resolve, rows, shown)
from clusterplan.spec import load_spec


@pytest.fixture(scope="module")
def doc(reference_plan):
    return plan_document(reference_plan)


@pytest.mark.parametrize("view", VIEWS)
def test_each_view_numbers_its_rows_one_to_n(view):
    """Every view's rows are 1, 2, .. n: no gap, no two figures on one row."""
    assert sorted(h.rows[view] for h in HEADLINES if view in h.rows) == list(range(1, len(shown(view)) + 1))


def test_every_figure_is_shown_somewhere_and_rows_name_known_views():
    """No figure is in the table for no view; rows() refuses a view that does not exist."""
    assert all(h.rows for h in HEADLINES)
    with pytest.raises(ValueError, match="unknown views"):
        rows(terminl=1)


def test_compare_labels_name_no_document_value():
    """compare lines several documents up, so its labels are fixed text, and its keys are unique."""
    labels = [h.title(COMPARE) for h in shown(COMPARE)]
    assert not any("{" in label for label in labels)
    assert len({h.key for h in shown(COMPARE)}) == len(shown(COMPARE))
    assert [h.title(COMPARE) for h in shown(COMPARE)][9:12] == ["TCO", "NPV of costs", "Residual value"]


def test_pointers_resolve_in_the_plan_document(doc):
    """Every figure but the training ones (no [workload] here) is a number in the reference plan."""
    for headline in HEADLINES:
        value = headline.value(doc)
        if headline.pointer.startswith("/training/"):
            assert value is None
        elif headline.pointer == "/cheapest_cloud/breakeven_months":   # null: renting stays cheaper ("never")
            assert present(doc, headline.pointer) and (value is None or isinstance(value, int))
        else:
            assert isinstance(value, (int, float)) and not isinstance(value, bool), headline.pointer


def test_labels_read_the_document(doc):
    """A label may name document values: the horizon and the discount rate."""
    labels = {h.key: h.title(TABLES, doc) for h in shown(TABLES)}
    assert labels["cost.tco_usd"] == "TCO over 3 years"
    assert labels["cost.npv_usd"] == "NPV of costs at 8%"
    cards = {h.key: h.title(HTML, doc) for h in shown(HTML)}
    assert cards["cost.one_off_usd"] == "One-off (integration, setup)"


def test_terminal_and_html_write_their_own_way(doc):
    """The same figure: compact in the terminal, thousands separators and cents below $100 in HTML; the
    terminal's rows that show more than one number."""
    text = {h.title(TERMINAL, doc): h.text(TERMINAL, doc) for h in shown(TERMINAL)}
    cheapest = doc["cheapest_cloud"]
    assert text[f"Cheapest cloud: {cheapest['offer']}"].endswith(f"break-even {months(cheapest['breakeven_months'])}")
    assert text["IT power (max / typical)"] == (f"{doc['design']['it_power_kw']:.1f} kW / "
                                                f"{doc['design']['it_typical_power_kw']:.1f} kW")
    years = doc["cost"]["years"]
    assert text[f"Cost per delivered GPU-hour (cash, {years} years)"] == f"${doc['cost']['cost_per_gpu_hour_usd']:.2f}"
    assert (text["Cost per delivered GPU-hour (economic, over life)"]
            == f"${doc['cost']['economic_cost_per_gpu_hour_usd']:.2f}")
    big = {**doc, "design": {**doc["design"], "facility_power_kw": 1234.56}}
    facility = next(h for h in HEADLINES if h.key == "design.facility_power_kw")
    assert (facility.text(TERMINAL, big), facility.text(HTML, big)) == ("1,234.6 kW", "1,234.6 kW")
    capex = HEADLINES[0]
    small = {**doc, "cost": {**doc["cost"], "capex_usd": 0.0}}
    assert (capex.text(TERMINAL, small), capex.text(HTML, small)) == ("$0", "$0.00")


def test_a_plan_without_offers_has_no_cheapest_cloud(catalog):
    """No offer: the cheapest is null, and the terminal's row for it has no value (the view leaves it out)."""
    bare = plan_document(plan(load_spec(None, ["cloud.offers=[]"]), catalog))
    assert bare["cloud"] == [] and bare["cheapest_cloud"] is None
    assert [h.pointer for h in shown(TERMINAL) if h.value(bare) is None] == ["/cheapest_cloud/total_usd"]


@pytest.mark.parametrize("overrides, value, source", [
    ([], 0.80, "reference default"),
    (["finance.utilization=0.65"], 0.65, "finance.utilization"),
    (['finance.utilization_from_trace="synthetic:jobs=200,load=0.5,seed=3"'], None, "replay of synthetic:"),
])
def test_utilization_shows_with_its_source_in_every_view(catalog, overrides, value, source):
    """The plan's utilization and where it came from: terminal summary, HTML card, exports and compare (issue 14)."""
    doc = plan_document(plan(load_spec(None, overrides), catalog))
    utilization = doc["cost"]["utilization"]
    assert utilization == doc["scenario"]["finance"]["utilization"]
    if value is not None:
        assert utilization == value
    assert doc["cost"]["utilization_source"].startswith(source)
    headline = next(h for h in HEADLINES if h.pointer == "/cost/utilization")
    assert {TERMINAL, HTML, TABLES, COMPARE} <= set(headline.rows)
    assert headline.text(TERMINAL, doc) == f"{utilization:.0%} ({doc['cost']['utilization_source']})"
    assert headline.title(HTML, doc) == f"Utilization ({doc['cost']['utilization_source']})"


def test_pointers_and_lookup():
    """JSON Pointers escape ~ and /; lookup is None where resolve would fail."""
    document = {"a/b": [{"c~d": 1}], "none": None}
    path = pointer("a/b", 0, "c~d")
    assert path == "/a~1b/0/c~0d" and resolve(document, path) == 1
    assert lookup(document, "/missing/x") is None and lookup(document, "/none/x") is None
    assert lookup(document, "/a~1b/3") is None
    assert (money(12_290_073.2), money(4.5669), money(-250.0)) == ("$12.29M", "$4.57", "-$250")
