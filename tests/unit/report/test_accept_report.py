"""The clusterplan.accept/1 document, its terminal summary and HTML, and `report --measured` including it."""

import io
import json
import re

from clusterplan.bench.accept import AcceptRun, CollectiveRun, Settings
from clusterplan.bench.node_pairs import Node
from clusterplan.cli.main import main
from clusterplan.plan.accept import accept
from clusterplan.report.accept import accept_document, render_accept, render_accept_html
from clusterplan.report.figures import resolve
from clusterplan.spec import load_spec

NODES = (Node(name="gpu-01", ranks=(0, 1)), Node(name="gpu-02", ranks=(2, 3)), Node(name="gpu-03", ranks=(4, 5)))


def document():
    """A GPU run on three nodes against the design: gpu-02's rank 3 copies at a quarter of the PCIe rate."""
    settings = Settings(backend="nccl", device_kind="cuda", sizes=(256 << 20,), gemm_size=8192, gemm_dtype="bf16",
                        memcpy_bytes=256 << 20, iterations=20, warmup=5, pairing="all", ranks_per_node=None)
    devices = {rank: {"gemm_flops_per_s": 7.5e14, "h2d_Bps": 5.5e10 / (4 if rank == 3 else 1), "d2h_Bps": 5.5e10,
                      "h2h_Bps": None} for rank in range(6)}
    intra = [CollectiveRun(phase="intra-node", group=node.name, op="all_reduce", ranks=node.ranks, num_nodes=1,
                           rows=((256 << 20, 0.7e-3, 0),)) for node in NODES]
    run = AcceptRun(settings=settings, launcher="srun", world_size=6, hosts=("gpu-01",) * 2 + ("gpu-02",) * 2 +
                    ("gpu-03",) * 2, nodes=NODES, audits={node.name: {} for node in NODES}, devices=devices,
                    collectives=tuple(intra), phases=(("audit", 0.5), ("device", 2.0)), failure=None, elapsed_s=9.0)
    return accept_document(accept(load_spec("examples/starter-32.toml"), run))


def test_document_failing_nodes_first_with_measured_predicted_ratio_and_cause():
    doc = document()
    assert doc["schema"] == "clusterplan.accept/1" and doc["verdict"] == "fail" and doc["exit_code"] == 4
    assert doc["nodes"][0]["name"] == "gpu-02" and doc["nodes"][0]["verdict"] == "fail"
    (slow,) = [c for c in doc["checks"] if c["verdict"] == "fail" and c["check"] == "h2d"]
    assert slow["subject"] == "rank 3" and slow["measured"] == 13.75 and slow["ratio"] < 0.85
    assert "PCIe" in slow["cause"] and doc["counts"]["fail"] >= 1
    assert doc["measurements"]["devices"][3]["node"] == "gpu-02"
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc


def test_terminal_summary_lists_the_failing_node_first():
    stream = io.StringIO()
    render_accept(document(), stream)
    text = stream.getvalue()
    assert text.startswith("clusterplan accept: FAIL (exit 4)")
    table = text.split("\n\n")[1].splitlines()
    assert table[1].startswith("gpu-02") and "FAIL" in table[1]
    assert "FAIL  gpu-02: device, rank 3, h2d: 13.8 GB/s vs 51.2 GB/s" in text


def test_html_chart_highlights_the_failing_node_and_reads_the_document():
    doc = document()
    stream = io.StringIO()
    render_accept_html(doc, stream)
    html = stream.getvalue()
    failing = re.findall(r'data-node="([^"]+)" data-failing="true"', html)
    assert failing and set(failing) == {"gpu-02"}
    assert 'data-failing="false"' in html and "<script" not in html
    for pointer, value in re.findall(r'data-pointer="([^"]+)" data-value="([^"]+)"', html):
        assert repr(resolve(doc, pointer)) == value


def test_report_measured_includes_the_acceptance(tmp_path, capsys):
    """`report --measured accept.json` adds the acceptance section (HTML) and the document (JSON)."""
    path = tmp_path / "accept.json"
    path.write_text(json.dumps(document()))
    assert main(["report", "examples/starter-32.toml", "--measured", str(path), "--samples", "200",
                 "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert '<section id="acceptance">' in html and 'data-pointer="/acceptance/verdict"' in html
    assert main(["report", "examples/starter-32.toml", "--measured", str(path), "--samples", "200",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["acceptance"]["verdict"] == "fail"


def test_report_measured_refuses_a_broken_acceptance_document(tmp_path, capsys):
    path = tmp_path / "accept.json"
    path.write_text(json.dumps({"schema": "clusterplan.accept/1", "verdict": "pass"}))
    assert main(["report", "examples/starter-32.toml", "--measured", str(path)]) == 2
    assert "clusterplan.accept/1 document without exit_code" in capsys.readouterr().err
