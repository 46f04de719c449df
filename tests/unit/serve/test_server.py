"""Binding the server: a free port on request, TCP named so that answers leave without the Nagle delay."""

import socket

import pytest

from clusterplan.errors import ConfigError
from clusterplan.serve.server import listen, loopback, url_of


def test_listen_names_tcp_so_asyncio_sets_nodelay():
    """Regression: a socket made with proto 0 got no TCP_NODELAY from asyncio; every answer took 40 ms more."""
    with listen("127.0.0.1", 0) as sock:
        assert sock.proto == socket.IPPROTO_TCP
        assert url_of(sock) == f"http://127.0.0.1:{sock.getsockname()[1]}/"


def test_port_errors_name_the_option():
    """Out of range and busy ports are one-line errors about --port."""
    with pytest.raises(ConfigError, match="must be 0..65535"):
        listen("127.0.0.1", 65536)
    with listen("127.0.0.1", 0) as busy, pytest.raises(ConfigError, match="cannot listen") as error:
        listen("127.0.0.1", busy.getsockname()[1])
    assert error.value.key == "--port"


def test_loopback():
    assert loopback("127.0.0.1") and loopback("::1") and loopback("localhost")
    assert not loopback("0.0.0.0") and not loopback("example.org")


def test_names_for_each_bind():
    """The host names answered: the bound address, loopback names on loopback or wildcard binds, --allow-host."""
    from clusterplan.serve.guard import host_name, names_for

    assert names_for("127.0.0.2") == {"127.0.0.2", "localhost", "127.0.0.1", "::1"}
    assert names_for("[::1]") >= {"::1", "localhost"}
    assert names_for("192.0.2.7") == {"192.0.2.7"}
    assert names_for("0.0.0.0", ["Planner.example"]) >= {"planner.example", "localhost"}
    assert [host_name(h) for h in ("a:80", "[::1]:8765", "[::1]", "A.example", "a:x", "[::1", ":80", "")] == \
        ["a", "::1", "::1", "a.example", None, None, None, None]


@pytest.fixture
def live(monkeypatch):
    """The real uvicorn server (the serve command's settings) in a thread, with a 1 s head deadline and
    keep-alive: (host, port)."""
    import threading
    import time

    pytest.importorskip("uvicorn")
    import uvicorn

    from clusterplan.serve import server
    from clusterplan.serve.app import create_app

    monkeypatch.setattr(server, "HEADER_TIMEOUT_S", 1.0)
    monkeypatch.setattr(server, "KEEP_ALIVE_S", 1)
    app = create_app(workers=1)
    sock = listen("127.0.0.1", 0)
    running = uvicorn.Server(server.config(app))
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.01)
    yield sock.getsockname()[:2]
    running.should_exit = True
    thread.join(timeout=10)
    app.state.workers.close()


def closed_within(connection: socket.socket, seconds: float) -> bool:
    """True where the server closes ``connection`` within ``seconds`` (reads until the end)."""
    connection.settimeout(seconds)
    try:
        while connection.recv(4096):
            pass
        return True
    except (TimeoutError, socket.timeout):
        return False
    except ConnectionResetError:
        return True


def test_half_sent_requests_are_dropped(live):
    """200 connections that send half a request head are closed after the head deadline (before: open for
    ever); a connection idle after an answer is closed after the keep-alive timeout."""
    connections = []
    for _ in range(200):
        connection = socket.create_connection(live)
        connection.sendall(b"GET /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
        connections.append(connection)
    silent = socket.create_connection(live)
    assert all(closed_within(c, 5) for c in [*connections, silent])
    kept = socket.create_connection(live)
    kept.sendall(b"GET /static/app.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert kept.recv(4096).startswith(b"HTTP/1.1 200")
    assert closed_within(kept, 5)
    for connection in [*connections, silent, kept]:
        connection.close()
    with socket.create_connection(live) as fresh:   # the server still answers
        fresh.sendall(b"GET /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert fresh.recv(4096).startswith(b"HTTP/1.1 200")
