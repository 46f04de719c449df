"""compare(): headline figures and BoM lines across plan documents, deltas against the first."""

import pytest

from clusterplan.compare import compare, grid, parse_vary
from clusterplan.errors import ConfigError
from clusterplan.plan import plan
from clusterplan.report.export import plan_document
from clusterplan.report.figures import COMPARE, shown
from clusterplan.spec import load_spec


@pytest.fixture(scope="module")
def ib_roce(catalog):
    return [plan_document(plan(load_spec(None, overrides), catalog))
            for overrides in ([], ["network.fabric=roce-200g"])]


def test_headlines_carry_values_and_deltas(ib_roce):
    """TCO, capex and cost per GPU-hour of each scenario, each delta the difference from the first."""
    result = compare(["ib", "roce"], ib_roce)
    by_key = {f.key: f for f in result.headlines}
    tco = by_key["cost.tco_usd"]
    assert tco.values == (ib_roce[0]["cost"]["tco_usd"], ib_roce[1]["cost"]["tco_usd"])
    assert tco.deltas == (0.0, tco.values[1] - tco.values[0]) and tco.changed
    assert not by_key["design.num_gpus"].changed
    plan_paths = [headline.key for headline in shown(COMPARE) if headline.key.split(".")[0] in ("cost", "design")]
    assert [f.key for f in result.headlines if f.key.split(".")[0] in ("cost", "design")] == plan_paths


def test_a_figure_only_some_documents_have(ib_roce):
    """A headline no document has is left out; one that only some have is None for the others."""
    assert not any(f.key.startswith("training.") for f in compare(["ib", "roce"], ib_roce).headlines)
    trained = {**ib_roce[1], "training": {"time_to_train_s": 1.97e6, "cost_to_train_usd": 326e3}}
    rows = {f.key: f for f in compare(["ib", "roce"], [ib_roce[0], trained]).headlines}
    assert rows["training.time_to_train_s"].values == (None, 1.97e6)
    assert rows["training.time_to_train_s"].deltas == (None, None) and rows["training.time_to_train_s"].changed
    assert "training.mfu" not in rows


def test_breakeven_per_offer_and_never(ib_roce):
    """Every offer gets a break-even row; 'never' is None and its delta None."""
    result = compare(["ib", "roce"], ib_roce)
    rows = {f.key: f for f in result.headlines if f.key.startswith("cloud.")}
    assert len(rows) == len(ib_roce[0]["cloud"])
    spot = rows["cloud.nebius-h100-spot.breakeven_months"]
    assert spot.values == (None, None) and spot.deltas == (None, None) and not spot.changed


def test_bom_lines_matched_by_id_and_item(ib_roce):
    """A line in one scenario only has quantity 0 and no unit price in the other; unchanged lines are flagged."""
    result = compare(["ib", "roce"], ib_roce)
    switches = [line for line in result.bom if line.catalog_id == "qm9700-ndr200"]
    assert switches and all(line.quantities[1] == 0 and line.unit_prices_usd[1] is None for line in switches)
    assert all(line.deltas_usd[1] == -line.totals_usd[0] for line in switches)
    gpu = next(line for line in result.bom if line.catalog_id == "h100-sxm")
    assert not gpu.changed
    total = [sum(line.totals_usd[k] for line in result.bom) for k in (0, 1)]
    assert total == pytest.approx([doc["cost"]["capex_usd"] for doc in ib_roce])
    categories = [line.category for line in result.bom]
    assert categories == sorted(categories, key=["compute", "network", "storage", "facility"].index)


def test_three_scenarios_and_one_is_rejected(ib_roce, catalog):
    """Three documents give three values per row; fewer than two is an error."""
    third = plan_document(plan(load_spec(None, ["cluster.num_nodes=8"]), catalog))
    result = compare(["a", "b", "c"], [*ib_roce, third])
    assert all(len(f.values) == 3 for f in result.headlines)
    with pytest.raises(ValueError):
        compare(["a"], ib_roce[:1])


def test_utilization_is_compared_with_where_it_came_from(catalog):
    """compare shows each scenario's utilization and its source; a changed source alone marks the row changed."""
    base = plan_document(plan(load_spec(None, []), catalog))
    set_by_hand = plan_document(plan(load_spec(None, ["finance.utilization=0.8"]), catalog))
    lower = plan_document(plan(load_spec(None, ["finance.utilization=0.6"]), catalog))
    figure = next(f for f in compare(["a", "b"], [base, lower]).headlines if f.key == "cost.utilization")
    assert figure.values == (0.8, 0.6) and figure.notes == ("reference default", "finance.utilization")
    assert figure.changed and figure.deltas[1] == pytest.approx(-0.2)
    same = next(f for f in compare(["a", "b"], [base, set_by_hand]).headlines if f.key == "cost.utilization")
    assert not same.changed


def test_parse_vary_splits_at_top_level_commas():
    """Values split at commas outside brackets and quotes; a list value keeps its own commas."""
    assert parse_vary("network.fabric=ib-ndr400, roce-400g").values == ("ib-ndr400", "roce-400g")
    assert parse_vary('size.gpus=["b200","h100-sxm"],["gb200"]').values == ('["b200","h100-sxm"]', '["gb200"]')
    assert parse_vary('about.name="a,b","c"').values == ('"a,b"', '"c"')


@pytest.mark.parametrize("text, message", [
    ("finance.years=3", "needs two or more values to compare, got one (3); for one value use --set finance.years=3"),
    ("finance.years=" + ",".join(str(n) for n in range(1, 18)), "17 values, at most 16"),
    ("finance.years=3,4,3", "3 given twice"),
    ("finance.years=3,,4", "an empty value in the list"),
    ("years=3,4", "expected section.key=V1,V2[,...]"),
])
def test_bad_vary_names_what_was_given(text, message):
    """One value, over 16, a value twice, an empty one or no section: a ConfigError naming the --vary given."""
    with pytest.raises(ConfigError) as raised:
        parse_vary(text)
    assert raised.value.source == f"--vary {text}" and raised.value.message == message


def test_grid_is_every_combination_first_key_slowest():
    """Two keys of 2 and 3 values make 6 columns, the first the baseline; labels use the keys' last parts."""
    columns = grid([parse_vary("cluster.num_gpus=64,128"), parse_vary("network.fabric=ib-ndr400,roce-400g,\"x\"")])
    assert [c.label for c in columns] == ["num_gpus=64 fabric=ib-ndr400", "num_gpus=64 fabric=roce-400g",
                                          "num_gpus=64 fabric=x", "num_gpus=128 fabric=ib-ndr400",
                                          "num_gpus=128 fabric=roce-400g", "num_gpus=128 fabric=x"]
    assert columns[4].overrides == ("cluster.num_gpus=128", "network.fabric=roce-400g")
    same = grid([parse_vary("cluster.gpu=a,b"), parse_vary("prices.gpu=1,2")])   # last parts clash: whole keys
    assert same[0].label == "cluster.gpu=a prices.gpu=1"


@pytest.mark.parametrize("texts, message", [
    (["finance.years=3,4", "finance.years=5,6"], "varied twice: give its values in one list"),
    (["finance.years=1,2,3,4,5", "network.fabric=a,b,c,d"], "5 x 4 = 20 scenarios, at most 16: vary fewer values"),
    (["a.b=1,2", "a.c=1,2", "a.d=1,2", "a.e=1,2"], "4 keys varied, at most 3"),
])
def test_grid_size_is_capped(texts, message):
    """A key varied twice, more than 16 columns or more than 3 keys: a ConfigError saying so."""
    with pytest.raises(ConfigError) as raised:
        grid([parse_vary(text) for text in texts])
    assert raised.value.message == message
