"""``clusterplan serve`` as a user starts it: the URL printed, the real server answering, one-line errors."""

import io
import json
import os
import socket
import subprocess
import sys
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
