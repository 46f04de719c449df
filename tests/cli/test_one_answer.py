"""One answer: one (offer, job) pair costs the same in train, report, size, the XLSX and the live page
(issue 29). The offer is a 3-year reservation and the job lasts months, so every view must bill the whole
term (cost/cloud.py ``rented``), not the run's hours at the hourly rate."""

import io
import json
import re

import pytest

from clusterplan.cli.main import main
from clusterplan.serve.views import report_html, train_json

REFERENCE = "examples/reference-128x-h100.toml"
JOB = ('workload.model="llama3-70b"', 'workload.tokens="2T"')


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def sized(tmp_path_factory):
    """size's 128-GPU reserved candidate for the job on the reference's H100 and fabric: the offer it picks."""
    out = tmp_path_factory.mktemp("one") / "size.json"
    assert main(["size", REFERENCE, "--model", "llama3-70b", "--tokens", "2T", "--gpu-types", "h100-sxm",
                 "--fabrics", "ib-ndr200", "--max-gpus", "128", "--modes", "reserved", "--start", "2026-12-04",
                 "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    return next(row for row in doc["candidates"] if row["num_gpus"] == 128)


def overrides(offer):
    """The candidate's scenario (as size builds it) with ``offer`` the one cloud offer, and the job."""
    return ('cluster.server=""', "network.tiers=0", f'cloud.offers=["{offer}"]', 'cloud.burst_offer=""', *JOB)


def flags(offer):
    return [item for setting in overrides(offer) for item in ("--set", setting)]


def test_every_view_gives_the_same_cost_to_train(capsys, sized, tmp_path):
    """train's effective cloud cost, the report's, size's, the XLSX's and the live page's are one figure:
    whole terms of the reservation, far above the run's hours at the hourly rate."""
    offer, usd = sized["offer"], sized["cost_usd"]
    train = json.loads(run(capsys, "train", REFERENCE, *flags(offer), "--format", "json"))
    assert train["effective_cloud_cost_to_train_usd"][offer] == pytest.approx(usd, rel=1e-12)
    terms = train["cloud_terms"][offer]
    assert terms["terms"] == 1 and terms["total_usd"] == pytest.approx(usd, rel=1e-12)
    hourly = train["effective_time_to_train_s"] / 3600 * 128 * sized["cost_usd"] / terms["billed_gpu_hours"]
    term_s = terms["term_years"] * 8760 * 3600
    assert hourly == pytest.approx(usd * train["effective_time_to_train_s"] / term_s, rel=1e-9)
    assert hourly < usd / 2                                   # 169 days of a whole-year term are not the bill
    assert terms["idle_usd"] == pytest.approx(usd - hourly, rel=1e-9)

    report = json.loads(run(capsys, "report", REFERENCE, *flags(offer), "--samples", "50", "--format", "json"))
    assert report["plan"]["training"]["effective_cloud_cost_to_train_usd"][offer] == pytest.approx(usd, rel=1e-12)

    live = train_json(REFERENCE, overrides(offer))
    assert live["effective_cloud_cost_to_train_usd"][offer] == pytest.approx(usd, rel=1e-12)
    page = report_html(REFERENCE, overrides(offer))
    pointer = f"/plan/training/effective_cloud_cost_to_train_usd/{offer}"
    shown = re.search(rf'data-pointer="{re.escape(pointer)}" data-value="([^"]+)"', page)
    assert shown and float(shown.group(1)) == pytest.approx(usd, rel=1e-12)

    openpyxl = pytest.importorskip("openpyxl")
    path = tmp_path / "train.xlsx"
    assert main(["plan", REFERENCE, *flags(offer), "--format", "xlsx", "-o", str(path)]) == 0
    book = openpyxl.load_workbook(io.BytesIO(path.read_bytes()))
    rows = {row[0].value: row for row in book["Workload"].iter_rows()}
    cell = rows[f"Cost to train, {offer} (USD)"]
    formula = next(c.value for c in cell if isinstance(c.value, str) and c.value.startswith("="))
    assert "CEILING" in formula                               # the whole-term rule, as a live formula
    raw = train["cloud_cost_to_train_usd"][offer]
    assert raw == pytest.approx(usd, rel=1e-12)              # raw and effective runs both fit one term
    cached = openpyxl.load_workbook(io.BytesIO(path.read_bytes()), data_only=True)
    values = {row[0].value: row for row in cached["Workload"].iter_rows()}
    assert any(isinstance(c.value, float) and c.value == pytest.approx(usd, rel=1e-9)
               for c in values[f"Cost to train, {offer} (USD)"])
