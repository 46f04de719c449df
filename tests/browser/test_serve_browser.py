"""The live page in headless Chromium against the real server: every figure shown is the CLI's, the link
restores the view, a bad value is shown beside its control while the last view stays, and no request leaves
the machine.

The server is `clusterplan serve --port 0` in a subprocess (a free loopback port, the URL read from its first
line); the browser is the system chromium through playwright (never a downloaded one). The page's screenshot
is saved to $CLUSTERPLAN_ARTIFACTS (or a temporary folder) as serve.png (docs/serve.png in the README).
"""

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from clusterplan import serve
from clusterplan.cli.main import main
from clusterplan.report.figures import resolve

pytestmark = pytest.mark.skipif(serve.missing() is not None, reason="the serve extra is not installed")
ROOT = Path(__file__).parents[2]
# Each step: the control, how to set it, and the --set the CLI is given for the same change.
STEPS = [("cluster.gpu", "select", "h200-sxm", 'cluster.gpu="h200-sxm"'),
         ("cluster.num_nodes", "fill", "24", "cluster.num_nodes=24"),
         ("facility.electricity_usd_per_kwh", "fill", "0.08", "facility.electricity_usd_per_kwh=0.08"),
         ("network.fabric", "select", "ib-ndr400", 'network.fabric="ib-ndr400"'),
         ("workload.model", "select", "llama2-13b", 'workload.model="llama2-13b"'),
         ("workload.tokens", "fill", "2T", 'workload.tokens="2T"')]


@pytest.fixture(scope="module")
def server():
    """The real server on a free loopback port; its URL."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen([sys.executable, "-m", "clusterplan", "serve", "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    try:
        assert line.startswith("clusterplan serve: http://127.0.0.1:"), line
        yield line.split()[2]
    finally:
        process.terminate()
        process.wait(timeout=30)


class Live:
    """A tab on the live page that records console errors and aborts (and records) any request off the server."""

    def __init__(self, browser, url: str):
        self.origin, self.errors, self.outside = url.rstrip("/"), [], []
        self.page = browser.new_page(viewport={"width": 1280, "height": 820})
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        if url.startswith((self.origin + "/", "data:", "about:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready='1']")

    def set(self, key: str, how: str, value: str) -> None:
        control = self.page.locator(f'[name="{key}"]')
        if how == "select":
            control.select_option(value)
        else:
            control.fill(value)
            control.press("Tab")   # leaving the field fires its change, as a person's edit does

    def wait(self, updates: int) -> None:
        """Until the page has swapped in its ``updates``-th answer (the page's CSP forbids polling by eval)."""
        self.page.wait_for_selector(f"body[data-updates='{updates}']", state="attached")

    def updates(self) -> int:
        return int(self.page.evaluate("document.body.dataset.updates || '0'"))

    def figures(self) -> dict[str, str]:
        """Every number the report shows: its JSON pointer into the plan and its exact value (Python repr)."""
        return self.page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
            '#report [data-pointer^="/plan/"]')].map(e => [e.dataset.pointer, e.dataset.value]))""")


def cli_plan(overrides: list[str]) -> dict:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["plan", *[arg for o in overrides for arg in ("--set", o)], "--format", "json"]) == 0
    return json.loads(buffer.getvalue())


def assert_same(shown: dict[str, str], document: dict) -> None:
    """Each figure shown equals the CLI document's number at the same pointer, to the last digit."""
    assert len(shown) > 50
    for path, text in shown.items():
        expected = resolve(document, path.removeprefix("/plan"))
        if text == "None":
            assert expected is None, path
        else:
            assert float(text) == expected, path


def test_controls_drive_the_report_like_the_cli(server, browser, tmp_path_factory):
    """Each change (GPU, nodes, electricity, fabric, workload, tokens) re-renders every figure as `plan --set`."""
    live = Live(browser, server)
    try:
        live.open(server)
        overrides = []
        for step, (key, how, value, override) in enumerate(STEPS, start=1):
            live.set(key, how, value)
            live.wait(step)
            overrides.append(override)
            shown = live.figures()
            assert_same(shown, cli_plan(overrides))
        assert "/plan/training/time_to_train_s" in shown and "/plan/training/cost_to_train_usd" in shown
        card = live.page.locator('.card .v[data-pointer="/plan/cost/tco_usd"]').inner_text()
        assert card.startswith("$") and live.page.locator("#c-cluster\\.num_nodes").input_value() == "24"
        folder = Path(os.environ.get("CLUSTERPLAN_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
        folder.mkdir(parents=True, exist_ok=True)
        live.page.evaluate("() => { window.scrollTo(0, 0); document.getElementById('controls').scrollTo(0, 0); }")
        live.page.screenshot(path=str(folder / "serve.png"))
        assert (folder / "serve.png").stat().st_size > 30_000

        # The link restores the view: a fresh tab on the same URL shows the same figures and controls.
        link = live.page.url
        assert "set=cluster.num_nodes%3D24" in link
        again = Live(browser, server)
        try:
            again.open(link)
            assert again.figures() == shown
            assert again.page.locator("#c-network\\.fabric").input_value() == "ib-ndr400"
            assert again.page.locator("#c-workload\\.tokens").input_value() == "2T"
            assert again.errors == [] and again.outside == []
        finally:
            again.page.close()

        # A bad value: the CLI's line beside the control, the last good view kept, the URL unchanged.
        before = live.updates()
        live.set("cluster.num_nodes", "fill", "-4")
        error = live.page.locator('.control.bad[data-control="cluster.num_nodes"] .error')
        error.wait_for()
        assert error.inner_text() == "--set cluster.num_nodes=-4: cluster.num_nodes: must be > 0, got -4"
        assert live.figures() == shown and live.updates() == before and live.page.url == link

        # Fixing it clears the error; pinning shows compare's deltas against the pinned baseline.
        live.set("cluster.num_nodes", "fill", "24")
        live.wait(before + 1)
        assert live.page.locator(".control.bad").count() == 0
        live.page.locator("#pin").click()
        live.wait(before + 2)
        live.set("facility.electricity_usd_per_kwh", "fill", "0.16")
        live.wait(before + 3)
        assert "Opex: electricity" in live.page.locator("#compare-headlines").inner_text()
        assert "pin=" in live.page.url and live.page.locator("#compare-headlines td").count() > 10
        assert [e for e in live.errors if "422" not in e] == [] and live.outside == []
    finally:
        live.page.close()
