"""The live XLSX recalculated by LibreOffice equals `plan --format json`, also after editing its inputs."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from clusterplan.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "examples" / "reference-128x-h100.toml"
CASES = {"reference": [str(REFERENCE)],
         "roce": [str(ROOT / "examples" / "reference-roce-200g.toml")],
         "starter": [str(ROOT / "examples" / "starter-32.toml")],
         "workload": [str(REFERENCE), "--set", 'workload.model="llama2-13b"', "--set", 'workload.tokens="2T"'],
         # owning switched on: a licence, sales tax, a loan, support from day one, a longer server life, resale
         "owning": [str(REFERENCE), "--set", 'finance.licences=["nvidia-ai-enterprise"]', "--set",
                    "finance.sales_tax=0.05", "--set", "finance.loan_rate=0.06", "--set", "finance.loan_years=5",
                    "--set", "finance.support_start_year=0", "--set", "finance.life_years={ gpu-servers = 6 }",
                    "--set", "finance.resale_fraction=0.5"],
         "flat": [str(REFERENCE), "--set", "finance.maintenance_fraction_per_year=0.1"],
         # a horizon that is no whole number of a 3-year reservation's terms, its idle remainder partly resold
         "horizon": [str(REFERENCE), "--set", "finance.years=4", "--set", "cloud.resale_fraction=0.25"]}
# Inputs typed into the sheet: defined name -> (the --set key, the value typed, the --set value if it differs)
EDITS = {"electricity_usd_per_kwh": ("facility.electricity_usd_per_kwh", 0.205, None),
         "price_h100_sxm": ('prices.h100-sxm', 27500.0, None),
         "life_compute_years": ("finance.life_years", 4.0, "{ gpu-servers = 4 }"),
         "support_fraction_per_year": ("finance.support_fraction_per_year", 0.15, None),
         "resale_fraction": ("finance.resale_fraction", 0.7, None),
         "support_start_compute_years": ("finance.support_start_year", 2.0, None),
         # a horizon no reservation term divides, so the resale of the idle years moves the reserved offers' totals
         "horizon_years": ("finance.years", 4.0, "4"),
         "cloud_resale_fraction": ("cloud.resale_fraction", 0.5, None)}
RELATIVE = 1e-9

# Calc keeps an XLSX's cached values on load unless its profile says to recalculate always (0).
RECALC_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse">
<value>0</value></prop></item>
</oor:items>
"""

needs_soffice = pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed")


def recalculate(paths: list[Path], work: Path) -> dict[str, Path]:
    """Open each file in headless LibreOffice with recalculation forced, save it as XLSX again."""
    user = work / "profile" / "user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "registrymodifications.xcu").write_text(RECALC_PROFILE)
    out = work / "recalculated"
    done = subprocess.run(["soffice", f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
                           "--norestore", "--convert-to", "xlsx", "--outdir", str(out), *map(str, paths)],
                          capture_output=True, text=True, timeout=300)
    converted = {path.name: out / path.name for path in paths}
    assert all(p.exists() for p in converted.values()), done.stdout + done.stderr
    return converted


def named(book, name: str):
    """The value of the cell a defined name points at."""
    sheet, ref = next(iter(book.defined_names[name].destinations))
    return book[sheet][ref.replace("$", "")]


def _plan(argv: list[str], out: Path, fmt: str) -> Path:
    assert main(["plan", *argv, "--format", fmt, "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory):
    """Each case's JSON, and its XLSX as LibreOffice recalculated it (one soffice run for all)."""
    work = tmp_path_factory.mktemp("xlsx")
    books = {case: _plan(argv, work / f"{case}.xlsx", "xlsx") for case, argv in CASES.items()}
    docs = {case: json.loads(_plan(argv, work / f"{case}.json", "json").read_text()) for case, argv in CASES.items()}
    edited = work / "edited.xlsx"
    _edit(books["reference"], edited)
    openpyxl = pytest.importorskip("openpyxl")
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    converted = recalculate([*books.values(), edited], work)
    load = lambda path: openpyxl.load_workbook(path, data_only=True)   # noqa: E731
    edited_argv = [*CASES["reference"], *(arg for key, value, text in EDITS.values()
                                          for arg in ("--set", f"{key}={value if text is None else text}"))]
    return ({case: (load(converted[path.name]), docs[case]) for case, path in books.items()},
            (load(converted[edited.name]), json.loads(_plan(edited_argv, work / "edited.json", "json").read_text())))


def _edit(source: Path, target: Path) -> None:
    """The two inputs of EDITS typed into the Inputs sheet, as a user would, saved without cached values."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.load_workbook(source)
    for name, (_, value, _) in EDITS.items():
        named(book, name).value = value
    # support from year 2 for every class, as finance.support_start_year = 2 does: each class's start typed in
    for category in ("network", "storage", "facility"):
        named(book, f"support_start_{category}_years").value = 2.0
    book.save(target)


def _check_costs(book, doc) -> None:
    cost = doc["cost"]
    for name, want in (("capex_usd", cost["capex_usd"]), ("one_off_usd", cost["one_off_usd"]),
                       ("opex_usd_per_year", cost["opex_usd_per_year"]["total"]), ("tco_usd", cost["tco_usd"]),
                       ("npv_usd", cost["npv_usd"]), ("cost_per_gpu_hour_usd", cost["cost_per_gpu_hour_usd"]),
                       ("delivered_gpu_hours_per_year", cost["delivered_gpu_hours_per_year"]),
                       ("residual_usd", cost["residual_usd"]),
                       ("economic_cost_per_gpu_hour_usd", cost["economic_cost_per_gpu_hour_usd"]),
                       *((f"opex_{line}_usd_per_year", usd) for line, usd in cost["opex_usd_per_year"].items()
                         if line != "total")):
        assert named(book, name).value == pytest.approx(want, rel=RELATIVE), name
    cloud = list(book["Cloud"].iter_rows(min_row=3, values_only=True))
    assert [row[0] for row in cloud] == [offer["offer"] for offer in doc["cloud"]]
    for row, offer in zip(cloud, doc["cloud"]):
        assert row[7] == pytest.approx(offer["total_usd"], rel=RELATIVE), offer["offer"]
        assert row[8] == pytest.approx(offer["vs_own"], rel=RELATIVE), offer["offer"]
        month = offer["breakeven_months"]
        assert row[9] == ("never" if month is None else month), offer["offer"]   # exact


@needs_soffice
@pytest.mark.parametrize("case", list(CASES))
def test_recalculated_values_equal_the_json(recalculated, case):
    """TCO, NPV, opex lines, cost per GPU-hour, each offer's total and break-even, as LibreOffice recomputes them."""
    book, doc = recalculated[0][case]
    _check_costs(book, doc)
    totals = [row[6] for row in book["BoM"].iter_rows(min_row=3, max_row=2 + len(doc["cost"]["bom"]),
                                                      values_only=True)]
    assert totals == pytest.approx([line["total_usd"] for line in doc["cost"]["bom"]], rel=RELATIVE)


@needs_soffice
def test_workload_sheet_recalculates(recalculated):
    """Time and cost to train over the predicted tokens/s equal the JSON's training section."""
    book, doc = recalculated[0]["workload"]
    training = doc["training"]
    assert named(book, "time_to_train_s").value == pytest.approx(training["time_to_train_s"], rel=RELATIVE)
    assert named(book, "cost_to_train_usd").value == pytest.approx(training["cost_to_train_usd"], rel=RELATIVE)
    assert "Workload" not in recalculated[0]["reference"][0].sheetnames


@needs_soffice
def test_edited_inputs_move_the_model_as_plan_set_does(recalculated):
    """Electricity price and GPU unit price typed into the sheet: TCO, NPV, $/GPU-h and break-even as `plan --set`."""
    book, doc = recalculated[1]
    assert named(book, "electricity_usd_per_kwh").value == EDITS["electricity_usd_per_kwh"][1]
    assert doc["cost"]["bom"][0]["unit_price_usd"] == EDITS["price_h100_sxm"][1]
    _check_costs(book, doc)
    reference = recalculated[0]["reference"][1]
    assert named(book, "tco_usd").value != pytest.approx(reference["cost"]["tco_usd"], rel=1e-3)


@needs_soffice
def test_libreoffice_replaces_a_wrong_cached_value(tmp_path):
    """The engine really recalculates: a cached value written wrong on purpose comes back right."""
    xlsxwriter = pytest.importorskip("xlsxwriter")
    openpyxl = pytest.importorskip("openpyxl")
    path = tmp_path / "wrong.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("S")
    sheet.write_number("A1", 7)
    book.define_name("price", "=S!$A$1")
    sheet.write_formula("B1", "=price*6", None, 99)
    book.close()
    assert openpyxl.load_workbook(path, data_only=True)["S"]["B1"].value == 99
    converted = recalculate([path], tmp_path)[path.name]
    assert openpyxl.load_workbook(converted, data_only=True)["S"]["B1"].value == 42


def _sheet(path: Path, name: str) -> list[tuple]:
    openpyxl = pytest.importorskip("openpyxl")
    return list(openpyxl.load_workbook(path)[name].iter_rows(values_only=True))


def test_compare_xlsx_puts_scenarios_side_by_side(tmp_path):
    """compare --format xlsx: each headline with one column per scenario and the deltas, as the JSON has them."""
    files = [str(REFERENCE), str(ROOT / "examples" / "starter-32.toml")]
    assert main(["compare", *files, "--format", "xlsx", "-o", str(tmp_path / "c.xlsx")]) == 0
    assert main(["compare", *files, "--format", "json", "-o", str(tmp_path / "c.json")]) == 0
    doc = json.loads((tmp_path / "c.json").read_text())
    rows = _sheet(tmp_path / "c.xlsx", "Headlines")
    assert rows[0][:4] == ("Figure", "Unit", *doc["labels"])
    for row, headline in zip(rows[1:], doc["headlines"]):
        assert row[:5] == (headline["name"], headline["unit"], *headline["values"], headline["deltas"][1])
    bom = _sheet(tmp_path / "c.xlsx", "BoM")
    assert len(bom) == 1 + len(doc["bom"])
    scenarios = {row[0]: row[1:] for row in _sheet(tmp_path / "c.xlsx", "Scenarios")}
    assert scenarios["cluster.num_nodes"] == tuple(s["cluster"]["num_nodes"] for s in doc["scenarios"])


def test_sensitivity_xlsx_holds_the_tornado(tmp_path):
    """sensitivity --format xlsx: the inputs' ranges and each tornado bar's outcomes equal the JSON's."""
    argv = ["sensitivity", str(REFERENCE), "--samples", "200"]
    assert main([*argv, "--format", "xlsx", "-o", str(tmp_path / "s.xlsx")]) == 0
    assert main([*argv, "--format", "json", "-o", str(tmp_path / "s.json")]) == 0
    doc = json.loads((tmp_path / "s.json").read_text())
    inputs = _sheet(tmp_path / "s.xlsx", "Inputs")
    assert [row[:6] for row in inputs[1:]] == [(i["key"], i["name"], i["unit"], i["low"], i["nominal"], i["high"])
                                              for i in doc["inputs"]]
    tornado = _sheet(tmp_path / "s.xlsx", "Tornado")
    header = tornado[0]
    for row, bar in zip(tornado[1:], doc["tornado"]):
        assert row[header.index("TCO (USD) at low")] == bar["low"]["tco_usd"]
        assert row[header.index("TCO swing (USD)")] == bar["tco_swing_usd"]
    quantiles = {row[0]: row[1:] for row in _sheet(tmp_path / "s.xlsx", "Monte Carlo")[1:]}
    assert quantiles["TCO (USD)"][2] == doc["monte_carlo"]["tco_usd"]["p50"]
