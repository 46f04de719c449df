"""The sensitivity document carries the cluster size and each input's break-even swing."""

import io
import json
from contextlib import redirect_stdout

import pytest

from clusterplan.cli.main import main
from clusterplan.report.documents import scenario_source, scenario_title
from clusterplan.report.html_analysis import sensitivity
from clusterplan.report.terminal_analysis import render_sensitivity


@pytest.fixture(scope="module")
def doc():
    stream = io.StringIO()
    with redirect_stdout(stream):
        assert main(["sensitivity", "--samples", "200", "--seed", "3", "--format", "json"]) == 0
    return json.loads(stream.getvalue())


def test_breakeven_swing_counts_never_as_past_the_horizon(doc):
    """|high - low| of each input's break-even month, "never" (null) counted as the month after the horizon."""
    never = doc["horizon_months"] + 1
    assert doc["offer"] and any(swing["breakeven_swing_months"] for swing in doc["tornado"])
    for swing in doc["tornado"]:
        low, high = (never if month is None else month
                     for month in (swing["low"]["breakeven_months"], swing["high"]["breakeven_months"]))
        assert swing["breakeven_swing_months"] == abs(high - low)


def test_views_read_the_cluster_size_and_the_swing(doc):
    """The terminal heading prints num_gpus; the break-even tornado orders inputs by the document's swing."""
    stream = io.StringIO()
    render_sensitivity({**doc, "num_gpus": 4321}, stream)
    assert stream.getvalue().startswith("clusterplan sensitivity: 4,321 x h100-sxm")
    swings = [{**swing, "breakeven_swing_months": 0} for swing in doc["tornado"]]
    swings[-1]["breakeven_swing_months"] = 7
    page = sensitivity({"sensitivity": {**doc, "tornado": swings}}).body
    chart = page[page.index('data-chart="tornado-breakeven_months"'):]
    assert chart.count(f"{swings[-1]['key']} = ") >= 1 and swings[0]["key"] + " = " not in chart


def test_the_title_names_the_file_and_the_overrides():
    """A --set variant is named by its file (or about.name) and each override; the source repeats the command line."""
    assert scenario_title("", None, []) == "reference scenario"
    assert scenario_title("", "examples/starter-32.toml", ["cluster.num_nodes=8"]) == (
        "starter-32 with cluster.num_nodes=8")
    assert scenario_title("Quote A", "a.toml", ["x.y=1", "z.w=2"]) == "Quote A with x.y=1, z.w=2"
    assert scenario_source(None, ["a.b=1"]) == "reference scenario --set a.b=1"
