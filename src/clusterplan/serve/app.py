"""The Starlette application: the page, its fragment, the JSON APIs and the scenario TOML (docs/serve.md).

Each handler reads the overrides (``set``, and ``pin`` for a pinned baseline) from the query or from a JSON
body of at most ``MAX_BODY_BYTES`` read within ``BODY_TIMEOUT_S``, then, in a thread: refuses any override
naming a file the operator did not name (``files``) and any input over its known cost (``budget``), and sorts
the work into light and heavy, each answered by its own pool of worker processes under a deadline
(``workers``): no model runs in the server's process, so none can hold it. A JSON body is read by the bounded
parser (clusterplan/parsing.py), an override by spec's. Bad input is HTTP 422
``{"error": {"field", "message"}}`` with the CLI's one-line message; every other error is JSON too, and
every 5xx is logged with its traceback on stderr, never sent.
Starlette is imported here, inside ``create_app``, so that the CLI loads without the ``serve`` extra.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from importlib import resources
from typing import Any

from clusterplan.errors import ConfigError
from clusterplan.parsing import parse_json
from clusterplan.serve import budget, views
from clusterplan.serve.answers import Answer, Job, error
from clusterplan.serve.files import operator_files
from clusterplan.serve.guard import LOOPBACK_NAMES, Guard
from clusterplan.serve.workers import Busy, Crashed, OverBudget, Pools, Workers, default_size
from clusterplan.spec import Scenario, load_scenario

MAX_BODY_BYTES = 64 * 1024
BODY_TIMEOUT_S = 10.0          # the whole body must arrive within this
MAX_OVERRIDES, MAX_OVERRIDE_CHARS = 64, 2000
DEADLINE_S, WAIT_S, MAX_WAITING = 20.0, 10.0, 64   # heavy work: run at most, wait at most, queued at most
LIGHT_WORKERS, LIGHT_DEADLINE_S, LIGHT_MAX_WAITING = 2, 5.0, 128   # light work: processes, run at most, queued
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
log = logging.getLogger("clusterplan.serve")


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
    for number, item in enumerate(raw, start=1):
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:   # a lone surrogate, as JSON's "\ud800" gives
            raise BadRequest(422, name, f"{name}: override {number} is not Unicode text (a lone surrogate)") from None
    return tuple(raw)


def _json(body: bytes) -> Any:
    """A request body read by the bounded parser (clusterplan/parsing.py ``parse_json``), its encoding detected
    as ``json.loads`` detects a body's (UTF-8, with or without a byte-order mark, UTF-16 or UTF-32)."""
    return parse_json(body.decode(json.detect_encoding(body), "surrogatepass"), source="request body")


async def _body(request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        raise BadRequest(413, "", f"request body over {MAX_BODY_BYTES} bytes")
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/json":
        raise BadRequest(415, "Content-Type", "a POST body must be JSON (Content-Type: application/json)")
    body = b""
    try:
        with _deadline(BODY_TIMEOUT_S):
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise BadRequest(413, "", f"request body over {MAX_BODY_BYTES} bytes")
    except TimeoutError:
        raise BadRequest(408, "", f"request body not received within {BODY_TIMEOUT_S:.0f} s") from None
    return body


def _deadline(seconds: float):
    import anyio
    return anyio.fail_after(seconds)


async def _inputs(request) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """(overrides, pinned baseline or None) from the query string or a JSON body."""
    if request.method == "GET":
        query = request.query_params
        pinned = "pin" in query or query.get("pinned") == "1"
        return (_overrides(query.getlist("set"), "set"),
                _overrides(query.getlist("pin"), "pin") if pinned else None)
    try:
        data = _json(await _body(request) or b"{}")
    except ValueError:   # not JSON, not text in a JSON encoding, or nested past the bounded parser's limit
        raise BadRequest(422, "", "request body: not JSON (or nested too deeply)") from None
    if not isinstance(data, dict):
        raise BadRequest(422, "", 'request body: expected an object {"set": [...]}')
    pin = data.get("pin")
    return _overrides(data.get("set", []), "set"), (None if pin is None else _overrides(pin, "pin"))


class Triage:
    """What may run and where: the file guard and the known-cost limits on the scenario with each set of
    overrides, and whether the work is heavy."""

    def __init__(self, scenario: str | None, allow_files: Iterable[str]):
        self.scenario = scenario
        self.own = load_scenario(scenario).spec
        self.files = operator_files(self.own, allow_files)

    def _checked(self, overrides: tuple[str, ...]) -> bool:
        loaded: Scenario = load_scenario(self.scenario, list(overrides))   # overrides read by the bounded parser
        spec = loaded.spec
        with loaded.located():
            self.files.check(spec)
            own = self.own.finance
            if (spec.finance.utilization_from_trace, spec.finance.utilization_policy) != (
                    own.utilization_from_trace, own.utilization_policy):
                budget.refuse_costly(spec)
        return budget.heavy(spec)

    def __call__(self, job: Job) -> tuple[Job, bool]:
        """(the job to run, whether it is heavy); a ConfigError for input the server refuses (the page is
        then the scenario itself, with the reason shown)."""
        try:
            heavy = [self._checked(o) for o in (job.overrides, job.pinned) if o is not None]
        except ConfigError as refused:
            if job.endpoint != "page":
                raise
            return replace(job, overrides=(), pinned=None, problem=str(refused)), self._checked(())
        return job, any(heavy) or job.endpoint == "train"


def create_app(scenario: str | None = None, *, hosts: Iterable[str] = LOOPBACK_NAMES,
               allow_files: Iterable[str] = (), workers: int | None = None):
    """The application for ``scenario`` (a TOML path, or None for the reference scenario), answering requests
    whose Host is one of ``hosts``; requests may name the files of ``allow_files`` (and the scenario's own) in
    file-valued keys; heavy work runs in ``workers`` processes (default: one per core but one, 1 to 4).
    ``app.state.workers.close()`` stops them."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.responses import Response
    from starlette.routing import Route

    views.planned(scenario, ())   # a bad or infeasible scenario stops the server before it listens
    triage = Triage(scenario, allow_files)
    heavy_pool = Workers(size=workers or default_size(), deadline_s=DEADLINE_S, wait_s=WAIT_S, max_waiting=MAX_WAITING)
    light_pool = Workers(size=LIGHT_WORKERS, deadline_s=LIGHT_DEADLINE_S, wait_s=WAIT_S,
                         max_waiting=LIGHT_MAX_WAITING, niceness=0)
    waiting = ThreadPoolExecutor(heavy_pool.size + heavy_pool.max_waiting + light_pool.size + light_pool.max_waiting
                                 + 1, thread_name_prefix="clusterplan-wait")

    def respond(result: Answer) -> Response:
        return Response(result.body, status_code=result.status, media_type=result.media_type,
                        headers=result.headers)

    def failed(request, detail: str) -> Response:
        log.error("%s %s: 500\n%s", request.method, request.url.path, detail.rstrip())
        return respond(error(500, "", "internal error (the server's log has the details)"))

    async def compute(job: Job) -> Answer:
        job, heavy = await run_in_threadpool(triage, job)
        pool = heavy_pool if heavy else light_pool
        return await asyncio.get_running_loop().run_in_executor(waiting, pool.run, job)

    def handler(endpoint: str):
        async def respond_to(request) -> Response:
            try:
                overrides, pinned = await _inputs(request)
                started = time.perf_counter()
                result = await compute(Job(endpoint=endpoint, scenario=scenario, overrides=overrides, pinned=pinned))
                response = respond(result)
                response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1e3:.2f}"
                return response
            except BadRequest as bad:
                return respond(error(bad.status, bad.field, bad.message))
            except ConfigError as bad:
                return respond(error(422, views.field(bad), str(bad)))
            except OverBudget as over:
                return respond(error(422, "", str(over)))
            except Busy as busy:
                return respond(error(503, "", str(busy), headers={"Retry-After": str(busy.retry_s)}))
            except Crashed as crash:
                return failed(request, str(crash))
            except Exception as unexpected_error:   # noqa: BLE001 - logged with its traceback, never sent
                return failed(request, "".join(traceback.format_exception(unexpected_error)))
        return respond_to

    def static(request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return respond(error(404, "", "no such file"))
        text = (resources.files("clusterplan.serve") / "static" / name).read_text(encoding="utf-8")
        return Response(text, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    async def http_error(request, exc: HTTPException) -> Response:
        return respond(error(exc.status_code, "", exc.detail))

    async def unexpected(request, exc: Exception) -> Response:
        return failed(request, "".join(traceback.format_exception(exc)))

    both = ["GET", "POST"]
    routes = [Route("/", handler("page"), methods=["GET"]), Route("/view", handler("view"), methods=both),
              Route("/scenario.toml", handler("toml"), methods=["GET"]),
              *(Route(f"/api/{name}", handler(name), methods=both) for name in ("plan", "train", "compare")),
              Route("/static/{name}", static, methods=["GET"])]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, hosts=_names(hosts))],
                    exception_handlers={HTTPException: http_error, Exception: unexpected})
    app.state.workers = Pools(light_pool, heavy_pool)
    return app


def _names(hosts: Iterable[str]) -> frozenset[str]:
    return frozenset(name.strip("[]").lower() for name in hosts)
