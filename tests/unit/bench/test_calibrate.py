import math
import re

import pytest

from clusterplan.bench.calibrate import Calibration, calibrate, fit_rows, read_calibration, to_toml
from clusterplan.errors import ConfigError

MiB = 2**20


def alpha_beta(latency_s, busbw_Bps, n=16):
    factor = 2 * (n - 1) / n
    return lambda size: latency_s + size * factor / busbw_Bps


def test_an_exact_alpha_beta_line_is_recovered():
    """Points on t = 20 us + S x 2(n-1)/n / 100 GB/s give back those two terms in every regime."""
    line = alpha_beta(20e-6, 100e9)
    sizes = [2**k for k in range(3, 34)]
    fit = fit_rows("all_reduce", 16, [(s, line(s)) for s in sizes])
    assert len(fit.regimes) == 3
    for regime in fit.regimes:
        assert regime.latency_s == pytest.approx(20e-6, rel=1e-6)
        assert regime.busbw_Bps == pytest.approx(100e9, rel=1e-6)
    assert fit.max_error < 1e-9 and fit.time_s(MiB) == pytest.approx(line(MiB))


def test_regimes_follow_a_protocol_switch():
    """A latency-bound small regime and a bandwidth-bound large one are each fitted; the fastest applies."""
    small, large = alpha_beta(10e-6, 5e9), alpha_beta(300e-6, 200e9)
    points = [(s, min(small(s), large(s)) if s < 64 * 2**10 else large(s)) for s in (2**k for k in range(3, 34))]
    fit = fit_rows("all_reduce", 16, points)
    assert fit.median_error < 0.01
    assert fit.regimes[0].latency_s == pytest.approx(10e-6, rel=1e-3)
    assert fit.regimes[-1].busbw_Bps == pytest.approx(200e9, rel=1e-3)


def test_latency_is_never_negative():
    """Noisy points that would give a negative intercept refit with zero latency."""
    points = [(MiB, 1e-6), (2 * MiB, 3e-6), (4 * MiB, 7e-6)]
    fit = fit_rows("all_gather", 8, points)
    assert all(r.latency_s >= 0 and r.busbw_Bps > 0 for r in fit.regimes)


def test_toml_round_trip_keeps_provenance():
    """to_toml then read_calibration gives the same fits, sources and date."""
    line = alpha_beta(20e-6, 100e9)
    doc = {"op": "all_reduce", "world_size": 16, "source": 'run "a".log', "hosts": ["gpu-01", "gpu-02"],
           "rows": [{"size_bytes": s, "out_of_place": {"time_s": line(s)}} for s in (2**k for k in range(3, 30))]}
    import datetime

    calibration = calibrate([doc], today=datetime.date(2026, 12, 2))
    back = read_calibration(to_toml(calibration), source="c.toml")
    assert isinstance(back, Calibration)
    assert back.sources == ('run "a".log',) and back.hosts == ("gpu-01", "gpu-02") and back.created == "2026-12-02"
    fit = back.find("all_reduce", 16)
    assert fit is not None and fit.time_s(MiB) == pytest.approx(line(MiB), rel=1e-5)
    assert back.find("all_reduce", 8) is None


@pytest.mark.parametrize("text, message", [
    ("[[fit]\n", "malformed calibration TOML"),
    ('[[fit]]\nop = "allreduce"\nnum_ranks = 8\n', "not a clusterplan calibration"),
    ('[[fit]]\nop = "all_reduce"\nnum_ranks = 8\nsizes_bytes = [8, 16]\nmedian_error = 0\nmax_error = 0\n'
     'regimes = [{ min_size_bytes = 0, latency_s = 1e-5, busbw_Bps = -1 }]\n', "busbw_Bps > 0"),
])
def test_bad_calibration_files(text, message):
    """A broken calibration file is a ConfigError naming the file."""
    with pytest.raises(ConfigError, match=message) as error:
        read_calibration(text, source="c.toml")
    assert str(error.value).startswith("c.toml:")


def test_documents_without_op_or_ranks_are_refused():
    """A log that names neither its collective nor its ranks needs --op and --ranks."""
    with pytest.raises(ConfigError, match="--op and --ranks"):
        calibrate([{"op": None, "world_size": None, "rows": [], "source": "x.log"}])
    with pytest.raises(ConfigError, match="need at least 2"):
        fit_rows("all_reduce", 8, [(8, 1e-5)])
    assert math.isfinite(fit_rows("all_reduce", 8, [(8, 1e-5), (16, 1.1e-5)]).time_s(1024))


@pytest.mark.parametrize("rows, message", [
    ([1], "rows[0]: needs size_bytes and out_of_place.time_s"),
    ([{"size_bytes": 8, "out_of_place": {"time_s": 1e-5}}, {"size_bytes": "16", "out_of_place": {"time_s": 1e-5}}],
     "rows[1]: needs"),
    ([{"size_bytes": 8, "out_of_place": [1]}], "rows[0]: needs"),
    ([{"size_bytes": 8, "out_of_place": {"time_s": float("nan")}}], "rows[0]: needs"),
    ({"a": 1}, "rows: expected a list"),
])
def test_malformed_rows_are_named(rows, message):
    """A clusterplan.bench/1 document whose rows are not rows (found by the fuzz campaign: exit 1 before)."""
    with pytest.raises(ConfigError, match=re.escape(message)) as error:
        calibrate([{"op": "all_reduce", "world_size": 8, "rows": rows, "source": "m.json"}])
    assert str(error.value).startswith("m.json: ")


def test_deep_or_long_calibration_toml_is_refused():
    with pytest.raises(ConfigError, match="c.toml:1: arrays and tables nested more than 64 deep"):
        read_calibration("fit = " + "[" * 500, source="c.toml")
