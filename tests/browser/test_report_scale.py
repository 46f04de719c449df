"""The report and compare pages from 8 to 32,768 GPUs in a 1,400-pixel window: readable at every size.

What a reader would see as broken is measured in the browser with the real font: the page wider than the
window, a label running out of its chart, two labels on top of each other, percentile labels over the
histogram's bars, a rack chart of hundreds of slivers, a layout cell wrapping to six lines, ten cloud lines
in near-identical colours, a title that hides the overrides. Screenshots of each size go to
$CLUSTERPLAN_ARTIFACTS (or a temporary folder): report-128.png, report-1024.png, report-16384.png (the
owning-vs-renting and power sections) and compare-4.png (compare of the four examples); docs/ keeps three.
"""

import os
from pathlib import Path

import pytest

from test_report_browser import ROOT, Opened, render

WINDOW = {"width": 1400, "height": 900}
WORKLOAD = ["--set", 'workload.model="llama2-13b"', "--set", 'workload.tokens="2T"']
SIZES = {8: ["--set", "cluster.num_nodes=1"], 128: [], 1024: ["--set", "cluster.num_nodes=128"],
         16384: ["--set", "cluster.num_nodes=2048", "--set", "network.tiers=3"],
         32768: ["--set", "cluster.num_nodes=4096", "--set", "network.tiers=3"]}
SHOTS = (128, 1024, 16384)
MOST_BARS = 24   # report/html.py MOST_RACKS

# Every chart's text boxes, and where they overlap each other or leave the picture.
CHART_TEXT = """() => [...document.querySelectorAll('figure.chart')].map(f => {
    const svg = f.querySelector('svg'), frame = svg.getBoundingClientRect();
    const boxes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => {
        const b = t.getBoundingClientRect();
        return {text: t.firstChild ? t.firstChild.nodeValue || t.textContent : '', cls: t.getAttribute('class') || '', left: b.left, right: b.right,
                top: b.top, bottom: b.bottom};
    });
    const outside = boxes.filter(b => b.left < frame.left - 1 || b.right > frame.right + 1 ||
                                      b.top < frame.top - 1 || b.bottom > frame.bottom + 1).map(b => b.text);
    const overlaps = [];
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 2) overlaps.push([a.text, b.text]);
    }
    const cut = [...svg.querySelectorAll('.legend text')].filter(t => t.querySelector('title') &&
        t.firstChild.nodeValue !== t.querySelector('title').textContent).map(t => t.firstChild.nodeValue);
    return {chart: f.dataset.chart, outside, overlaps: overlaps.slice(0, 5), cut};
})"""

HISTOGRAM_LABELS_OVER_BARS = """() => {
    const svg = document.querySelector('figure[data-chart="histogram"] svg');
    const bars = [...svg.querySelectorAll('rect')].map(r => r.getBoundingClientRect());
    return [...svg.querySelectorAll('text.note')].filter(t => {
        const b = t.getBoundingClientRect();
        return bars.some(r => Math.min(b.right, r.right) - Math.max(b.left, r.left) > 0 &&
                              Math.min(b.bottom, r.bottom) - Math.max(b.top, r.top) > 0);
    }).map(t => t.textContent);
}"""

OVERFLOWING = """() => ({page: document.documentElement.scrollWidth,
    boxes: [...document.querySelectorAll('.wide')].filter(d => d.scrollWidth > d.clientWidth + 1)
        .map(d => (d.closest('section') || {}).id)})"""


def artifacts(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("CLUSTERPLAN_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def fit_problems(opened: Opened) -> list:
    """Horizontal scroll: the page wider than the window, or a table scrolling inside its box."""
    found = opened.page.evaluate(OVERFLOWING)
    return [] if found["page"] <= WINDOW["width"] and found["boxes"] == [] else [found]


def chart_problems(opened: Opened) -> list:
    """Every chart: a label outside the picture (legends included), two labels overlapping, a legend name cut."""
    return [chart for chart in opened.page.evaluate(CHART_TEXT)
            if chart["outside"] or chart["overlaps"] or chart["cut"]]


@pytest.mark.parametrize("gpus", sorted(SIZES))
def test_report_reads_at_every_size(browser, gpus, tmp_path_factory):
    """8 to 32,768 GPUs: fits the window, labels apart and inside, racks aggregated, title says --set."""
    html = render("report", *WORKLOAD, *SIZES[gpus], "--samples", "2000")
    opened = Opened(browser, html)
    opened.page.set_viewport_size(WINDOW)
    try:
        assert opened.errors == [] and opened.requests == []
        problems = fit_problems(opened) + chart_problems(opened)
        over_bars = opened.page.evaluate(HISTOGRAM_LABELS_OVER_BARS)
        if over_bars:
            problems.append({"histogram labels over the bars": over_bars})
        title = opened.page.locator("h1").inner_text()
        if not ("with workload.model=" in title and all(item in title for item in SIZES[gpus][1::2])):
            problems.append({"title without its overrides": title})
        bars = opened.page.locator('figure[data-chart="power"] rect').count()
        if not 0 < bars <= MOST_BARS:
            problems.append({"rack bars": bars})
        # each layout of the job-size table in at most two lines (14 px at line-height 1.45, plus padding)
        heights = opened.page.evaluate("""() => [...document.querySelectorAll('#training td')]
            .filter(td => td.textContent.startsWith('tp ')).map(td => td.getBoundingClientRect().height)""")
        if not heights or max(heights) > 3 * 20.3 + 8:
            problems.append({"layout cell heights": heights})
        # the cloud lines: at most one coloured line per pricing mode, each named where it ends
        lines = opened.page.evaluate("""() => [...document.querySelectorAll(
            'figure[data-chart="ownership"] path[stroke-dasharray]')].map(p => p.getAttribute('stroke'))""")
        coloured = [colour for colour in lines if colour != "#b8b8b8"]
        named = opened.page.locator('figure[data-chart="ownership"] .end-label').count()
        if not (0 < len(coloured) <= 4 and len(set(coloured)) == len(coloured) and named == len(coloured) + 1):
            problems.append({"cloud lines (colours, end labels)": (coloured, named)})
        assert problems == [], "\n".join(map(str, problems))
        if gpus not in SHOTS:
            return
        shot = artifacts(tmp_path_factory) / f"report-{gpus}.png"
        top = opened.page.locator("section#cloud").bounding_box()
        bottom = opened.page.locator("section#power").bounding_box()
        opened.page.screenshot(path=str(shot), full_page=True, clip={
            "x": top["x"] - 8, "y": top["y"], "width": top["width"] + 16,
            "height": bottom["y"] + bottom["height"] - top["y"]})
        assert shot.stat().st_size > 20_000
    finally:
        opened.page.close()


def test_compare_of_four_fits_the_window(browser, tmp_path_factory):
    """compare with the four examples: one column per scenario (the delta under each value), no wider than 1,400 px."""
    examples = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "examples").glob("*.toml"))
    assert len(examples) >= 4
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        html = render("compare", *examples[:4], "--format", "html")
    finally:
        os.chdir(cwd)
    opened = Opened(browser, html)
    opened.page.set_viewport_size(WINDOW)
    try:
        assert fit_problems(opened) + chart_problems(opened) == []
        assert opened.page.locator("section#headlines table").first.locator("thead th").count() == 1 + 4
        shot = artifacts(tmp_path_factory) / "compare-4.png"
        opened.page.screenshot(path=str(shot), clip={"x": 0, "y": 0, **WINDOW})
        assert shot.stat().st_size > 20_000
    finally:
        opened.page.close()
