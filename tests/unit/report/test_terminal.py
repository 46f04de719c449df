"""The plan in the terminal: its summary is the figures table's terminal rows, every number read, none worked out."""

import io

import pytest

from clusterplan.plan import plan
from clusterplan.report.export import plan_document
from clusterplan.report.figures import TERMINAL, shown
from clusterplan.report.terminal import render_plan
from clusterplan.spec import load_spec


@pytest.fixture(scope="module")
def doc(reference_plan):
    return plan_document(reference_plan)


def rendered(doc) -> list[str]:
    stream = io.StringIO()
    render_plan(doc, stream)
    return [line.rstrip() for line in stream.getvalue().splitlines()]


def test_summary_rows_are_the_terminal_figures_in_order(doc):
    """The Summary table holds one row per terminal figure of report/figures.py, label and text as it says."""
    lines = rendered(doc)
    start = lines.index("Summary") + 1
    summary = lines[start:start + len(shown(TERMINAL))]
    for line, headline in zip(summary, shown(TERMINAL)):
        assert line.startswith(headline.title(TERMINAL, doc)) and line.endswith(headline.text(TERMINAL, doc))


def test_numbers_come_from_the_document(doc):
    """vs own and the cheapest offer are read from the document, not worked out from the totals."""
    cloud = [{**offer, "vs_own": 9.87} for offer in doc["cloud"]]
    cheapest = {**doc["cheapest_cloud"], "offer": "made-up-offer"}
    text = "\n".join(rendered({**doc, "cloud": cloud, "cheapest_cloud": cheapest}))
    assert text.count("9.87x") == len(cloud) and "Cheapest cloud: made-up-offer" in text


def test_without_offers_there_is_no_cloud_row_or_table(catalog):
    """A plan without cloud offers prints neither the cheapest offer nor the renting table."""
    text = "\n".join(rendered(plan_document(plan(load_spec(None, ["cloud.offers=[]"]), catalog))))
    assert "Cheapest cloud" not in text and "Renting the same GPU-hours" not in text
