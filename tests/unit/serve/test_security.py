"""Issue 31's server reproductions, each pinned: no request-named file is read, expensive work is bounded,
cross-site requests are refused, bad input is a 422 (never a 500), and every 5xx is JSON and logged."""

import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

testclient = pytest.importorskip("starlette.testclient")
from clusterplan.serve import app as app_module  # noqa: E402
from clusterplan.serve.app import create_app  # noqa: E402

SECRET = "secret_key_from_a_private_folder"
CONSERVATIVE_5000 = ['finance.utilization_from_trace="synthetic:jobs=5000,load=50"',
                     'finance.utilization_policy="conservative"']
SLOW = ['finance.utilization_from_trace="synthetic:jobs=1000,load=50"', 'finance.utilization_policy="conservative"']
ENDPOINTS = ("/api/plan", "/api/train", "/api/compare", "/view", "/scenario.toml")


@pytest.fixture(scope="module")
def client():
    app = create_app(workers=1)
    yield testclient.TestClient(app, base_url="http://127.0.0.1")
    app.state.workers.close()


@pytest.fixture
def private(tmp_path):
    """A model config in a folder only its owner reads, and a FIFO nobody writes."""
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    (folder / "config.json").write_text(json.dumps({SECRET: 1, "hidden_size": "x"}))
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


def assert_refused(answer, field: str) -> None:
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field
    assert SECRET not in answer.text and "Traceback" not in answer.text


@pytest.mark.parametrize("key", ["workload.model_config", "finance.utilization_from_trace"])
def test_no_request_named_file_is_read(client, private, key):
    """A file-valued key naming a private file, a folder, a FIFO, /dev/zero, /dev/stdin or a missing path: the
    same 422 naming the key at once, by every endpoint, in set and in pin, by GET and POST (before: the file was
    read and a key from it came back in the error; a FIFO blocked a worker for ever; /dev/zero took GBs)."""
    paths = [private / "private" / "config.json", private / "private", private / "fifo", "/dev/zero",
             "/dev/stdin", private / "missing.json"]
    messages = set()
    for path in paths:
        override = f"{key}={json.dumps(str(path))}"
        for endpoint in ENDPOINTS:
            started = time.perf_counter()
            assert_refused(client.get(endpoint, params={"set": override}), key)
            assert_refused(client.post("/api/compare", json={"set": [], "pin": [override]}), key)
            assert time.perf_counter() - started < 5
        answer = client.post("/api/plan", json={"set": [override]})
        assert_refused(answer, key)
        messages.add(answer.json()["error"]["message"].replace(str(path), "PATH"))
    assert len(messages) == 1   # nothing tells whether a path exists, or what it is


def test_a_quoted_key_is_the_same_key(client, private):
    """The check reads the effective scenario, so no spelling of the key gets past it."""
    override = f'workload."model_config"={json.dumps(str(private / "private" / "config.json"))}'
    assert_refused(client.post("/api/plan", json={"set": [override]}), "workload.model_config")


def test_the_page_with_a_file_link_shows_the_scenario(client, private):
    """GET / naming a private file shows the scenario itself and why, never the file."""
    page = client.get("/", params={"set": f'workload.model_config="{private / "private" / "config.json"}"'})
    assert page.status_code == 200 and 'class="problem"' in page.text and SECRET not in page.text


def test_files_named_by_the_operator_are_read(tmp_path):
    """--allow-file names a file requests may use; a synthetic trace spec needs no file."""
    config = tmp_path / "tiny.json"
    config.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2, "hidden_size": 256,
                                  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
                                  "vocab_size": 1000, "max_position_embeddings": 128}))
    app = create_app(allow_files=[str(config)], workers=1)
    try:
        client = testclient.TestClient(app, base_url="http://127.0.0.1")
        assert client.post("/api/plan", json={"set": [f'workload.model_config="{config}"']}).status_code == 200
        synthetic = client.post("/api/plan", json={"set": ['finance.utilization_from_trace="synthetic:jobs=50"']})
        assert synthetic.status_code == 200
        other = tmp_path / "other.json"
        other.write_text(config.read_text())
        assert_refused(client.post("/api/plan", json={"set": [f'workload.model_config="{other}"']}),
                       "workload.model_config")
    finally:
        app.state.workers.close()


def test_known_costly_inputs_are_refused_at_once(client):
    """The 396 s request (5,000 jobs, conservative) and a 50,000-job trace: 422 naming the key and the limit."""
    started = time.perf_counter()
    answer = client.get("/api/plan", params=[("set", o) for o in CONSERVATIVE_5000])
    assert_refused(answer, "finance.utilization_policy")
    assert "at most 1,000 jobs" in answer.json()["error"]["message"]
    answer = client.get("/api/plan", params={"set": 'finance.utilization_from_trace="synthetic:jobs=50000"'})
    assert_refused(answer, "finance.utilization_from_trace")
    assert "at most 20,000 synthetic jobs" in answer.json()["error"]["message"]
    assert time.perf_counter() - started < 2


def test_a_request_past_the_deadline_is_refused_and_the_server_goes_on():
    """A request within the limits but slower than the deadline (here a layout search against a 20 ms
    deadline): its worker is killed, 422 at the deadline, and the next request is answered by a fresh worker."""
    app = create_app(workers=1)
    try:
        client = testclient.TestClient(app, base_url="http://127.0.0.1")
        workload = {"set": 'workload.model="llama2-7b"'}
        assert client.get("/api/plan", params=workload).status_code == 200   # the worker started
        app.state.workers.heavy.deadline_s = 0.02
        started = time.perf_counter()   # another model: the worker's cached searches must not answer it at once
        answer = client.get("/api/plan", params={"set": 'workload.model="llama2-13b"'})
        assert answer.status_code == 422 and "budget of 0.02 s" in answer.json()["error"]["message"]
        assert time.perf_counter() - started < 5
        app.state.workers.heavy.deadline_s = 20.0
        assert client.get("/api/plan", params=workload).status_code == 200
    finally:
        app.state.workers.close()


def test_a_full_queue_is_503_with_retry_after_and_cheap_requests_stay_fast(monkeypatch):
    """One worker, no queue: a second heavy request is 503 with Retry-After, while a cheap one is answered."""
    monkeypatch.setattr(app_module, "MAX_WAITING", 0)
    monkeypatch.setattr(app_module, "DEADLINE_S", 4.0)
    app = create_app(workers=1)
    try:
        client = testclient.TestClient(app, base_url="http://127.0.0.1")
        app.state.workers.warm()   # every worker started, as `clusterplan serve` does before it listens
        for _ in range(2):   # each light worker has imported the models and answered once
            client.get("/api/plan")
        with ThreadPoolExecutor(1) as pool:
            slow = pool.submit(client.get, "/api/plan", params=[("set", o) for o in SLOW])
            time.sleep(0.5)
            busy = client.get("/api/train", params={"set": 'workload.model="llama2-7b"'})
            started = time.perf_counter()
            cheap = client.get("/api/plan")
            cheap_s = time.perf_counter() - started
            assert slow.result().status_code == 422
        assert busy.status_code == 503 and int(busy.headers["retry-after"]) >= 1
        assert busy.json()["error"]["message"].startswith("the server is busy")
        assert cheap.status_code == 200 and cheap_s < 1
    finally:
        app.state.workers.close()


def test_cross_site_requests_are_refused(client):
    """The issue's POST (Origin evil.example, Sec-Fetch-Site cross-site, text/plain) and its parts: 403 JSON;
    a same-origin fetch and a top-level navigation to the page are answered."""
    body = json.dumps({"set": ["cluster.num_nodes=4"]})
    cases = [({"origin": "https://evil.example", "sec-fetch-site": "cross-site", "content-type": "text/plain"}, 403),
             ({"origin": "https://evil.example", "content-type": "application/json"}, 403),
             ({"origin": "null", "content-type": "application/json"}, 403),
             ({"sec-fetch-site": "same-site", "content-type": "application/json"}, 403),
             ({"content-type": "text/plain"}, 415),
             ({"origin": "http://127.0.0.1", "sec-fetch-site": "same-origin", "content-type": "application/json"},
              200)]
    for headers, status in cases:
        answer = client.post("/api/plan", content=body, headers=headers)
        assert answer.status_code == status, (headers, answer.text)
        assert "error" in answer.json() or status == 200
    assert client.get("/api/plan", headers={"sec-fetch-site": "cross-site"}).status_code == 403
    assert client.get("/scenario.toml", headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate",
                                                 "sec-fetch-dest": "document"}).status_code == 403
    link = client.get("/", params={"set": "cluster.num_nodes=4"},
                      headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate",
                               "sec-fetch-dest": "document"})
    assert link.status_code == 200 and "<!DOCTYPE html>" in link.text


NESTED = "cluster.num_nodes=" + "[" * 600


def test_deep_nesting_surrogates_and_odd_encodings_are_422(client):
    """600 nested [ (URL, body, pin, /scenario.toml), a lone surrogate in a key or value, and bodies in odd
    encodings: a 4xx JSON answer, never a 500 (before: RecursionError 500, plain-text 500 with a traceback)."""
    answers = [client.get("/api/plan", params={"set": NESTED}), client.post("/api/plan", json={"set": [NESTED]}),
               client.get("/api/compare", params={"pin": NESTED}), client.get("/scenario.toml", params={"set": NESTED}),
               client.post("/view", json={"set": [], "pin": [NESTED]})]
    raw = [b'{"set": ["\\ud800.x=1"]}', b'{"set": ["about.name=\\udfff"]}', b'{"set": ["cluster.\\ud800=1"]}',
           "\ufeff{}".encode("utf-8"), b"\xff\xfe{\x00}\x00", b'{"set": ["\xff=1"]}', b"[" * 60000,
           '{"set": ["about.name=é"]}'.encode("latin-1")]
    answers += [client.post("/api/plan", content=body, headers={"content-type": "application/json"}) for body in raw]
    for answer in answers:
        assert 400 <= answer.status_code < 500 or answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "application/json" and "Traceback" not in answer.text
    assert answers[0].status_code == 422 and answers[5].status_code == 422
    assert client.get("/", params={"set": NESTED}).status_code == 200   # the page: the scenario and why


def test_every_5xx_is_json_and_logged_with_its_traceback(client, monkeypatch, caplog):
    """An unexpected error: 500 with a JSON body that holds no traceback, and the traceback in the log."""
    def broken(self, job):
        raise RuntimeError("a bug")
    monkeypatch.setattr(app_module.Triage, "__call__", broken)
    # serve() sends the log to stderr and stops propagation (server.configure_logging); an earlier test that
    # started a server leaves it so, and caplog listens at the root
    monkeypatch.setattr(logging.getLogger("clusterplan.serve"), "propagate", True)
    with caplog.at_level(logging.ERROR, logger="clusterplan.serve"):
        answer = client.get("/api/plan")
    assert answer.status_code == 500 and answer.json()["error"]["message"].startswith("internal error")
    assert "RuntimeError" not in answer.text
    assert "Traceback" in caplog.text and "RuntimeError: a bug" in caplog.text


def test_unknown_paths_and_methods_are_json(client):
    """404 and 405 are JSON like every other error."""
    for answer in (client.get("/nothing"), client.delete("/api/plan")):
        assert answer.status_code in (404, 405) and "error" in answer.json()


def test_concurrent_heavy_requests_each_get_their_answer(client):
    """Heavy requests queued for the one worker each get their own document."""
    models = ["llama2-7b", "llama2-13b", "llama3-8b"] * 2
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(lambda m: client.get("/api/train", params={"set": f'workload.model="{m}"'}), models))
    assert all(a.status_code == 200 and a.json()["model"]["name"] == m for m, a in zip(models, got))


def test_worker_threads_do_not_outlive_close():
    """close() kills the worker processes."""
    app = create_app(workers=1)
    client = testclient.TestClient(app, base_url="http://127.0.0.1")
    assert client.get("/api/train", params={"set": 'workload.model="llama2-7b"'}).status_code == 200
    processes = [w.process for pool in (app.state.workers.light, app.state.workers.heavy) for w in pool._workers]
    assert any(p is not None for p in processes)
    app.state.workers.close()
    assert all(p is None or p.poll() is not None for p in processes) and threading.active_count() < 100


def test_the_scenarios_own_files_are_allowed(tmp_path, monkeypatch):
    """A scenario naming a config.json (relative, as the command line reads it): the page plans it, and a
    request may name the same file again, spelled relative or absolute."""
    (tmp_path / "tiny.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 128}))
    (tmp_path / "scenario.toml").write_text('[workload]\nmodel_config = "tiny.json"\n')
    monkeypatch.chdir(tmp_path)
    app = create_app("scenario.toml", workers=1)
    try:
        client = testclient.TestClient(app, base_url="http://127.0.0.1")
        for value in ("tiny.json", str(tmp_path / "tiny.json"), "./tiny.json"):
            answer = client.post("/api/plan", json={"set": [f'workload.model_config="{value}"']})
            assert answer.status_code == 200, answer.text
        assert_refused(client.post("/api/plan", json={"set": ['workload.model_config="scenario.toml"']}),
                       "workload.model_config")
    finally:
        app.state.workers.close()


def test_file_valued_keys_are_declared_on_the_schema():
    """The keys the guard covers come from the schema's declaration, not a list in serve/."""
    from clusterplan.schema import file_keys
    from clusterplan.spec import Spec

    assert file_keys(Spec) == ("finance.utilization_from_trace", "workload.model_config")


def test_forty_fifo_requests_do_not_freeze_the_server(client, private):
    """40 concurrent requests naming a FIFO (before: every worker thread blocked for ever and /, /api/plan and
    /static/app.js timed out): each refused at once, and the page and its script still answered."""
    override = f'workload.model_config="{private / "fifo"}"'
    started = time.perf_counter()
    with ThreadPoolExecutor(40) as pool:
        refused = list(pool.map(lambda _: client.get("/api/plan", params={"set": override}), range(40)))
    assert all(a.status_code == 422 for a in refused) and time.perf_counter() - started < 20
    assert client.get("/static/app.js").status_code == 200 and client.get("/").status_code == 200


def test_a_slow_light_request_is_bounded_too():
    """A plan without workload slower than the light deadline (here any plan against a 20 ms deadline) is refused
    at the deadline, and the server goes on. The issue's slow light request (storage.tb_per_gpu at its limit on
    1,024 nodes: 82 million TB) is now refused at once, naming the key."""
    app = create_app(workers=1)
    try:
        client = testclient.TestClient(app, base_url="http://127.0.0.1")
        assert client.get("/api/plan").status_code == 200   # a light worker started
        app.state.workers.light.deadline_s = 0.02
        started = time.perf_counter()
        answer = client.post("/api/plan", json={"set": ["cluster.num_nodes=1024"]})
        assert answer.status_code == 422 and "budget of 0.02 s" in answer.json()["error"]["message"]
        assert time.perf_counter() - started < 10
        app.state.workers.light.deadline_s = 5.0
        assert client.get("/api/plan").status_code == 200
        answer = client.post("/api/plan", json={"set": ["cluster.num_nodes=1024", "storage.tb_per_gpu=10000"]})
        assert_refused(answer, "storage.tb_per_gpu")
        assert "more than the 1,000,000 TB" in answer.json()["error"]["message"]
    finally:
        app.state.workers.close()


def test_bodies_and_page_overrides_go_through_the_bounded_parsers(client):
    """A JSON body nested past parsing.MAX_DEPTH (70 arrays, which json.loads reads) is refused by the bounded
    parser, as a scenario would be (before: read by a bare json.loads and answered 200); a BOM-prefixed body is
    still read; the page's controls read an override with spec's parse_override, so a deep one is a ConfigError
    naming the key (before: raw tomllib, RecursionError)."""
    from clusterplan.errors import ConfigError
    from clusterplan.serve.controls import _typed
    deep = b'{"set": [], "x": ' + b"[" * 70 + b"]" * 70 + b"}"
    answer = client.post("/api/plan", content=deep, headers={"content-type": "application/json"})
    assert answer.status_code == 422
    assert answer.json()["error"]["message"] == "request body: not JSON (or nested too deeply)"
    bom = client.post("/api/plan", content='\ufeff{"set": ["cluster.num_nodes=2"]}'.encode("utf-8"),
                      headers={"content-type": "application/json"})
    assert bom.status_code == 200 and bom.json()["design"]["num_nodes"] == 2
    assert _typed(['workload.tokens = "2T"', "cluster.num_nodes=4", "about.name=plain words"]) == {
        "workload.tokens": "2T", "cluster.num_nodes": 4, "about.name": "plain words"}
    with pytest.raises(ConfigError) as raised:
        _typed([NESTED])
    assert raised.value.key == "cluster.num_nodes"
