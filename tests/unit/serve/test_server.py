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
