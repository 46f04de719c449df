"""The validation runs survive nccl-tests text and the parser, and calibration fits them."""

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
calibration_gain = pytest.importorskip("calibration_gain")

from clusterplan.bench.calibrate import fit_rows  # noqa: E402
from clusterplan.bench.nccltests import parse_nccl_tests  # noqa: E402

if not (calibration_gain.DATA / "nccl_tests_allreduce_tables.csv").exists():
    pytest.skip("shared validation data not beside this checkout", allow_module_level=True)
RUNS = calibration_gain.runs(calibration_gain.DATA)


@pytest.mark.parametrize("test_id", sorted(RUNS))
def test_round_trip_through_the_nccl_tests_format(test_id):
    """Rendered as nccl-tests prints and parsed back, every row keeps its numbers."""
    rows = RUNS[test_id]
    log = parse_nccl_tests(calibration_gain.as_log(rows), source=test_id)
    assert log.op == "all_reduce" and len(log.rows) == len(rows)
    for parsed, row in zip(log.rows, rows):
        assert parsed.size_bytes == int(row["size_bytes"]) and parsed.count == int(row["count"])
        assert parsed.dtype == row["dtype"] and parsed.redop == row["redop"]
        for placement, prefix in ((parsed.out_of_place, "oop"), (parsed.in_place, "ip")):
            assert placement.time_s == pytest.approx(float(row[f"{prefix}_time_us"]) * 1e-6, rel=5e-3, abs=1e-8)
            assert placement.busbw_GBps == pytest.approx(float(row[f"{prefix}_busbw_GBps"]), abs=0.006)
            assert placement.wrong == int(row[f"{prefix}_wrong"])


@pytest.mark.parametrize("test_id", sorted(RUNS))
def test_calibration_beats_the_shipped_model_on_its_run(test_id):
    """Fitted on a run, the calibrated times are closer to it than the model's."""
    import numpy as np

    from clusterplan.perf.collectives import predict

    rows = RUNS[test_id]
    ranks = int(rows[0]["num_ranks"])
    points = [(float(r["size_bytes"]), float(r["oop_time_us"]) * 1e-6) for r in rows]
    model = predict("all_reduce", np.array([s for s, _ in points]), calibration_gain.TABLE_RUNS[test_id].system, ranks)
    before = np.mean([abs(m - t) / t for m, (_, t) in zip(model.time_s, points)])
    fit = fit_rows("all_reduce", ranks, points)
    after = np.mean([abs(fit.time_s(s) - t) / t for s, t in points])
    assert after < before and after < 0.10
