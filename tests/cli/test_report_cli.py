"""report, compare, sensitivity and plan exports, in process: outputs agree, bad input is one line and exit 2."""

import io
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from clusterplan.cli.main import main
from clusterplan.report.page import resolve
from clusterplan.report.tables import read_csv

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
REFERENCE = str(ROOT / "examples" / "reference-128x-h100.toml")
ROCE = str(ROOT / "examples" / "reference-roce-200g.toml")
FAST = ["--samples", "2000"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class Numbers(HTMLParser):
    """Every element with data-pointer: (tag, pointer, data-value, its text)."""

    def __init__(self):
        super().__init__()
        self.found, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("br", "meta", "line", "rect", "circle", "path"):
            if "data-pointer" in attrs:
                self.found.append([tag, attrs["data-pointer"], attrs["data-value"], None])
            return
        self.stack.append([tag, attrs.get("data-pointer"), attrs.get("data-value"), ""])

    def handle_endtag(self, tag):
        if tag in ("br", "meta", "line", "rect", "circle", "path") or not self.stack:
            return
        entry = self.stack.pop()
        if entry[1]:
            self.found.append(entry)
        if self.stack:
            self.stack[-1][3] += entry[3]

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][3] += data


def numbers(html_text):
    parser = Numbers()
    parser.feed(html_text)
    return parser.found


def shown_agrees(text: str, value) -> bool:
    """The displayed text is ``value`` rounded to the digits shown ($5.53M, month 18, 25.0 GB/s, 99.9%)."""
    text = text.strip()
    if value is None:
        return text in ("never", "-", "")
    if text.startswith("month "):
        return int(text.split()[1]) == value
    match = re.search(r"([-+]?)\$?([\d,]*\.?\d+)\s*([KMB]?)(\s*GB/s|\s*GiB|%|\s*pp|\s*days|\s*h\b)?", text)
    assert match, text
    sign, digits, suffix, unit = match.groups()
    scale = {"": 1, "K": 1e3, "M": 1e6, "B": 1e9}[suffix]
    unit = (unit or "").strip()
    if unit == "GB/s" and abs(value) > 1e6:
        scale = 1e9
    scale *= {"%": 0.01, "pp": 0.01, "days": 86400, "h": 3600, "GiB": 2**30}.get(unit, 1)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    shown = float(digits.replace(",", "")) * scale * (-1 if sign == "-" else 1)
    return abs(shown - value) <= 0.5 * 10 ** -decimals * scale * (1 + 1e-9) + 1e-12


WORKLOAD = [REFERENCE, "--set", 'workload.model="llama2-13b"', "--set", 'workload.tokens="2T"']


def outputs(folder, scenario):
    """The report as HTML and JSON, and the plan as JSON, CSV and XLSX, each from its own run."""
    found = {}
    for name, argv in {"html": ["report", *scenario, *FAST, "-o"], "report.json": ["report", *scenario, *FAST,
                                                                                 "--format", "json", "-o"],
                       "plan.json": ["plan", *scenario, "--format", "json", "-o"],
                       "csv": ["plan", *scenario, "--format", "csv", "-o"],
                       "xlsx": ["plan", *scenario, "--format", "xlsx", "-o"]}.items():
        path = folder / f"out.{name}"
        assert main([*argv, str(path)]) == 0
        found[name] = path
    return found


@pytest.fixture(scope="module")
def reference_outputs(tmp_path_factory):
    return outputs(tmp_path_factory.mktemp("outputs"), [REFERENCE])


@pytest.fixture(scope="module")
def workload_outputs(tmp_path_factory):
    return outputs(tmp_path_factory.mktemp("workload"), WORKLOAD)


def check_numbers(found: dict, needed: tuple[str, ...]) -> set[str]:
    """Every number in the HTML equals the report JSON at its pointer (and the plan JSON under /plan), rounded as
    shown; ``needed`` are among them. The pointers found."""
    report = json.loads(found["report.json"].read_text())
    planned = json.loads(found["plan.json"].read_text())
    elements = numbers(found["html"].read_text())
    pointers = {pointer for _, pointer, _, _ in elements}
    assert set(needed) <= pointers, set(needed) - pointers
    for tag, pointer, value, text in elements:
        expected = resolve(report, pointer)
        assert value == repr(expected), pointer
        if pointer.startswith("/plan/"):
            assert resolve(planned, pointer[len("/plan"):]) == expected, pointer
        if text is not None and tag in ("td", "div", "span"):
            assert shown_agrees(text, expected), (pointer, text, expected)
    return pointers


def test_html_numbers_match_the_json(reference_outputs):
    """Every number in the HTML (cells, cards, chart marks) equals the JSON at its pointer, and shows it rounded."""
    pointers = check_numbers(reference_outputs, (
        "/plan/cost/tco_usd", "/plan/cost/capex_usd", "/plan/cost/cost_per_gpu_hour_usd",
        "/plan/cloud/0/breakeven_months", "/sensitivity/monte_carlo/tco_usd/p50", "/collectives/0/rows/0/busbw_GBps",
        "/plan/design/racks/power_kw/0"))
    assert len(pointers) > 300 and not any(p.startswith(("/training", "/plan/training")) for p in pointers)


def test_training_numbers_match_the_json(workload_outputs):
    """With a workload: the layout, step time, MFU, memory parts, costs to train and every sweep point agree."""
    report = json.loads(workload_outputs["report.json"].read_text())
    sweep = report["training"]["sweep"]
    last = len(sweep) - 1
    offer = report["plan"]["cloud"][0]["offer"]
    pointers = check_numbers(workload_outputs, (
        "/plan/training/layout/tp", "/plan/training/layout/dp", "/plan/training/step_time_s",
        "/plan/training/tokens_per_s", "/plan/training/mfu", "/plan/training/tflops_per_gpu",
        "/plan/training/memory_bytes_per_gpu/total", "/plan/training/memory_bytes_per_gpu/activations",
        "/plan/training/memory_bytes_per_gpu/reserved", "/training/hbm_bytes_per_gpu",
        "/plan/training/time_to_train_s", "/plan/training/cost_to_train_usd",
        f"/plan/training/cloud_cost_to_train_usd/{offer}", "/training/sweep/0/time_to_train_s",
        f"/training/sweep/{last}/cost_to_train_usd/own", f"/training/sweep/{last}/cost_to_train_usd/{offer}",
        f"/training/sweep/{last}/mfu"))
    assert {f"/training/sweep/{i}/time_to_train_s" for i in range(len(sweep))} <= pointers


def test_csv_and_xlsx_numbers_match_the_json(reference_outputs):
    """BoM lines, opex by year, cloud totals and break-even in the CSV and XLSX equal the plan JSON."""
    openpyxl = pytest.importorskip("openpyxl")
    planned = json.loads(reference_outputs["plan.json"].read_text())
    cost = planned["cost"]
    csv_tables = read_csv(reference_outputs["csv"].read_text())
    header, rows = csv_tables["Bill of materials (capex)"]
    assert [float(r[header.index("Total (USD)")]) for r in rows] == [line["total_usd"] for line in cost["bom"]]
    assert [float(r[header.index("Quantity")]) for r in rows] == [line["quantity"] for line in cost["bom"]]
    header, rows = csv_tables["Cash flow by year (year 0 = purchase)"]
    assert float(rows[1][header.index("Electricity (USD)")]) == cost["opex_usd_per_year"]["electricity"]
    assert float(rows[-1][header.index("Cumulative (USD)")]) == cost["cumulative_usd_by_month"][-1]
    book = openpyxl.load_workbook(reference_outputs["xlsx"], data_only=True)   # the cached values
    sheet = list(book["Cloud"].iter_rows(min_row=2, values_only=True))
    header = sheet[0]
    for row, offer in zip(sheet[1:], planned["cloud"]):
        assert row[header.index("Total over the horizon (USD)")] == offer["total_usd"]
        month = row[header.index("Break-even (month)")]
        assert (None if month == "never" else month) == offer["breakeven_months"]
    tco = {row[0]: row[1] for row in book["TCO"].iter_rows(min_row=3, values_only=True)}
    assert tco["TCO"] == cost["tco_usd"]
    assert tco["Cost per delivered GPU-hour"] == cost["cost_per_gpu_hour_usd"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_report_for_every_example(capsys, example):
    """Every example renders a complete page: each section, one SVG per chart, no script, no URL to fetch."""
    code, out, err = run(capsys, "report", str(example), *FAST)
    assert code == 0, err
    assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    for anchor in ("summary", "capex", "opex", "cloud", "power", "fabric", "warnings", "collectives", "sensitivity"):
        assert f'id="{anchor}"' in out
    assert out.count("<svg") == 9 and "<script" not in out and 'id="training"' not in out
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", out)


def test_report_with_a_workload_has_the_training_section(capsys):
    """A workload adds the training section (before sensitivity) and its three charts; no token budget, one."""
    code, out, err = run(capsys, "report", *WORKLOAD, *FAST)
    assert code == 0, err
    assert out.index('id="collectives"') < out.index('id="training"') < out.index('id="sensitivity"')
    # three charts beside the plan's nine; each banded figure draws its error bar (docs/evidence.md)
    assert out.count("<svg") - out.count('class="error-bar"') == 12 and out.count("<h2>") == 10
    assert out.count('class="error-bar"') == 6       # step, tokens/s, time to train; the whole run's time and cost
    for chart in ("training-memory", "training-time", "training-cost"):
        assert f'data-chart="{chart}"' in out
    code, out, err = run(capsys, "report", REFERENCE, "--set", 'workload.model="llama2-13b"', *FAST)
    assert code == 0, err
    assert out.count("<svg") - out.count('class="error-bar"') == 10 and 'data-chart="training-memory"' in out and "training-time" not in out


def test_training_sweep_doubles_from_one_node_and_keeps_what_does_not_fit(capsys):
    """The sweep: one node doubling, the plan's job and the whole cluster; where nothing fits, nulls and why."""
    argv = [REFERENCE, "--set", 'workload.model="gpt3-175b"', "--set", 'workload.tokens="300B"',
            "--set", "workload.gpus=96"]
    code, out, err = run(capsys, "report", *argv, *FAST, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    sweep, job = doc["training"]["sweep"], doc["plan"]["training"]
    assert [row["gpus"] for row in sweep] == [8, 16, 32, 64, 96, 128]
    assert [row["num_nodes"] for row in sweep] == [1, 2, 4, 8, 12, 16]
    for row in sweep[:3]:
        assert not row["feasible"] and "does not fit in GPU memory" in row["reason"]
        assert row["time_to_train_s"] is None and row["layout"] is None and row["cost_to_train_usd"] == {}
    mine = next(row for row in sweep if row["gpus"] == job["num_gpus"] == 96)
    assert mine["layout"] == {k: v for k, v in job["layout"].items() if k != "global_batch"}
    assert mine["time_to_train_s"] == job["time_to_train_s"] and mine["cost_to_train_usd"]["own"] == job[
        "cost_to_train_usd"]
    assert set(mine["cost_to_train_usd"]) == {"own", *(offer["offer"] for offer in doc["plan"]["cloud"])}
    assert sweep[-1]["time_to_train_s"] < mine["time_to_train_s"] < sweep[3]["time_to_train_s"]
    code, page, _ = run(capsys, "report", *argv, *FAST)
    assert code == 0 and page.count("nothing fits: does not fit in GPU memory") == 3
    assert "Nothing fits on 8, 16, 32 GPUs" in page
    assert 'data-pointer="/training/sweep/2/time_to_train_s"' not in page
    assert 'data-pointer="/training/sweep/3/time_to_train_s"' in page


def test_a_workload_that_never_fits_has_a_section_without_charts(capsys):
    """Nothing fits at any size: the section says why, every size is a row with its reason, no chart is drawn."""
    code, out, err = run(capsys, "report", REFERENCE, "--set", 'workload.model="gpt-1t"', "--set",
                         'workload.tokens="1T"', *FAST)
    assert code == 0, err
    section = out[out.index('<section id="training"'):out.index('<section id="sensitivity"')]
    assert "No layout fits (" in section and "<svg" not in section
    assert section.count("nothing fits: does not fit in GPU memory") == 5


def test_a_fixed_degree_a_size_cannot_hold_is_a_gap(capsys):
    """A data-parallel degree held fixed that a smaller job cannot hold: that size is kept, with the reason."""
    code, out, err = run(capsys, "report", *WORKLOAD, "--set", "workload.dp=16", *FAST, "--format", "json")
    assert code == 0, err
    sweep = json.loads(out)["training"]["sweep"]
    assert sweep[0]["gpus"] == 8 and not sweep[0]["feasible"] and "16 does not divide the 8 GPUs" in sweep[0]["reason"]
    assert [row["layout"]["dp"] for row in sweep[1:]] == [16] * (len(sweep) - 1)


def test_scenario_text_is_shown_as_text(capsys, tmp_path):
    """A name and notes holding markup come out escaped, in the report and on the compare page."""
    path = tmp_path / "evil.toml"
    path.write_text('[about]\nname = "<script>alert(1)</script>"\nnotes = "<img src=x onerror=alert(2)> & more"\n')
    code, out, _ = run(capsys, "report", str(path), *FAST)
    assert code == 0 and "<script>alert" not in out and "<img src=x" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "&lt;img src=x onerror=alert(2)&gt; &amp; more" in out
    code, out, _ = run(capsys, "compare", str(path), REFERENCE, "--format", "html")
    assert code == 0 and "<script>alert" not in out and "&lt;script&gt;" in out


def test_measured_points_join_the_collectives_chart(capsys):
    """--measured adds the measured rows to the group of the run's rank count (16 GPUs here)."""
    log = str(ROOT / "tests/unit/bench/data/p4de_all_reduce.log")
    argv = ["--set", "cluster.gpu=a100-80gb-sxm", "--set", "network.fabric=roce-100g",
            "--set", "network.nics_per_node=4"]
    code, out, err = run(capsys, "report", *argv, "--measured", log, *FAST, "--format", "json")
    assert code == 0, err
    groups = json.loads(out)["collectives"]
    assert [g["group"]["num_gpus"] for g in groups] == [8, 16, 128]
    measured = [g for g in groups if g["measured"]]
    assert len(measured) == 1 and measured[0]["group"]["num_gpus"] == 16 and measured[0]["measured"]["rows"] > 10
    code, out, _ = run(capsys, "report", *argv, "--measured", log, *FAST)
    assert code == 0 and "measured, 16 GPUs" in out and "/measured/busbw_GBps" in out


def test_compare_ib_and_roce(capsys):
    """compare: JSON schema, the switch swap as BoM deltas, unchanged lines folded and counted."""
    code, out, err = run(capsys, "compare", REFERENCE, ROCE, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "clusterplan.compare/1" and doc["labels"] == ["reference-128x-h100", "reference-roce-200g"]
    tco = next(h for h in doc["headlines"] if h["key"] == "cost.tco_usd")
    assert tco["changed"] and tco["deltas"][1] == pytest.approx(tco["values"][1] - tco["values"][0])
    assert doc["unchanged"]["bom"] == sum(not line["changed"] for line in doc["bom"]) > 0
    code, out, _ = run(capsys, "compare", REFERENCE, ROCE)
    assert code == 0 and "Headline figures" in out and f"{doc['unchanged']['bom']} unchanged lines folded" in out
    assert "SN5600" in out
    code, out, _ = run(capsys, "compare", REFERENCE, ROCE, "--format", "html")
    assert code == 0 and "<details>" in out and out.count("<svg") == 1


def test_compare_html_numbers_match_its_json(capsys):
    """Every figure and delta on the compare page equals compare --format json at its pointer, rounded as shown."""
    page = run(capsys, "compare", REFERENCE, ROCE, "--format", "html")[1]
    doc = json.loads(run(capsys, "compare", REFERENCE, ROCE, "--format", "json")[1])
    found = numbers(page)
    assert len(found) > 60
    for tag, pointer, value, text in found:
        expected = resolve(doc, pointer)
        assert value == repr(expected), pointer
        if tag in ("td", "span"):   # a value, or the delta under it
            assert shown_agrees(text, expected), (pointer, text, expected)


def test_compare_labels_use_names_and_disambiguate(capsys, tmp_path):
    """about.name labels a column; the same file twice gets two labels."""
    named = tmp_path / "n.toml"
    named.write_text('[about]\nname = "Quote A"\n')
    code, out, _ = run(capsys, "compare", str(named), REFERENCE, REFERENCE, "--format", "json")
    assert code == 0 and json.loads(out)["labels"][0] == "Quote A"
    assert len(set(json.loads(out)["labels"])) == 3


def test_sensitivity_json_is_reproducible(capsys):
    """Same seed, same document; the schema and the P10 <= P50 <= P90 order."""
    first = run(capsys, "sensitivity", *FAST, "--seed", "5", "--format", "json")[1]
    second = run(capsys, "sensitivity", *FAST, "--seed", "5", "--format", "json")[1]
    assert first == second
    doc = json.loads(first)
    assert doc["schema"] == "clusterplan.sensitivity/1" and doc["monte_carlo"]["samples"] == 2000
    spread = doc["monte_carlo"]["tco_usd"]
    assert spread["p10"] <= spread["p50"] <= spread["p90"]
    code, out, _ = run(capsys, "sensitivity", *FAST)
    assert code == 0 and "Tornado" in out and "prices.h100-sxm" in out


def test_plan_exports(capsys, tmp_path):
    """plan --format csv and md to stdout; xlsx to stdout when it is not a terminal."""
    code, out, _ = run(capsys, "plan", "--format", "csv")
    assert code == 0 and out.startswith("Summary\r\nFigure,Value,Unit\r\n")
    code, out, _ = run(capsys, "plan", "--format", "md")
    assert code == 0 and out.startswith("## 128 x h100-sxm") and "---:" in out


def test_xlsx_to_stdout_when_redirected(monkeypatch):
    """With stdout redirected (not a terminal), the xlsx bytes go there."""
    buffer = io.BytesIO()

    class Redirected(io.TextIOWrapper):
        def isatty(self):
            return False

    monkeypatch.setattr(sys, "stdout", Redirected(buffer))
    assert main(["plan", "--format", "xlsx"]) == 0
    assert buffer.getvalue()[:2] == b"PK"


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("argv, message", [
    (["compare", REFERENCE], "needs two or more scenario files, got 1"),
    (["compare"], "needs two or more scenario files, got 0"),
    (["sensitivity", "--samples", "0"], "--samples: must be between 1 and 1,000,000, got 0"),
    (["sensitivity", "--samples", "many"], "invalid int value"),
    (["report", "--samples", "0"], "--samples: must be between 1"),
    (["sensitivity", "--seed", "-1"], "--seed: must be >= 0"),
    (["sensitivity", "--offer", "aws-p5"], "--offer: unknown cloud id 'aws-p5'"),
    (["report", "--format", "pdf"], "invalid choice: 'pdf'"),
    (["plan", "--format", "xls"], "invalid choice: 'xls'"),
    (["compare", REFERENCE, ROCE, "--format", "csv"], "invalid choice: 'csv'"),
    (["report", "--measured", "missing.log"], "cannot read measurements"),
    (["compare", REFERENCE, "missing.toml"], "missing.toml: cannot read scenario"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    """Bad input: exit 2, one line on stderr naming the problem, nothing on stdout."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err


def test_xlsx_to_a_terminal_is_refused(capsys, monkeypatch):
    """Binary xlsx to a terminal: one line, exit 2, nothing written."""
    monkeypatch.setattr(sys, "stdout", Terminal())
    assert main(["plan", "--format", "xlsx"]) == 2
    assert sys.stdout.getvalue() == ""
    err = capsys.readouterr().err
    assert "xlsx is binary; write it with -o FILE" in err and len(err.strip().splitlines()) == 1


def test_measured_run_larger_than_the_cluster_is_refused(capsys, tmp_path):
    """A measured run of more ranks than the cluster has GPUs is bad input."""
    bench = tmp_path / "big.json"
    bench.write_text(json.dumps({"schema": "clusterplan.bench/1", "op": "all_reduce", "world_size": 512, "rows": [
        {"size_bytes": 1024, "out_of_place": {"time_s": 1e-5, "algbw_GBps": 0.1, "busbw_GBps": 0.2}}]}))
    code, out, err = run(capsys, "report", "--measured", str(bench), *FAST)
    assert code == 2 and out == "" and "the run has 512 ranks; the cluster has 128 GPUs" in err


@pytest.mark.parametrize("argv", [["report", *FAST], ["plan", "--format", "xlsx"], ["plan", "--format", "csv"],
                                  ["compare", REFERENCE, ROCE, "--format", "html"]])
def test_output_files_are_whole_or_absent(capsys, tmp_path, argv):
    """-o writes the whole file; a failing run leaves nothing behind."""
    target = tmp_path / "out"
    assert main([*argv, "-o", str(target)]) == 0 and target.stat().st_size > 1000
    failed = tmp_path / "failed"
    assert main([*argv, "--set", "cluster.num_nodes=0", "-o", str(failed)]) == 2
    assert not failed.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    capsys.readouterr()


def test_a_set_variant_is_named_by_its_overrides(capsys):
    """report's title and compare's sources name every --set, so two variants of one file are told apart."""
    code, out, _ = run(capsys, "report", REFERENCE, *FAST, "--set", "cluster.num_nodes=32")
    assert code == 0 and "<h1>clusterplan report: reference-128x-h100 with cluster.num_nodes=32</h1>" in out
    code, out, _ = run(capsys, "compare", REFERENCE, ROCE, "--set", "finance.years=5", "--format", "json")
    assert code == 0 and json.loads(out)["sources"] == [f"{REFERENCE} --set finance.years=5",
                                                        f"{ROCE} --set finance.years=5"]


def test_html_names_both_peaks_for_fp8_and_recomputation_only_when_done(capsys, tmp_path):
    """The report's chosen layout: MFU of BF16 dense peak and of the FP8 peak, labelled; no recomputation row
    where nothing is recomputed (issue 14)."""
    page = tmp_path / "r.html"
    code, _, err = run(capsys, "report", *FAST, "--set", 'workload.model="llama2-13b"', "--set",
                       'workload.precision="fp8"', "--set", 'workload.recompute="none"', "-o", str(page))
    assert code == 0, err
    text = re.sub(r"<[^>]+>", " ", page.read_text())
    assert "MFU (of BF16 dense peak)" in text and "Model FLOP/s of FP8 dense peak" in text
    assert "with recomputation" not in text


def test_compare_prints_utilization_with_its_source(capsys, tmp_path):
    """`compare` of the reference and a trace-derived scenario prints each utilization with where it came from."""
    traced = tmp_path / "traced.toml"
    traced.write_text('[finance]\nutilization_from_trace = "synthetic:jobs=200,load=0.5,seed=3"\n')
    code, out, err = run(capsys, "compare", REFERENCE, str(traced))
    assert code == 0, err
    headlines = " ".join(out[out.index("Utilization"):out.index("Bill of materials")].split())
    assert "80.0% (reference default)" in headlines and "(replay of" in headlines
