"""The committed band table and docs/evidence.md equal what benchmarks/evidence.py produces from the validation
data now (a model change that moves a residual must regenerate them: python benchmarks/evidence.py --write)."""

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
evidence = pytest.importorskip("evidence")

if not evidence.validate_training.DATA.is_dir():
    pytest.skip("shared validation data not beside this checkout", allow_module_level=True)

DATA = evidence.table()


def test_the_committed_band_table_is_current():
    """src/clusterplan/perf/evidence.json is the script's output, byte for byte."""
    assert evidence.TABLE.read_text(encoding="utf-8") == evidence.table_text(DATA)


def test_docs_evidence_is_current():
    """docs/evidence.md is the script's output, byte for byte."""
    assert evidence.DOC.read_text(encoding="utf-8") == evidence.document(DATA)


def test_every_band_holds_its_median_and_few_points_widen_it():
    """low <= median <= high in every regime; a regime of fewer than 10 points covers its own extremes."""
    for kind in ("training", "collectives"):
        for key, row in DATA[kind]["regimes"].items():
            assert row["low"] <= row["median"] <= row["high"], key
            if row["n"] < 10:
                assert row["low"] <= row["min"] and row["high"] >= row["max"], key


def test_the_whole_run_band_covers_every_published_whole_run():
    """The "whole run" regime's band is its residuals' extremes: every published run lies inside it."""
    row = DATA["whole_run"]
    assert row["n"] == len(row["runs"]) >= 10
    assert all(row["low"] <= error <= row["high"] for error in row["runs"].values())


def test_multi_node_infiniband_collectives_are_validated():
    """Regression: the reference's fabric named itself out of domain ("no validated multi-node collective over
    infiniband") until NVIDIA's InfiniBand points were added."""
    from clusterplan.perf.evidence import collective_band

    assert "infiniband" in DATA["collectives"]["envelope"]["technologies"]
    band = collective_band(gpu="h100-sxm", num_nodes=2, size_bytes=2**30, technology="infiniband")
    assert not any("infiniband" in reason for reason in band.out_of_domain)
