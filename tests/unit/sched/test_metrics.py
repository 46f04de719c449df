"""Metrics of a hand-worked schedule: waits, bounded slowdown (10 s bound), utilization, queue, users."""

import pytest

from clusterplan.sched import Cluster, simulate
from clusterplan.sched.metrics import bounded_slowdown, per_user, summarize, timeline
from sched_cases import jobs

# FIFO on 4 GPUs: J0 [0, 10) 3 GPUs, J1 [10, 15) 4 GPUs, J2 [15, 20) 1 GPU; waits 0, 9, 13.
SCHEDULE = simulate(jobs((0, 3, 10, 10, 0), (1, 4, 5, 5, 1), (2, 1, 5, 5, 1)),
                    Cluster(num_nodes=4, gpus_per_node=1), "fifo")


def test_waits_and_slowdown_by_hand():
    """Mean wait 22/3; median 9; bsld = max(1, (w + r) / max(r, 10)): 1, 1.4, 1.8."""
    metrics = summarize(SCHEDULE)
    assert metrics.mean_wait_s == pytest.approx(22 / 3) and metrics.median_wait_s == 9
    assert metrics.p95_wait_s == pytest.approx(9 + 0.9 * 4)
    assert metrics.mean_bounded_slowdown == pytest.approx((1 + 1.4 + 1.8) / 3)


def test_utilization_and_gpu_hours_by_hand():
    """GPU-seconds 30 + 20 + 5 = 55 over 4 GPUs x makespan 20 s."""
    metrics = summarize(SCHEDULE)
    assert metrics.makespan_s == 20 and metrics.utilization == pytest.approx(55 / 80)
    assert metrics.delivered_gpu_hours == pytest.approx(55 / 3600)


def test_queue_length_by_hand():
    """J1 waits [1, 10), J2 [2, 15): area 22 over 20 s; at most 2 wait at once."""
    metrics = summarize(SCHEDULE)
    assert metrics.mean_queue_length == pytest.approx(22 / 20) and metrics.max_queue_length == 2


def test_timeline_bins_average_the_step_functions():
    """Two bins of 10 s: GPUs in use 3 then (4*5 + 1*5)/10; their mean is the overall utilization."""
    line = timeline(SCHEDULE, 2)
    assert line.bin_s == 10 and line.utilization == pytest.approx((0.75, 2.5 / 4))
    assert sum(line.utilization) / 2 == pytest.approx(summarize(SCHEDULE).utilization)
    assert line.queue_length == pytest.approx((1.7, 0.5))


def test_per_user_outcome():
    """User 0: 30 GPU-s, no wait; user 1: 25 GPU-s, mean wait 11; the bigger user first."""
    users = per_user(SCHEDULE)
    assert [u.user for u in users] == ["0", "1"]
    assert users[0].share_of_gpu_hours == pytest.approx(30 / 55) and users[1].mean_wait_s == 11


def test_bounded_slowdown_bound():
    """A 1 s job that waited 9 s has slowdown 10 but bounded slowdown 1."""
    assert bounded_slowdown(9.0, 1.0) == 1.0 and bounded_slowdown(90.0, 10.0) == 10.0
