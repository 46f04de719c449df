"""Server time per request of ``clusterplan serve``, and a bounded load loop, over real loopback HTTP.

Starts the real server (uvicorn, on a free loopback port, in this process's thread) for the reference
scenario, then:

1. per request kind (``/api/plan`` and the page's ``/view`` fragment, each without and with a workload),
   ``--requests`` sequential requests after two to warm up: the median and p95 of the server's time
   (its ``Server-Timing`` header: reading the overrides to the answer built) and of the round trip seen by
   the client, against the goal of 100 ms median server time for the reference, with a workload too;
2. the load loop: ``--load`` plan requests (default 1,000) from ``--clients`` (default 4) concurrent
   keep-alive clients, the node count varying, each answer checked against the one the CLI composes for
   the same overrides; it prints the count of errors (exit 1 on any, or on a missed goal).

    python benchmarks/serve_speed.py [--requests 50] [--load 1000] [--clients 4]
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "src"))

from clusterplan.serve.app import create_app  # noqa: E402
from clusterplan.serve.server import listen  # noqa: E402
from clusterplan.serve.views import plan_json  # noqa: E402

GOAL_MS = 100.0
WORKLOAD = ['workload.model="llama2-13b"', 'workload.tokens="2T"']
KINDS = (("/api/plan", []), ("/api/plan", WORKLOAD), ("/view", []), ("/view", WORKLOAD))
NODES = (4, 8, 16, 24, 32)


def start():
    """The real server on a free loopback port, in a thread: (its port, the uvicorn server to stop)."""
    import uvicorn

    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(), log_level="warning", access_log=False, lifespan="off"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return sock.getsockname()[1], server


def connect(port: int) -> http.client.HTTPConnection:
    """A keep-alive client; no Nagle delay, which would add the peer's delayed ACK (40 ms) to a request
    whose headers and body leave in two writes."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.connect()
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def post(connection: http.client.HTTPConnection, path: str, overrides: list[str]) -> tuple[int, float, bytes]:
    """(status, server ms, body) of one POST of ``{"set": overrides}``."""
    connection.request("POST", path, body=json.dumps({"set": overrides}),
                       headers={"Content-Type": "application/json"})
    answer = connection.getresponse()
    body = answer.read()
    timing = answer.getheader("Server-Timing") or "app;dur=nan"
    return answer.status, float(timing.partition("dur=")[2]), body


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def timed(port: int, requests: int) -> bool:
    """Median and p95 per request kind; True where every kind meets the goal."""
    connection = connect(port)
    met = True
    print(f"{'request':<28} {'server median':>14} {'server p95':>11} {'round trip median':>18} {'p95':>8}")
    for path, overrides in KINDS:
        server_ms, trip_ms = [], []
        for i in range(requests + 2):
            started = time.perf_counter()
            status, ms, _ = post(connection, path, overrides)
            if status != 200:
                raise SystemExit(f"{path} answered {status}")
            if i >= 2:
                server_ms.append(ms)
                trip_ms.append((time.perf_counter() - started) * 1e3)
        name = f"{path} {'with workload' if overrides else 'reference'}"
        print(f"{name:<28} {statistics.median(server_ms):>11.1f} ms {p95(server_ms):>8.1f} ms "
              f"{statistics.median(trip_ms):>15.1f} ms {p95(trip_ms):>5.1f} ms")
        met &= statistics.median(server_ms) <= GOAL_MS
    return met


def load(port: int, total: int, clients: int) -> int:
    """``total`` plan requests from ``clients`` keep-alive clients; the number of wrong or failed answers."""
    expected = {n: plan_json(None, [f"cluster.num_nodes={n}"]) for n in NODES}
    local = threading.local()

    def one(i: int) -> bool:
        if not hasattr(local, "connection"):
            local.connection = connect(port)
        nodes = NODES[i % len(NODES)]
        try:
            status, _, body = post(local.connection, "/api/plan", [f"cluster.num_nodes={nodes}"])
        except (OSError, http.client.HTTPException):
            return False
        return status == 200 and json.loads(body) == expected[nodes]

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(one, range(total)))
    seconds = time.perf_counter() - started
    errors = results.count(False)
    print(f"load: {total} plan requests from {clients} concurrent loopback clients in {seconds:.1f} s "
          f"({total / seconds:.0f} requests/s), {errors} errors")
    return errors


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="timed requests per kind (default 50)")
    parser.add_argument("--load", type=int, default=1000, help="plan requests in the load loop (default 1000)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients in the load loop (default 4)")
    args = parser.parse_args(argv)
    port, server = start()
    try:
        met = timed(port, args.requests)
        errors = load(port, args.load, args.clients)
    finally:
        server.should_exit = True
    print(f"goal: median server time <= {GOAL_MS:.0f} ms for the reference: {'PASS' if met else 'FAIL'}; "
          f"load: {'PASS' if errors == 0 else 'FAIL'}")
    return 0 if met and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
