"""A fuzz campaign against the live server (``clusterplan serve``), loopback only, bounded in count and time.

Starts the real server (``python -m clusterplan serve --port 0 --workers 1`` in a subprocess, bound to
127.0.0.1, started in a temporary folder that holds a private file and a FIFO) and sends it hostile requests
of these classes, drawn from ``--seed``:

- ``file``: a file-valued key naming a private file, a folder, a FIFO, /dev/zero, /dev/stdin, /dev/urandom,
  a missing path, a symlink or a relative path, in ``set`` or ``pin``, by every endpoint, GET and POST:
  must be 422 naming the key, within 5 s, and no answer may hold the private file's content;
- ``cost``: synthetic traces with random job counts and policies: 200, or 422 naming a key (over a limit,
  or past the time budget), or 503 when the queue is full, within 31 s;
- ``cross-site``: random Origin, Sec-Fetch-*, Content-Type and method: the status the rules give
  (docs/serve.md, "Security"): 403, 415 or 200;
- ``host``: random Host headers: 400 unless it names the bound address or a loopback name;
- ``nesting``: overrides nested 1 to 3,000 deep, in set, pin, URL or body: 200 or 422;
- ``text``: overrides with lone surrogates, odd bytes and encodings, random Unicode: never a 5xx;
- ``half``: half-sent request heads: closed by the server within its head deadline (10 s) plus 5 s, while a
  full request is still answered.

Every answer must be JSON when it is not 200, never a 5xx, never a traceback. Prints the count of examples
per class and outcome, and exits 1 on any failure (``fuzz_server`` returns the counts, for
benchmarks/fuzz_campaign.py).

    python benchmarks/fuzz_server.py [--examples 300] [--seed 0] [--seconds 600]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).parents[1]
SECRET = "fuzz_server_private_value_7c1d"
FILE_KEYS = ("workload.model_config", "finance.utilization_from_trace")
ENDPOINTS = ("/api/plan", "/api/train", "/api/compare", "/view", "/scenario.toml", "/")
POLICIES = ("fifo", "easy", "conservative", "fairshare")
CLASSES = ("file", "cost", "cross-site", "host", "nesting", "text")


class Server:
    """The real server in a subprocess, started in ``folder``; ``port``."""

    def __init__(self, folder: Path):
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.process = subprocess.Popen([sys.executable, "-m", "clusterplan", "serve", "--host", "127.0.0.1",
                                         "--port", "0", "--workers", "1"], cwd=folder, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("clusterplan serve: http://127.0.0.1:"):
            self.process.kill()
            raise SystemExit(f"the server did not start: {line!r} {self.process.stderr.read()[-500:]}")
        self.port = int(line.split()[2].rstrip("/").rpartition(":")[2])

    def request(self, method: str, path: str, *, body: bytes | None = None, headers: dict[str, str] | None = None,
                timeout: float = 40) -> tuple[int, dict[str, str], bytes, float]:
        """(status, headers, body, seconds) of one request on a fresh connection."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        started = time.perf_counter()
        try:
            connection.request(method, path, body=body, headers=headers)
            answer = connection.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read(), \
                time.perf_counter() - started
        finally:
            connection.close()

    def stop(self) -> str:
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err


def query(path: str, sets: Sequence[str] = (), pins: Sequence[str] | None = None) -> str:
    pairs = [("set", s) for s in sets] + ([("pin", p) for p in pins] + [("pinned", "1")] if pins is not None else [])
    return f"{path}?{urllib.parse.urlencode(pairs)}" if pairs else path


def json_post(sets: Sequence[str], pins: Sequence[str] | None = None) -> bytes:
    return json.dumps({"set": list(sets), **({"pin": list(pins)} if pins is not None else {})}).encode()


def problems(status: int, headers: dict[str, str], body: bytes) -> list[str]:
    """What every answer must satisfy: no 5xx, JSON errors, no traceback, no private content."""
    found = []
    if status >= 500 and status != 503:
        found.append(f"status {status}")
    if status != 200 and not headers.get("content-type", "").startswith("application/json"):
        found.append(f"{status} not JSON")
    if b"Traceback" in body or SECRET.encode() in body:
        found.append("a traceback or private content in the answer")
    return found


def field(body: bytes) -> str:
    try:
        return json.loads(body)["error"]["field"]
    except (ValueError, KeyError, TypeError):
        return "?"


def fixtures(folder: Path) -> list[str]:
    private = folder / "private"
    private.mkdir(mode=0o700)
    (private / "config.json").write_text(json.dumps({SECRET: 1, "hidden_size": SECRET}))
    (private / "trace.csv").write_text(f"{SECRET},{SECRET}\n")
    os.mkfifo(folder / "fifo")
    os.symlink(private / "config.json", folder / "link.json")
    return [str(private / "config.json"), str(private), str(private / "trace.csv"), str(folder / "fifo"),
            "/dev/zero", "/dev/stdin", "/dev/urandom", str(folder / "missing.json"), "link.json",
            "private/config.json", "../" * 8 + "etc/passwd", "synthetic/../private/config.json", "~/.ssh/id_rsa"]


def file_case(server: Server, rng: random.Random, paths: list[str]) -> str:
    key, path, endpoint = rng.choice(FILE_KEYS), rng.choice(paths), rng.choice(ENDPOINTS)
    override = f"{key}={json.dumps(path)}"
    pinned = rng.random() < 0.3 and endpoint in ("/api/compare", "/view", "/")
    sets, pins = ([], [override]) if pinned else ([override], None)
    if endpoint not in ("/", "/scenario.toml") and rng.random() < 0.5:
        status, headers, body, seconds = server.request("POST", endpoint, body=json_post(sets, pins),
                                                        headers={"Content-Type": "application/json"})
    else:
        status, headers, body, seconds = server.request("GET", query(endpoint, sets, pins))
    wrong = problems(status, headers, body)
    if endpoint == "/":   # the page shows the scenario and the reason
        wrong += [] if status == 200 and b'class="problem"' in body else [f"page {status} without the reason"]
    elif status != 422 or field(body) != key:
        wrong.append(f"{status} {field(body)!r}, expected 422 naming {key}")
    if seconds > 5:
        wrong.append(f"{seconds:.1f} s")
    return "; ".join(wrong)


def cost_case(server: Server, rng: random.Random) -> str:
    jobs = rng.choice([rng.randint(1, 200), rng.randint(20_001, 2_000_000), rng.randint(1_001, 20_000)])
    policy = rng.choice(POLICIES)
    if jobs > 1_000 and not (jobs > 20_000 or policy == "conservative"):
        jobs = rng.randint(1, 300)   # within every limit and fast: the campaign stays bounded in time
    sets = [f'finance.utilization_from_trace="synthetic:jobs={jobs},load={rng.choice([0.5, 5, 50])}"',
            f'finance.utilization_policy="{policy}"']
    status, headers, body, seconds = server.request("POST", "/api/plan", body=json_post(sets),
                                                    headers={"Content-Type": "application/json"})
    wrong = problems(status, headers, body)
    over = jobs > 20_000 or (policy == "conservative" and jobs > 1_000)
    if over and (status != 422 or field(body) not in ("finance.utilization_from_trace", "finance.utilization_policy")):
        wrong.append(f"{jobs} jobs {policy}: {status} {field(body)!r}, expected 422 naming the limit")
    if status not in (200, 422, 503):
        wrong.append(f"status {status}")
    if seconds > 31:
        wrong.append(f"{seconds:.1f} s")
    return "; ".join(wrong)


def cross_site_case(server: Server, rng: random.Random) -> str:
    own = f"http://127.0.0.1:{server.port}"
    origin = rng.choice([None, own, "https://evil.example", "null", f"http://localhost:{server.port}",
                         f"http://127.0.0.1:{server.port + 1}", own.upper()])
    site = rng.choice([None, "same-origin", "none", "same-site", "cross-site", "CROSS-SITE", ""])
    navigate = rng.random() < 0.3
    method = rng.choice(["GET", "POST"])
    path = rng.choice(["/", "/api/plan", "/view", "/scenario.toml"]) if method == "GET" else \
        rng.choice(["/api/plan", "/view"])
    media = rng.choice(["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                        "application/json; charset=utf-8"])
    headers = {k: v for k, v in {"Origin": origin, "Sec-Fetch-Site": site}.items() if v is not None}
    if navigate:
        headers |= {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    body = None
    if method == "POST":
        headers["Content-Type"] = media
        body = json_post(["cluster.num_nodes=4"])
    status, answer_headers, answer, _ = server.request(method, path, body=body, headers=headers)
    exempt = navigate and method == "GET" and path == "/"
    if (site is not None and site not in ("same-origin", "none") and not exempt) or \
            (origin is not None and origin.lower() != own.lower()):
        expected = 403
    elif method == "POST" and media.partition(";")[0] != "application/json":
        expected = 415
    else:
        expected = 200
    wrong = problems(status, answer_headers, answer)
    if status != expected:
        wrong.append(f"{method} {path} origin={origin} site={site} navigate={navigate} {media}: {status}, "
                     f"expected {expected}")
    return "; ".join(wrong)


def host_case(server: Server, rng: random.Random) -> str:
    name = rng.choice(["127.0.0.1", "localhost", "[::1]", "LOCALHOST", "evil.example", "127.0.0.1.evil.example",
                       "localhost.", "127.0.0.2", "0.0.0.0", "", "[::1", "127.0.0.1:x", "evil.example:80@127.0.0.1",
                       "127.0.0.1 evil", "xn--80ak6aa92e.com"])
    port = rng.choice(["", f":{server.port}", ":80"])
    host = name + port if name else ""
    status, headers, body, _ = server.request("GET", "/api/plan", headers={"Host": host})
    expected = 200 if name.lower() in ("127.0.0.1", "localhost", "[::1]") else 400
    wrong = problems(status, headers, body)
    if status != expected:
        wrong.append(f"Host {host!r}: {status}, expected {expected}")
    return "; ".join(wrong)


def nesting_case(server: Server, rng: random.Random) -> str:
    depth = rng.choice([1, 63, 64, 65, 600, rng.randint(1, 1990)])
    value = rng.choice("[{") * depth if rng.random() < 0.7 else "[" * depth + "1" + "]" * depth
    override = f"cluster.num_nodes={value}"
    endpoint = rng.choice(["/api/plan", "/view", "/api/compare", "/scenario.toml"])
    pinned = endpoint in ("/api/compare", "/view") and rng.random() < 0.5
    sets, pins = ([], [override]) if pinned else ([override], None)
    if endpoint != "/scenario.toml" and rng.random() < 0.5:
        status, headers, body, _ = server.request("POST", endpoint, body=json_post(sets, pins),
                                                  headers={"Content-Type": "application/json"})
    else:
        status, headers, body, _ = server.request("GET", query(endpoint, sets, pins))
    wrong = problems(status, headers, body)
    if status not in (200, 413, 414, 422, 431):
        wrong.append(f"depth {depth}: {status}")
    return "; ".join(wrong)


def text_case(server: Server, rng: random.Random) -> str:
    pieces = ["\\ud800", "\\udfff", "\\u0000", "\\ufeff", "é", "\\u202e", "\\uffff", "\\\\", "\"", "x", "=", "."]
    key = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
    value = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
    text = rng.choice([f"{key}={value}", f"about.name={value}", f"cluster.{key}=1", key])
    body = ('{"set": ["' + text + '"]}').encode("utf-8")
    body = rng.choice([body, body.decode("utf-8").encode("utf-16"), b"\xef\xbb\xbf" + body, body + b"\xff",
                       body.replace(b"x", b"\xc3\x28"), body.decode("utf-8").encode("latin-1", "replace")])
    status, headers, answer, _ = server.request("POST", rng.choice(["/api/plan", "/view", "/api/compare"]), body=body,
                                                headers={"Content-Type": "application/json"})
    wrong = problems(status, headers, answer)
    if not (status == 200 or 400 <= status < 500):
        wrong.append(f"{body[:60]!r}: {status}")
    return "; ".join(wrong)


def half_case(server: Server, count: int) -> str:
    """``count`` half-sent heads are closed within the head deadline plus 5 s; a full request still answered."""
    connections = []
    for i in range(count):
        connection = socket.create_connection(("127.0.0.1", server.port))
        connection.sendall(b"GET /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (b"X-A: " if i % 2 else b""))
        connections.append(connection)
    status, _, _, _ = server.request("GET", "/api/plan")
    deadline, still_open = time.monotonic() + 15, 0
    for connection in connections:
        connection.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            while connection.recv(4096):
                pass
        except (TimeoutError, socket.timeout):
            still_open += 1
        except OSError:
            pass
        connection.close()
    wrong = [] if status == 200 else [f"a full request answered {status} beside {count} half-sent ones"]
    return "; ".join(wrong + ([f"{still_open} of {count} half-sent heads still open after 15 s"] if still_open else []))


def fuzz_server(examples: int = 300, seed: int = 0, seconds: float = 600, out=sys.stdout) -> Counter:
    """Run the campaign (``examples`` requests over the classes, at most ``seconds``); print and return the
    count per (class, outcome), outcome "ok" or "FAIL"."""
    rng = random.Random(seed)
    counts: Counter = Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="clusterplan-fuzz-server-") as folder:
        paths = fixtures(Path(folder))
        server = Server(Path(folder))
        stop = time.monotonic() + seconds
        try:
            cases = {"file": lambda: file_case(server, rng, paths), "cost": lambda: cost_case(server, rng),
                     "cross-site": lambda: cross_site_case(server, rng), "host": lambda: host_case(server, rng),
                     "nesting": lambda: nesting_case(server, rng), "text": lambda: text_case(server, rng)}
            weights = {"file": 4, "cost": 1, "cross-site": 3, "host": 2, "nesting": 2, "text": 3}
            for _ in range(examples):
                if time.monotonic() > stop:
                    break
                kind = rng.choices(list(weights), weights=list(weights.values()))[0]
                problem = cases[kind]()
                counts[kind, "FAIL" if problem else "ok"] += 1
                if problem:
                    failures.append(f"{kind}: {problem}")
            problem = half_case(server, 100)
            counts["half", "FAIL" if problem else "ok"] += 1
            failures += [f"half: {problem}"] if problem else []
        finally:
            log = server.stop()
    for kind in (*CLASSES, "half"):
        print(f"server {kind:<11} {counts[kind, 'ok']:>5} ok {counts[kind, 'FAIL']:>4} failed", file=out)
    for failure in failures[:20]:
        print(f"  FAIL {failure}", file=out)
    logged_500 = log.count(": 500")
    print(f"server: {sum(counts.values())} examples, {len(failures)} failures, {logged_500} 5xx logged", file=out)
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300, help="requests (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    parser.add_argument("--seconds", type=float, default=600, help="stop drawing after this long (default 600)")
    args = parser.parse_args(argv)
    counts = fuzz_server(args.examples, args.seed, args.seconds)
    return 1 if any(outcome == "FAIL" for _, outcome in counts) else 0


if __name__ == "__main__":
    sys.exit(main())
