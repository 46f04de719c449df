"""Each endpoint's answer as plain data (status, body bytes, media type, headers), a pure function of a
``Job``, run in the server's worker processes (light and heavy work alike, serve/workers.py), so a ``Job`` and
an ``Answer`` are small picklable values sent between them and the server.

Bad input (a ``ConfigError``) and an infeasible design are a 422 answer with the CLI's one-line message;
anything else raises, and the caller logs it and answers 500.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from clusterplan.catalog import load_catalog
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.schema import FROZEN, as_table
from clusterplan.serve import views
from clusterplan.serve.controls import controls_html, offers_html
from clusterplan.serve.shell import shell
from clusterplan.serve.toml import dumps
from clusterplan.spec import load_spec

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
JSON_TYPE, HTML_TYPE = "application/json", "text/html; charset=utf-8"


@dataclass(**FROZEN)
class Job:
    """One request's work: the endpoint, the scenario file and the overrides (``pinned``: a pinned baseline's);
    ``problem``: why the page's link overrides were dropped (the page then shows the scenario itself)."""

    endpoint: str
    scenario: str | None
    overrides: tuple[str, ...] = ()
    pinned: tuple[str, ...] | None = None
    problem: str = ""


@dataclass(**FROZEN)
class Answer:
    status: int
    body: bytes
    media_type: str = JSON_TYPE
    headers: dict[str, str] = field(default_factory=dict)


def json_bytes(content: Any) -> bytes:
    """``content`` as Starlette's ``JSONResponse`` writes it, except that characters outside ASCII are escaped
    (so that no string, a lone surrogate included, can fail to encode)."""
    return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def error(status: int, field_name: str, message: str, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status=status, body=json_bytes({"error": {"field": field_name, "message": message}}),
                  headers=headers or {})


def answer(job: Job) -> Answer:
    """The endpoint's answer for ``job``: 200, or 422 for bad input or an infeasible design."""
    try:
        return ENDPOINTS[job.endpoint](job)
    except (ConfigError, InfeasiblePlan) as bad:
        return error(422, views.field(bad), str(bad))


def _page(job: Job) -> Answer:
    overrides, pinned, problem = job.overrides, job.pinned, job.problem
    try:
        body = views.report_html(job.scenario, overrides, pinned)
    except (ConfigError, InfeasiblePlan) as bad:   # a link with a bad value: the scenario, and why
        problem, overrides, pinned = str(bad), (), None
        body = views.report_html(job.scenario, overrides)
    spec = load_spec(job.scenario, list(overrides))
    html = shell(title=f"clusterplan serve: {views.title(spec, job.scenario)}",
                 source=job.scenario or "reference scenario",
                 controls=controls_html(as_table(spec), load_catalog(), overrides), report=body, problem=problem)
    return Answer(status=200, body=html.encode("utf-8", "backslashreplace"), media_type=HTML_TYPE,
                  headers={"Content-Security-Policy": CSP})


def _view(job: Job) -> Answer:
    body = views.report_html(job.scenario, job.overrides, job.pinned)
    table = as_table(load_spec(job.scenario, list(job.overrides)))
    return Answer(status=200, body=json_bytes({"html": body, "offers": offers_html(table, load_catalog())}))


def _toml(job: Job) -> Answer:
    spec = load_spec(job.scenario, list(job.overrides))
    header = (f"clusterplan scenario: {job.scenario or 'the reference scenario'}"
              + "".join(f"\n  --set {o}" for o in job.overrides))
    return Answer(status=200, body=dumps(as_table(spec), header=header).encode("utf-8", "backslashreplace"),
                  media_type="application/toml",
                  headers={"Content-Disposition": 'attachment; filename="scenario.toml"'})


ENDPOINTS = {
    "page": _page,
    "view": _view,
    "toml": _toml,
    "plan": lambda job: Answer(status=200, body=json_bytes(views.plan_json(job.scenario, job.overrides))),
    "train": lambda job: Answer(status=200, body=json_bytes(views.train_json(job.scenario, job.overrides))),
    "compare": lambda job: Answer(status=200, body=json_bytes(
        views.compare_json(job.scenario, job.pinned or (), job.overrides))),
}
