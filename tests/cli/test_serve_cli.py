"""``clusterplan serve`` as a user starts it: the URL printed, the real server answering, one-line errors."""

import io
import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from clusterplan import serve
from clusterplan.cli.main import main

ROOT = Path(__file__).parents[2]


def run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(list(argv))
    return code, err.getvalue()


def test_without_the_extra_it_says_what_to_install(monkeypatch):
    """No starlette or uvicorn: one line naming the extra, exit 2."""
    monkeypatch.setattr(serve, "missing", lambda: "uvicorn")
    code, err = run("serve")
    assert code == 2 and err == "clusterplan: error: serve needs uvicorn: pip install 'clusterplan[serve]'\n"


@pytest.mark.skipif(serve.missing() is not None, reason="the serve extra is not installed")
def test_bad_port_and_scenario_are_one_line():
    """A port out of range, a busy port, a missing scenario: exit 2 with one line, before anything listens."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    with busy:
        for argv, text in ((["--port", "70000"], "--port: must be 0..65535"),
                           (["--port", str(busy.getsockname()[1])], "cannot listen on 127.0.0.1"),
                           (["missing.toml"], "missing.toml: cannot read scenario")):
            code, err = run("serve", *argv)
            assert code == 2 and err.count("\n") == 1 and text in err, err


@pytest.mark.skipif(serve.missing() is not None, reason="the serve extra is not installed")
def test_the_real_server_prints_its_url_and_answers():
    """`clusterplan serve --port 0` binds loopback, prints the URL, and /api/plan equals `plan --format json`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen([sys.executable, "-m", "clusterplan", "serve", str(ROOT / "examples/starter-32.toml"),
                                "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline()
        assert line.startswith("clusterplan serve: http://127.0.0.1:"), line + process.stderr.read()
        url = line.split()[2]
        with urllib.request.urlopen(url + "api/plan?set=cluster.num_nodes%3D6", timeout=30) as answer:
            served = json.load(answer)
    finally:
        process.terminate()
        process.wait(timeout=30)
    printed = subprocess.run([sys.executable, "-m", "clusterplan", "plan", str(ROOT / "examples/starter-32.toml"),
                              "--set", "cluster.num_nodes=6", "--format", "json"], capture_output=True, text=True,
                             env=env, check=True).stdout
    assert served == json.loads(printed)


def start(*argv: str) -> tuple[subprocess.Popen, str]:
    """`clusterplan serve --port 0 ARGV` in a subprocess: (the process, its URL)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen([sys.executable, "-m", "clusterplan", "serve", "--port", "0", "--workers", "1", *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    if not line.startswith("clusterplan serve: http://"):
        process.kill()
        raise AssertionError(line + process.stderr.read())
    return process, line.split()[2]


def status(url: str, host: str | None = None) -> int:
    request = urllib.request.Request(url + "api/plan", headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        assert json.load(error)["error"]["field"] == "Host"
        return error.code


def can_bind(host: str) -> bool:
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(serve.missing() is not None, reason="the serve extra is not installed")
@pytest.mark.parametrize("host, own", [("127.0.0.2", "127.0.0.2"), ("::1", "[::1]"), ("localhost", "localhost")])
def test_every_loopback_bind_checks_the_host(host, own):
    """Bound to ::1 or 127.0.0.2 (before: no Host check), a request naming evil.example is 400 JSON; the
    bound address itself is answered."""
    if not can_bind(host.strip("[]")):
        pytest.skip(f"cannot bind {host} here")
    process, url = start("--host", host)
    try:
        port = url.rstrip("/").rpartition(":")[2]
        assert status(url) == 200 and status(url, f"{own}:{port}") == 200
        assert status(url, "evil.example") == 400 and status(url, f"evil.example:{port}") == 400
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.skipif(serve.missing() is not None, reason="the serve extra is not installed")
def test_a_non_loopback_bind_needs_allow_remote():
    """--host 0.0.0.0 without --allow-remote: one line naming --host and the flag, exit 2, nothing listens."""
    code, err = run("serve", "--host", "0.0.0.0", "--port", "0")
    assert code == 2 and err.count("\n") == 1 and "--host" in err and "--allow-remote" in err


@pytest.mark.skipif(serve.missing() is not None, reason="the serve extra is not installed")
def test_allow_file_must_name_a_regular_file(tmp_path):
    """--allow-file of a FIFO or a missing path: one line, exit 2, before anything listens (never opened)."""
    os.mkfifo(tmp_path / "fifo")
    for path, text in ((tmp_path / "fifo", "is not a regular file"), (tmp_path / "missing", "cannot read")):
        code, err = run("serve", "--port", "0", "--allow-file", str(path))
        assert code == 2 and err.count("\n") == 1 and text in err and "--allow-file" in err, err


@pytest.mark.skipif(serve.missing() is not None, reason="the serve extra is not installed")
def test_the_real_server_refuses_a_cross_site_post_and_files():
    """Through uvicorn: the issue's cross-site POST is 403, a request-named file is 422, Ctrl-C-free shutdown."""
    process, url = start()
    try:
        request = urllib.request.Request(url + "api/plan", data=b'{"set": []}', method="POST", headers={
            "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 403 and json.load(refused.value)["error"]["field"] == "Sec-Fetch-Site"
        query = urllib.parse.urlencode({"set": 'workload.model_config="/etc/passwd"'})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + "api/plan?" + query, timeout=30)
        assert refused.value.code == 422 and "root:" not in refused.value.read().decode()
    finally:
        process.terminate()
        process.wait(timeout=30)
