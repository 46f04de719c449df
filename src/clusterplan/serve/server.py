"""Run the application on uvicorn: bind first (so a busy port is a one-line error and port 0 picks a free
one), print the URL, serve until Ctrl-C.

A non-loopback address needs ``allow_remote`` (``--allow-remote``) and is announced on stderr. A connection
must deliver each request's head (request line and headers) within ``HEADER_TIMEOUT_S`` of opening or of the
previous answer, else it is closed (uvicorn has a keep-alive timeout but none for a half-sent head); idle
keep-alive connections close after ``KEEP_ALIVE_S``; at most ``MAX_CONNECTIONS`` are served at once (503 beyond).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
import threading
import webbrowser
from collections.abc import Sequence
from typing import TextIO

from clusterplan.errors import ConfigError
from clusterplan.serve.app import create_app, log
from clusterplan.serve.guard import names_for

HEADER_TIMEOUT_S, KEEP_ALIVE_S, MAX_CONNECTIONS = 10.0, 5, 512


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0 = any free port)."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"must be 0..65535, got {port}", key="--port")
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP; without it every
        # answer waited for the client's delayed ACK (40 ms on Linux)
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as error:
        raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror or error}", key="--port") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def protocol():
    """uvicorn's h11 protocol with a deadline on each request's head."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        head_timer = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            self.head_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._head_late)

        def _head_late(self) -> None:
            """No complete request head since the timer started: drop the connection."""
            self.head_timer = None
            if self.conn.their_state in (h11.IDLE, h11.DONE, h11.MUST_CLOSE) and self.cycle_idle():
                self.transport.close()

        def cycle_idle(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

    return Protocol


def config(app):
    """uvicorn's settings for ``app``: the head deadline, the keep-alive timeout, the connection limit."""
    import uvicorn

    return uvicorn.Config(app, http=protocol(), log_level="warning", access_log=False, lifespan="off",
                          timeout_keep_alive=KEEP_ALIVE_S, limit_concurrency=MAX_CONNECTIONS)


def configure_logging() -> None:
    """The server's log lines (every 5xx with its traceback) on stderr."""
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("clusterplan serve: %(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def serve(scenario: str | None, *, host: str, port: int, open_browser: bool, allow_remote: bool = False,
          allow_hosts: Sequence[str] = (), allow_files: Sequence[str] = (), workers: int | None = None,
          out: TextIO = sys.stdout) -> None:
    """Serve the live page for ``scenario`` until interrupted."""
    import uvicorn

    if not loopback(host) and not allow_remote:
        raise ConfigError(f"{host} is not a loopback address: anyone who can reach this machine could use the "
                          f"server; add --allow-remote to serve on it", key="--host")
    if workers is not None and not 1 <= workers <= 64:
        raise ConfigError(f"must be 1..64, got {workers}", key="--workers")
    configure_logging()
    app = create_app(scenario, hosts=names_for(host, allow_hosts), allow_files=allow_files, workers=workers)
    sock = listen(host, port)
    app.state.workers.warm()
    url = url_of(sock)
    if not loopback(host):
        sys.stderr.write(f"clusterplan serve: WARNING: listening on {host}, not only this machine: anyone who "
                         f"can reach it can use the server and its CPU (host names answered: "
                         f"{', '.join(sorted(names_for(host, allow_hosts)))})\n")
    out.write(f"clusterplan serve: {url} (Ctrl-C to stop)\n")
    out.flush()
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        uvicorn.Server(config(app)).run(sockets=[sock])
    finally:
        app.state.workers.close()
