"""The Starlette application: the page, its fragment, the JSON APIs and the scenario TOML (docs/serve.md).

Each handler reads the overrides (``set``, and ``pin`` for a pinned baseline) from the query or from a JSON
body of at most ``MAX_BODY_BYTES``, computes in a worker thread with ``views`` (pure functions, so concurrent
requests are safe) and answers JSON, with the computing time in a ``Server-Timing`` header. Bad input is
HTTP 422 ``{"error": {"field", "message"}}`` with the CLI's one-line message; nothing else escapes: an
unexpected error is a one-line 500 and never a traceback.
Starlette is imported here, inside ``create_app``, so that the CLI loads without the ``serve`` extra.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from clusterplan.catalog import load_catalog
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.serve import views
from clusterplan.serve.controls import controls_html, offers_html
from clusterplan.serve.shell import shell
from clusterplan.serve.toml import dumps
from clusterplan.schema import as_table
from clusterplan.spec import load_spec

MAX_BODY_BYTES = 64 * 1024
MAX_OVERRIDES, MAX_OVERRIDE_CHARS = 64, 2000
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}


class BadRequest(Exception):
    """A request the server cannot read: its status, field and message."""

    def __init__(self, status: int, field: str, message: str):
        super().__init__(message)
        self.status, self.field, self.message = status, field, message


def _overrides(raw: Any, name: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise BadRequest(422, name, f"{name}: expected a list of section.key=value strings")
    if len(raw) > MAX_OVERRIDES or any(len(item) > MAX_OVERRIDE_CHARS for item in raw):
        raise BadRequest(422, name, f"{name}: at most {MAX_OVERRIDES} overrides of {MAX_OVERRIDE_CHARS} characters")
    return tuple(raw)


async def _inputs(request) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """(overrides, pinned baseline or None) from the query string or a JSON body."""
    if request.method == "GET":
        query = request.query_params
        pinned = "pin" in query or query.get("pinned") == "1"
        return (_overrides(query.getlist("set"), "set"),
                _overrides(query.getlist("pin"), "pin") if pinned else None)
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        raise BadRequest(413, "", f"request body over {MAX_BODY_BYTES} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise BadRequest(413, "", f"request body over {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest(422, "", "request body: not JSON") from None
    if not isinstance(data, dict):
        raise BadRequest(422, "", 'request body: expected an object {"set": [...]}')
    pin = data.get("pin")
    return _overrides(data.get("set", []), "set"), (None if pin is None else _overrides(pin, "pin"))


def create_app(scenario: str | None = None, *, allowed_hosts: Sequence[str] | None = None):
    """The application for ``scenario`` (a TOML path, or None for the reference scenario); with
    ``allowed_hosts``, a request naming another ``Host`` is refused (400), so that a web page elsewhere
    cannot reach a loopback server through a DNS name of its own."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    catalog = load_catalog()
    views.planned(scenario, ())   # a bad or infeasible scenario stops the server before it listens

    def error(status: int, field: str, message: str) -> JSONResponse:
        return JSONResponse({"error": {"field": field, "message": message}}, status_code=status)

    def handler(answer: Callable[..., Response]):
        async def endpoint(request):
            try:
                overrides, pinned = await _inputs(request)
                started = time.perf_counter()
                response = await run_in_threadpool(answer, overrides, pinned)
                response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1e3:.2f}"
                return response
            except BadRequest as bad:
                return error(bad.status, bad.field, bad.message)
            except (ConfigError, InfeasiblePlan) as bad:
                return error(422, views.field(bad), str(bad))
            except Exception as unexpected:   # never a traceback to the client
                return error(500, "", f"internal error: {type(unexpected).__name__} (see the server's log)")
        return endpoint

    def page(overrides, pinned) -> Response:
        problem = ""
        try:
            body = views.report_html(scenario, overrides, pinned)
        except (ConfigError, InfeasiblePlan) as bad:   # a link with a bad value: the scenario, and why
            problem, overrides, pinned = str(bad), (), None
            body = views.report_html(scenario, overrides)
        spec = load_spec(scenario, list(overrides))
        html = shell(title=f"clusterplan serve: {views.title(spec, scenario)}", source=scenario or "reference scenario",
                     controls=controls_html(as_table(spec), catalog, overrides), report=body, problem=problem)
        return HTMLResponse(html, headers={"Content-Security-Policy": CSP})

    def view(overrides, pinned) -> Response:
        body = views.report_html(scenario, overrides, pinned)
        table = as_table(load_spec(scenario, list(overrides)))
        return JSONResponse({"html": body, "offers": offers_html(table, catalog)})

    def toml(overrides, pinned) -> Response:
        spec = load_spec(scenario, list(overrides))
        header = (f"clusterplan scenario: {scenario or 'the reference scenario'}"
                  + "".join(f"\n  --set {o}" for o in overrides))
        return Response(dumps(as_table(spec), header=header), media_type="application/toml",
                        headers={"Content-Disposition": 'attachment; filename="scenario.toml"'})

    def static(request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return error(404, "", "no such file")
        text = (resources.files("clusterplan.serve") / "static" / name).read_text(encoding="utf-8")
        return Response(text, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    both = ["GET", "POST"]
    routes = [
        Route("/", handler(page), methods=["GET"]),
        Route("/view", handler(view), methods=both),
        Route("/scenario.toml", handler(toml), methods=["GET"]),
        Route("/api/plan", handler(lambda o, p: JSONResponse(views.plan_json(scenario, o))), methods=both),
        Route("/api/train", handler(lambda o, p: JSONResponse(views.train_json(scenario, o))), methods=both),
        Route("/api/compare", handler(lambda o, p: JSONResponse(views.compare_json(scenario, p or (), o))),
              methods=both),
        Route("/static/{name}", static, methods=["GET"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))] if allowed_hosts else []
    return Starlette(routes=routes, middleware=middleware)
