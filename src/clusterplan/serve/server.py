"""Run the application on uvicorn: bind first (so a busy port is a one-line error and port 0 picks a free
one), print the URL, serve until Ctrl-C."""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import webbrowser
from typing import TextIO

from clusterplan.errors import ConfigError
from clusterplan.serve.app import create_app


LOOPBACK_NAMES = ("127.0.0.1", "localhost")   # the Host a browser sends to a server bound to these


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
        sock.bind((host, port))
        sock.listen(128)
    except OSError as error:
        raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror or error}", key="--port") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def serve(scenario: str | None, *, host: str, port: int, open_browser: bool, out: TextIO = sys.stdout) -> None:
    """Serve the live page for ``scenario`` until interrupted."""
    import uvicorn

    app = create_app(scenario, allowed_hosts=LOOPBACK_NAMES if host in LOOPBACK_NAMES else None)
    sock = listen(host, port)
    url = url_of(sock)
    if not loopback(host):
        sys.stderr.write(f"clusterplan serve: listening on {host}: anyone who can reach this machine can use it\n")
    out.write(f"clusterplan serve: {url} (Ctrl-C to stop)\n")
    out.flush()
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    server.run(sockets=[sock])
