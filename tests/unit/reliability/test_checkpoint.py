"""Young's and Daly's intervals, Daly's goodput, its limits, and the checkpoint's blocking time."""

import math

import pytest

from clusterplan.reliability.checkpoint import (Checkpoint, daly_interval_s, first_order_waste, goodput_fraction,
                                                outcome, transfer_s, waste_split, young_interval_s)

MIN, HOUR = 60.0, 3600.0


@pytest.mark.parametrize("mtti_s, young_min, daly_min, paper_min, goodput", [
    (24 * HOUR, 120.00, 116.69, 117, 0.913),
    (6 * HOUR, 60.00, 56.71, 57, 0.819),
    (15 * MIN, 12.25, 9.14, 9.1, 0.200),
])
def test_daly_2006_test_cases(mtti_s, young_min, daly_min, paper_min, goodput):
    """Daly (FGCS 2006) Figs. 3-5: delta = 5 min, R = 10 min; intervals as printed there (117, 57, 9.1 min).

    Values from ../shared/research/scheduling_reliability.md B4, recomputed from the formulas."""
    delta, restart = 5 * MIN, 10 * MIN
    assert young_interval_s(delta, mtti_s) / MIN == pytest.approx(young_min, abs=0.005)
    daly = daly_interval_s(delta, mtti_s)
    assert daly / MIN == pytest.approx(daly_min, abs=0.005)
    assert daly / MIN == pytest.approx(paper_min, abs=0.5 if paper_min > 10 else 0.05)
    assert goodput_fraction(daly, delta, restart, mtti_s) == pytest.approx(goodput, abs=5e-4)


def test_solve_time_cancels_out_of_goodput():
    """T_w for Daly's 500-hour solve at M = 24 h is 500 h / goodput = 547.9 h (his model, eq. for T_w)."""
    delta, restart, mtti = 5 * MIN, 10 * MIN, 24 * HOUR
    tau = daly_interval_s(delta, mtti)
    wall = mtti * math.exp(restart / mtti) * math.expm1((tau + delta) / mtti) * 500 * HOUR / tau
    assert wall / HOUR == pytest.approx(500 / goodput_fraction(tau, delta, restart, mtti))
    assert wall / HOUR == pytest.approx(547.9, abs=0.1)


def test_young_hand_case():
    """delta = 1 min, M = 24 h: sqrt(2 x 60 x 86,400) = 3,219.9 s."""
    assert young_interval_s(60, 86400) == pytest.approx(3219.94, abs=0.01)


def test_daly_is_m_from_delta_2m_and_at_most_8m_over_9_below():
    """tau = M when delta >= 2M; just below, Daly's series tends to 8M/9 (u = 1 in 2u - 4u^2/3 + 2u^3/9)."""
    assert daly_interval_s(7200, 3600) == 3600 and daly_interval_s(10_000, 3600) == 3600
    assert daly_interval_s(7200 - 1e-9, 3600) == pytest.approx(3600 * 8 / 9)


def test_goodput_limits():
    """No failures: only checkpoints cost, tau/(tau + delta); free checkpoints and restarts: 1 - tau/2M."""
    assert goodput_fraction(600, 6, 900, 1e15) == pytest.approx(600 / 606)
    assert goodput_fraction(60, 0, 0, 1e7) == pytest.approx(1 - 30 / 1e7, rel=1e-9)
    assert goodput_fraction(60, 0, 0, 1e7) < 1
    # a restart of R multiplies wall time by e^(R/M)
    assert goodput_fraction(60, 6, 3600, 36000) == pytest.approx(goodput_fraction(60, 6, 0, 36000) * math.exp(-0.1))


def test_first_order_waste_agrees_for_small_ratios():
    """delta/tau + (tau/2 + R)/M matches the exact model to second order: 1 % apart at 0.4 % waste."""
    tau, delta, restart, mtti = 1800.0, 3.0, 600.0, 30 * 86400.0
    exact = 1 - goodput_fraction(tau, delta, restart, mtti)
    approx = first_order_waste(tau, delta, restart, mtti)
    assert approx == pytest.approx(exact, rel=0.01)


def test_waste_split_sums_to_one_minus_goodput():
    """Checkpoint, lost work and restart shares add to 1 - goodput; no checkpoint cost, no checkpoint share."""
    parts = waste_split(900, 20, 600, 3 * HOUR)
    assert parts.total == pytest.approx(1 - goodput_fraction(900, 20, 600, 3 * HOUR))
    assert min(parts.checkpoint, parts.lost_work, parts.restart) > 0
    assert waste_split(900, 0, 600, 3 * HOUR).checkpoint == 0


def checkpoint(asynchronous, write_s=30.0):
    return Checkpoint(size_bytes=1e12, asynchronous=asynchronous, metadata_s=6.0, copy_s=0.5, write_s=write_s,
                      write_Bps=1e12 / write_s, reload_s=20.0)


def test_blocking_time_sync_and_async():
    """Synchronous: metadata + max(copy, write); asynchronous: metadata + copy, plus the wait for a late write."""
    assert checkpoint(False).blocking_s() == 36.0
    assert checkpoint(True).blocking_s() == 6.5
    assert checkpoint(True).blocking_s(interval_s=10.0) == pytest.approx(6.5 + 20.0)
    assert checkpoint(True).unsaved_s == 30.0 and checkpoint(False).unsaved_s == 0.0


def test_interval_choice():
    """Daly's optimum by default; the scenario's when given; an asynchronous write longer than Daly's sets it."""
    run = dict(mtti_s=10 * HOUR, detect_s=300.0, overhead_s=600.0)
    sync = outcome(checkpoint(False), interval_s=0, **run)
    assert sync.interval.chosen_by == "daly" and sync.interval.used_s == daly_interval_s(36.0, 10 * HOUR)
    assert sync.restart.total_s == 300 + 600 + 20 and sync.blocking_s == 36.0
    fixed = outcome(checkpoint(True), interval_s=600.0, **run)
    assert fixed.interval.chosen_by == "scenario" and fixed.interval.used_s == 600.0
    slow = outcome(checkpoint(True, write_s=5000.0), interval_s=0, **run)
    assert slow.interval.chosen_by == "write time" and slow.interval.used_s == 5000.0
    assert slow.restart.unsaved_s == 5000.0


def test_async_beats_sync_when_the_write_is_slow():
    """A 60 s write blocks a synchronous job; asynchronously only metadata and copy do."""
    run = dict(mtti_s=5 * HOUR, interval_s=0, detect_s=300.0, overhead_s=600.0)
    assert outcome(checkpoint(True, 60.0), **run).goodput > outcome(checkpoint(False, 60.0), **run).goodput


def test_transfer_is_capped_by_the_tier_or_the_clients():
    """1 TB: 16 clients x 40 GB/s = 640 GB/s > a 65 GB/s tier; 1 client at 40 GB/s is the cap."""
    assert transfer_s(1e12, tier_Bps=65e9, clients=16, client_Bps=40e9) == pytest.approx((1e12 / 65e9, 65e9))
    assert transfer_s(1e12, tier_Bps=65e9, clients=1, client_Bps=40e9) == pytest.approx((25.0, 40e9))
