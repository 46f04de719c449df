"""The HTML report in headless Chromium: no console errors, every chart drawn, no request leaves the page.

Driven by the playwright package against the system chromium (never a downloaded browser); skipped
where either is missing. The reference report's screenshot is saved to $CLUSTERPLAN_ARTIFACTS (or a
temporary folder) as report-reference.png (the whole page) and report-reference-top.png (its first
2,960 pixels, the picture in the README); the training section of the reference with a workload as
report-training.png.
"""

import io
import os
from pathlib import Path

import pytest

from clusterplan.cli.main import main


ROOT = Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
CHARTS = {"capex", "opex", "ownership", "power", "fabric", "collectives", "tornado-tco_usd",
          "tornado-breakeven_months", "histogram"}
WORKLOAD_CHARTS = {"training-memory"}                      # with a [workload]
BUDGET_CHARTS = {"training-time", "training-cost"}         # with a [workload] and a token budget
WORKLOAD = ['workload.model="llama2-13b"', 'workload.tokens="2T"']
CASES = [(path, []) for path in EXAMPLES] + [(ROOT / "examples" / "reference-128x-h100.toml", WORKLOAD)]


def expected_charts(path: Path, overrides: list[str]) -> set[str]:
    """The charts a scenario's report must draw: the training ones only where it has a workload."""
    from clusterplan.spec import load_spec

    workload = load_spec(path, overrides).workload
    return (CHARTS | (WORKLOAD_CHARTS if workload.defined else set())
            | (BUDGET_CHARTS if workload.defined and workload.tokens else set()))


def render(*argv) -> str:
    """What the command writes to stdout, run in process."""
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(list(argv)) == 0
    return buffer.getvalue()


class Opened:
    """A page with the HTML loaded, and what it tried: console errors, requests, dialogs."""

    def __init__(self, browser, html: str):
        self.errors, self.requests, self.dialogs = [], [], []
        self.page = browser.new_page(viewport={"width": 1100, "height": 900})
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.route("**/*", self._route)
        self.page.set_content(html, wait_until="load")

    def _route(self, route):
        url = route.request.url
        if url.startswith(("data:", "about:")):
            route.continue_()
        else:
            self.requests.append(url)
            route.abort()

    def charts(self) -> list[dict]:
        return self.page.evaluate("""() => [...document.querySelectorAll('figure.chart')].map(f => {
            const svg = f.querySelector('svg'), box = svg.getBoundingClientRect();
            return {chart: f.dataset.chart, marks: svg.querySelectorAll('rect, path, circle, line').length,
                    texts: svg.querySelectorAll('text').length, width: box.width, height: box.height,
                    drawn: [...svg.querySelectorAll('rect, path, circle')].filter(e => {
                        const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length};
        })""")


def check_page(opened: Opened, charts: set[str]) -> None:
    assert opened.errors == [] and opened.requests == [] and opened.dialogs == []
    found = opened.charts()
    assert {c["chart"] for c in found} == charts
    for chart in found:
        assert chart["marks"] > 0 and chart["drawn"] > 0 and chart["texts"] > 2, chart
        assert chart["width"] > 100 and chart["height"] > 100, chart


@pytest.mark.parametrize("example, overrides", CASES,
                         ids=[p.stem + ("-with-workload" if o else "") for p, o in CASES])
def test_every_example_report_renders(browser, example, overrides, tmp_path_factory):
    """Each example's report (and the reference with a workload): no console error, every chart drawn, no request."""
    sets = [arg for item in overrides for arg in ("--set", item)]
    opened = Opened(browser, render("report", os.path.relpath(example), *sets, "--samples", "5000"))
    charts = expected_charts(example, overrides)
    try:
        check_page(opened, charts)
        assert opened.page.locator("h2").count() == 9 + bool(charts & WORKLOAD_CHARTS)
        folder = Path(os.environ.get("CLUSTERPLAN_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
        folder.mkdir(parents=True, exist_ok=True)
        if example.stem == "reference-128x-h100" and not overrides:
            shot, top = folder / "report-reference.png", folder / "report-reference-top.png"
            opened.page.screenshot(path=str(shot), full_page=True)
            opened.page.screenshot(path=str(top), full_page=True, clip={"x": 0, "y": 0, "width": 1100, "height": 2960})
            assert shot.stat().st_size > 50_000 and top.stat().st_size > 20_000
        if charts & WORKLOAD_CHARTS:
            shot = folder / "report-training.png"
            opened.page.locator("section#training").screenshot(path=str(shot))
            assert shot.stat().st_size > 20_000
    finally:
        opened.page.close()


def test_compare_page_renders(browser):
    """The compare page: its chart drawn, the folded rows expandable, nothing fetched."""
    opened = Opened(browser, render("compare", str(ROOT / "examples/reference-128x-h100.toml"),
                                    str(ROOT / "examples/reference-roce-200g.toml"), "--format", "html"))
    try:
        check_page(opened, {"compare-tco"})
        opened.page.locator("details summary").first.click()
        assert opened.page.locator("details[open] table").count() == 1
    finally:
        opened.page.close()


def test_markup_in_the_scenario_is_text(browser, tmp_path):
    """A name with <script> and notes with an onerror image are shown as text; neither runs."""
    path = tmp_path / "evil.toml"
    path.write_text('[about]\nname = "<script>window.pwned = 1; alert(1)</script>"\n'
                    'notes = "<img src=x onerror=\\"window.pwned = 2\\"> <b>bold?</b>"\n')
    for html in (render("report", str(path), "--samples", "500"),
                 render("compare", str(path), str(path), "--format", "html")):
        opened = Opened(browser, html)
        try:
            assert opened.page.evaluate("window.pwned") is None and opened.dialogs == [] and opened.requests == []
            assert "<script>window.pwned = 1; alert(1)</script>" in opened.page.locator("h1").inner_text()
            assert opened.page.locator("main script, header script, img, header b").count() == 0
        finally:
            opened.page.close()
    opened = Opened(browser, render("report", str(path), "--samples", "500"))
    try:
        assert '<img src=x onerror="window.pwned = 2"> <b>bold?</b>' in opened.page.locator(".notes").inner_text()
    finally:
        opened.page.close()


BROKEN_WORDS = """() => [...document.querySelectorAll('th')].flatMap(th => {
    const broken = [], walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.data.matchAll(/[^\\s\\-\\/]+/g)) {
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            const lines = new Set([...range.getClientRects()].filter(box => box.width > 0)
                                  .map(box => Math.round(box.top)));
            if (lines.size > 1) broken.push(match[0]);
        }
    }
    return broken;
})"""


@pytest.mark.parametrize("width", [1100, 700])
def test_table_headers_never_break_inside_a_word(browser, width):
    """Issue 30: no header cell of the report or of a four-way compare splits a word over two lines ("Categor y",
    "Qt y"); headers wrap between words only, at the report's width and a narrow one."""
    scenarios = [str(ROOT / "examples" / name) for name in ("reference-128x-h100.toml", "reference-roce-200g.toml",
                                                            "starter-32.toml", "hgx-b200-1152.toml")]
    pages = [render("report", os.path.relpath(EXAMPLES[0]), "--samples", "2000"),
             render("compare", *scenarios, "--format", "html")]
    for html in pages:
        opened = Opened(browser, html)
        try:
            opened.page.set_viewport_size({"width": width, "height": 900})
            assert opened.page.locator("th").count() > 10
            assert opened.page.evaluate(BROKEN_WORDS) == []
        finally:
            opened.page.close()
