"""The report's sizing section: shown with a [size] section, absent without; its numbers are the JSON's."""

import html
import json
import re
from pathlib import Path

import pytest

from clusterplan.cli.main import main
from clusterplan.report.page import resolve

REFERENCE = str(Path(__file__).parents[2] / "examples" / "reference-128x-h100.toml")

SIZE = ('[size]\nmodel = "llama2-13b"\ntokens = "300B"\ngpus = ["h100-sxm", "b200"]\nfabrics = ["ib-ndr400"]\n'
        'max_gpus = 128\nstart = "2026-12-04"\ndeadline_days = 60\nbudget_usd = "2M"\n')


@pytest.fixture(scope="module")
def sized(tmp_path_factory):
    """(report JSON, report HTML) of the reference with a [size] section."""
    folder = tmp_path_factory.mktemp("sized")
    scenario = folder / "sized.toml"
    scenario.write_text(open(REFERENCE, encoding="utf-8").read() + "\n" + SIZE)
    json_path, html_path = folder / "r.json", folder / "r.html"
    assert main(["report", str(scenario), "--samples", "500", "--format", "json", "-o", str(json_path)]) == 0
    assert main(["report", str(scenario), "--samples", "500", "-o", str(html_path)]) == 0
    return json.loads(json_path.read_text()), html_path.read_text()


def test_the_section_and_chart_are_drawn_from_the_size_document(sized):
    """Every candidate point and every table number of the section points at the size document's value."""
    doc, page = sized
    assert doc["size"]["schema"] == "clusterplan.size/1" and doc["size"]["cheapest"] is not None
    assert '<section id="size">' in page and 'data-chart="size-frontier"' in page
    found = re.findall(r'<(\w+)[^>]* data-pointer="(/size/[^"]+)" data-value="([^"]*)"', page)
    modelled = sum(1 for row in doc["size"]["candidates"] if "cost_usd" in row)
    assert sum(1 for tag, pointer, _ in found if tag == "circle" and "/candidates/" in pointer) >= modelled
    assert any(tag == "td" for tag, _, _ in found)
    for tag, pointer, value in found:
        assert html.unescape(value) == repr(resolve(doc, pointer)), pointer
    assert "deadline (60 d)" in page and "budget ($2M)" in page


def test_no_size_section_no_sizing(capsys):
    """The reference report (no [size]) has size null and no sizing section."""
    assert main(["report", REFERENCE, "--samples", "500", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["size"] is None
