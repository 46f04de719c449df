"""The live page around the report: the controls, the toolbar and the report's own sections and styles.

The report part is report/page.py's ``sections`` of report/html.py's renderers, styled by report/page.py's
``CSS``; this module adds only the frame (controls beside the report) and loads the page's one script.
"""

from __future__ import annotations

from clusterplan import __version__
from clusterplan.report.page import CSS
from clusterplan.report.svg import esc


def shell(*, title: str, source: str, controls: str, report: str, problem: str = "") -> str:
    """The whole page; ``problem``: why the link's overrides were not applied (shown above the report)."""
    banner = f'<p class="problem" role="alert">{esc(problem)}</p>' if problem else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
        f'<style>{CSS}</style><link rel="stylesheet" href="/static/app.css">'
        f'<script src="/static/app.js" defer></script></head><body class="live">'
        f'<header><h1>{esc(title)}</h1><p class="sub">{esc(source)} · clusterplan {esc(__version__)} · '
        f'every figure is <code>clusterplan plan</code> with the same <code>--set</code> overrides</p></header>'
        f'<div class="layout"><aside id="controls"><form id="inputs" autocomplete="off">{controls}</form></aside>'
        f'<div class="main"><div class="toolbar">'
        f'<button type="button" id="pin">Pin as baseline</button>'
        f'<button type="button" id="reset">Reset</button>'
        f'<a id="toml" href="/scenario.toml" download="scenario.toml">Scenario TOML</a>'
        f'<a id="api-plan" href="/api/plan">plan JSON</a><a id="api-train" href="/api/train">train JSON</a>'
        f'<a id="api-compare" href="/api/compare?pinned=1">compare JSON</a>'
        f'<span id="status" class="muted" aria-live="polite"></span></div>'
        f'<div id="problem">{banner}</div><main id="report">{report}</main></div></div></body></html>\n')
