"""The report's sizing section in headless Chromium: the frontier chart drawn, no console error, no request.

Its screenshot is saved to $CLUSTERPLAN_ARTIFACTS (or a temporary folder) as report-size.png.
"""

import io
import os
from contextlib import redirect_stdout
from pathlib import Path

from clusterplan.cli.main import main

ROOT = Path(__file__).parents[2]
SIZE = ('\n[size]\nmodel = "llama3-70b"\ntokens = "2T"\ngpus = ["h100-sxm", "h200-sxm", "b200"]\n'
        'fabrics = ["ib-ndr400"]\nmax_gpus = 4096\nstart = "2026-12-04"\ndeadline_days = 120\nbudget_usd = "3M"\n')


def test_the_sizing_section_renders(browser, tmp_path, tmp_path_factory):
    """Every modelled candidate is a visible point, the frontier a path, the deadline and budget lines drawn."""
    scenario = tmp_path / "sized.toml"
    scenario.write_text((ROOT / "examples" / "reference-128x-h100.toml").read_text(encoding="utf-8") + SIZE)
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["report", str(scenario), "--samples", "2000"]) == 0
    errors, requests = [], []
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda route: (requests.append(route.request.url), route.abort())
               if not route.request.url.startswith(("data:", "about:")) else route.continue_())
    try:
        page.set_content(buffer.getvalue(), wait_until="load")
        chart = page.locator('figure[data-chart="size-frontier"] svg')
        box = chart.bounding_box()
        assert box["width"] > 500 and box["height"] > 300
        points = page.evaluate("""() => [...document.querySelectorAll(
            'figure[data-chart="size-frontier"] circle[data-pointer^="/size/candidates/"]')].filter(e => {
            const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length""")
        paths = page.locator('figure[data-chart="size-frontier"] path').count()
        assert points >= 50 and paths >= 3            # the frontier, the deadline and the budget
        assert errors == [] and requests == []
        folder = Path(os.environ.get("CLUSTERPLAN_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
        folder.mkdir(parents=True, exist_ok=True)
        shot = folder / "report-size.png"
        page.locator("section#size").screenshot(path=str(shot))
        assert shot.stat().st_size > 20_000
    finally:
        page.close()
