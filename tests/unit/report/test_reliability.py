"""The reliability document carries the total waste, and its terminal view prints it from there."""

import io
import json
from contextlib import redirect_stdout

import pytest

from clusterplan.cli.main import main
from clusterplan.report.reliability import render_reliability


@pytest.fixture(scope="module")
def doc():
    stream = io.StringIO()
    with redirect_stdout(stream):
        assert main(["reliability", "--set", 'workload.model="llama2-13b"', "--days", "21", "--format", "json"]) == 0
    return json.loads(stream.getvalue())


def test_total_waste_is_one_minus_goodput(doc):
    """waste.total = 1 - goodput, which the three parts add up to."""
    waste = doc["waste"]
    assert waste["total"] == 1 - doc["goodput"]
    assert waste["total"] == pytest.approx(waste["checkpoint"] + waste["lost_work"] + waste["restart"], rel=1e-9)


def test_the_total_row_reads_the_document(doc):
    """The causes table's total waste is the document's, not worked out from the goodput."""
    stream = io.StringIO()
    render_reliability({**doc, "waste": {**doc["waste"], "total": 0.4321}}, stream)
    total = next(line for line in stream.getvalue().splitlines() if line.startswith("total"))
    assert total.rstrip().endswith("43.210%")
