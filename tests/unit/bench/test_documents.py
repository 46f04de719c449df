"""The clusterplan.bench/1 document: from an nccl-tests log, from a benchmark run, and its row shape."""

import json
from pathlib import Path

import pytest

from clusterplan import __version__
from clusterplan.bench.collectives import BenchConfig, BenchRun, RankInfo, Row, Timing
from clusterplan.bench.documents import BENCH_SCHEMA, bench_document, bench_run_document, log_document, rows_as_dicts
from clusterplan.bench.nccltests import parse_nccl_tests

DATA = Path(__file__).parent / "data"


def load(name: str, **kwargs):
    return parse_nccl_tests((DATA / name).read_text(), source=name, **kwargs)


def test_rows_as_dicts_is_json_ready():
    """rows_as_dicts gives the clusterplan.bench/1 row shape, numbers as numbers, None as null."""
    rows = rows_as_dicts(load("oop_only.log"))
    assert rows[0] == {
        "size_bytes": 1048576, "count": 32768, "dtype": "float", "redop": "sum", "root": None,
        "out_of_place": {"time_s": pytest.approx(35.1e-6), "algbw_GBps": 29.87,
                         "busbw_GBps": 26.14, "wrong": 0, "error": None},
        "in_place": None,
    }
    text = json.dumps(rows_as_dicts(load("p4de_all_reduce.log")))
    assert json.loads(text)[-1]["in_place"]["busbw_GBps"] == 78.33


def test_log_document_keeps_the_envelope_and_versions():
    """A parsed log: the envelope, the versions it printed and its footer; every row names the op."""
    doc = log_document(load("p4de_all_reduce.log"), source="p4de.log")
    assert list(doc)[:9] == ["schema", "version", "op", "world_size", "num_nodes", "hosts", "backend", "versions",
                             "source"]
    assert (doc["schema"], doc["version"], doc["op"], doc["world_size"]) == (BENCH_SCHEMA, __version__,
                                                                            "all_reduce", 16)
    assert doc["backend"] == "nccl-tests log" and doc["source"] == "p4de.log"
    assert doc["versions"] == {"nccl-tests": "2.18.3+cuda12.2", "nccl": "2.18.3+cuda12.2"}
    assert doc["avg_busbw_GBps"] == 18.5359
    assert all(row["op"] == "all_reduce" for row in doc["rows"]) and len(doc["rows"]) == 29
    json.dumps(doc, allow_nan=False)


def test_bench_document_keeps_a_row_op_of_its_own():
    """A row that names its op keeps it; one that does not gets the document's; extra keys come last."""
    doc = bench_document(op="all_reduce", rows=[{"size_bytes": 8}, {"size_bytes": 16, "op": "reduce"}],
                         world_size=2, extra={"wrong": 0})
    assert [row["op"] for row in doc["rows"]] == ["all_reduce", "reduce"]
    assert doc["hosts"] == [] and doc["versions"] == {} and list(doc)[-1] == "wrong"


def test_bench_run_document_from_a_run_by_hand():
    """2 ranks on one host, all_reduce: busbw factor 1, redop sum, root null, in-place kept, the mean busbw."""
    config = BenchConfig(op="all_reduce", min_bytes=1024, max_bytes=1024)
    ranks = tuple(RankInfo(rank=r, host="h", pid=100 + r, local_rank=r, device="cpu", device_name="CPU")
                  for r in range(2))
    oop = Timing(time_s=1e-6, algbw_GBps=1.024, busbw_GBps=1.024, wrong=0)
    inp = Timing(time_s=2e-6, algbw_GBps=0.512, busbw_GBps=0.512, wrong=0)
    run = BenchRun(config=config, backend="gloo", ranks=ranks, notes=("a note",), versions=(("torch", "x"),),
                   rows=(Row(size_bytes=1024, count=256, out_of_place=oop, in_place=inp),))
    doc = bench_run_document(run)
    assert (doc["world_size"], doc["num_nodes"], doc["hosts"], doc["bus_factor"]) == (2, 1, ["h"], 1.0)
    (row,) = doc["rows"]
    assert (row["redop"], row["root"], row["dtype"]) == ("sum", None, "float")
    assert row["in_place"] == {"time_s": 2e-6, "algbw_GBps": 0.512, "busbw_GBps": 0.512, "wrong": 0}
    assert doc["avg_busbw_GBps"] == pytest.approx(0.768) and doc["wrong"] == 0
    assert doc["average"] == {"mode": 1, "meaning": "mean over ranks"} and doc["config"]["min_bytes"] == 1024
    assert doc["versions"] == {"torch": "x"} and doc["notes"] == ["a note"]
