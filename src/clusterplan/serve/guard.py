"""The browser's side of the live server's safety (docs/serve.md, "Security"): an ASGI middleware that
answers before the application

- 400 to a request whose ``Host`` is not one of the names the server answers to (the bound address, the
  loopback names where it listens on loopback, and those given to ``--allow-host``), so that a web page
  cannot reach the server through a DNS name of its own (DNS rebinding);
- 403 to a cross-site request: an ``Origin`` other than the server's own (``http://`` + its Host), or a
  ``Sec-Fetch-Site`` other than ``same-origin`` or ``none`` (typed or bookmarked); the one exception is a
  top-level navigation to the page ``/`` (a link to a view, opened from elsewhere), which changes nothing
  and shows the user what it computes.

Every refusal is JSON ``{"error": {"field", "message"}}``, as every other error of the server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from clusterplan.serve.answers import error

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(value: str) -> str | None:
    """The host part of a ``Host`` header (``name``, ``name:port``, ``[v6]``, ``[v6]:port``), lower-cased and
    with IPv6 brackets removed; None where the header is malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return name
    name, colon, port = value.partition(":")
    if not name or (colon and not port.isdigit()):
        return None
    return name


def names_for(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names a server bound to ``bound`` answers to: the address itself, the loopback names where
    it is a loopback or wildcard address (0.0.0.0, ::), and ``extra`` (``--allow-host``)."""
    names = {bound.strip("[]").lower(), *(name.strip("[]").lower() for name in extra)}
    try:
        address = ipaddress.ip_address(bound.strip("[]"))
        if address.is_loopback or address.is_unspecified:
            names |= set(LOOPBACK_NAMES)
    except ValueError:
        if bound.lower() == "localhost":
            names |= set(LOOPBACK_NAMES)
    return frozenset(names)


def _header(scope, name: bytes) -> str | None:
    values = [value for key, value in scope["headers"] if key == name]
    return values[0].decode("latin-1") if len(values) == 1 else (None if not values else "")


class Guard:
    """ASGI middleware: the Host check and the cross-site refusal, around ``app``."""

    def __init__(self, app, *, hosts: frozenset[str]):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            refusal = self.refusal(scope)
            if refusal is not None:
                status, field, message = refusal
                body = error(status, field, message).body
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def refusal(self, scope) -> tuple[int, str, str] | None:
        """(status, field, message) of a refused request, None for one to answer."""
        host = _header(scope, b"host")
        name = host_name(host) if host else None
        if name is None or name not in self.hosts:
            return 400, "Host", ("this server answers only to the host names it was started for "
                                 "(serve --allow-host NAME adds one)")
        navigation = (scope["method"] == "GET" and scope["path"] == "/"
                      and _header(scope, b"sec-fetch-mode") == "navigate"
                      and _header(scope, b"sec-fetch-dest") == "document")
        site = _header(scope, b"sec-fetch-site")
        if site is not None and site not in ("same-origin", "none") and not navigation:
            return 403, "Sec-Fetch-Site", f"cross-site request refused (Sec-Fetch-Site: {site})"
        origin = _header(scope, b"origin")
        if origin is not None and origin.lower() != f"http://{host.strip().lower()}":
            return 403, "Origin", "cross-origin request refused: the live page answers only its own page"
        return None
