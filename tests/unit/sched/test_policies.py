"""Hand-worked schedules for FIFO, EASY, conservative backfilling and fair-share."""

import math
from unittest.mock import patch

import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched import Cluster, Multifactor, simulate
from clusterplan.sched import waiting
from clusterplan.sched.easy import BACKFILL_DEPTH, Backfill
from clusterplan.sched.policies import Fifo
from sched_cases import jobs, starts

# J0 holds 3 of 4 GPUs until 10; J1 (4 GPUs) must wait for it: its reservation is t=10 with no GPU to spare.
SHORT_FILLER = jobs((0, 3, 10), (1, 4, 5), (2, 1, 5))
LONG_FILLER = jobs((0, 3, 10), (1, 4, 5), (2, 1, 20))


def test_fifo_keeps_order():
    """FIFO: J2 waits behind J1 although a GPU is idle from t=2 to t=10."""
    assert starts(SHORT_FILLER, "fifo") == [0, 10, 15]


def test_easy_backfills_a_job_that_ends_before_the_reservation():
    """EASY: J2 (1 GPU, 2 + 5 <= 10) starts at t=2; J1 still starts at its reservation, t=10."""
    assert starts(SHORT_FILLER, "easy") == [0, 10, 2]
    schedule = simulate(SHORT_FILLER, Cluster(num_nodes=4, gpus_per_node=1), "easy")
    assert schedule.reserved_s.tolist()[1] == 10 and schedule.backfilled.tolist() == [False, False, True]


def test_easy_refuses_a_job_that_would_delay_the_head():
    """EASY: J2 (2 + 20 > 10) would hold the GPU J1 needs at t=10: it waits, J1 starts at 10, J2 at 15."""
    assert starts(LONG_FILLER, "easy") == [0, 10, 15]


def test_easy_backfills_a_long_job_on_gpus_the_head_does_not_need():
    """EASY: J1 needs 3 of the 4 GPUs free at t=10, so a 1-GPU job of 100 s may start at t=2."""
    trace = jobs((0, 2, 10), (1, 3, 5), (2, 1, 100))
    assert starts(trace, "easy") == [0, 10, 2]


# J1's reservation (t=10) leaves 2 GPUs spare; J3 (1 GPU, 30 s) fits them, but would hold one GPU over
# [20, 30) where conservative has reserved all 4 for J2.
SECOND_IN_LINE = jobs((0, 3, 10), (1, 2, 10), (2, 4, 10), (3, 1, 30))


def test_easy_may_delay_the_second_job():
    """EASY protects only the head: J3 starts at 3 and pushes J2 from 20 to 33."""
    assert starts(SECOND_IN_LINE, "easy") == [0, 10, 33, 3]


def test_conservative_protects_every_reservation():
    """Conservative: J3 gets the first slot that delays nobody, t=30, and J2 keeps t=20."""
    assert starts(SECOND_IN_LINE, "conservative") == [0, 10, 20, 30]
    schedule = simulate(SECOND_IN_LINE, Cluster(num_nodes=4, gpus_per_node=1), "conservative")
    assert schedule.reserved_s.tolist() == [0, 10, 20, 30]


def test_conservative_backfills_where_nobody_is_delayed():
    """Conservative also starts SHORT_FILLER's J2 at t=2 (it ends before J1's slot)."""
    assert starts(SHORT_FILLER, "conservative") == [0, 10, 2]


def test_conservative_compresses_when_a_job_ends_early():
    """J0 asked for 10 s but ends at 5: J1, reserved for t=10, moves up to t=5."""
    trace = jobs((0, 2, 5, 10), (1, 2, 5))
    schedule = simulate(trace, Cluster(num_nodes=2, gpus_per_node=1), "conservative")
    assert schedule.start_s.tolist() == [0, 5] and schedule.reserved_s.tolist() == [0, 10]


def test_easy_recomputes_the_reservation_when_a_job_ends_early():
    """J0 (asked 20 s) ends at 3, moving J2's reservation from 20 to 10: J3 (4 + 8 > 10) may no longer
    backfill, which the stale reservation would have let it do, delaying J2 to 12."""
    trace = jobs((0, 2, 3, 20), (0, 2, 10), (1, 4, 5), (4, 2, 8))
    schedule = simulate(trace, Cluster(num_nodes=4, gpus_per_node=1), "easy")
    assert schedule.start_s.tolist() == [0, 0, 10, 15] and schedule.reserved_s[2] == 20


def test_fairshare_puts_the_light_user_first():
    """User 0 ran 2 GPUs for 1000 s; at t=1000 user 1's job goes first although submitted 10 s later."""
    trace = jobs((0, 2, 1000, 1000, 0), (10, 2, 100, 100, 0), (20, 2, 100, 100, 1))
    assert starts(trace, "fifo", num_gpus=2) == [0, 1000, 1100]
    assert starts(trace, "easy", num_gpus=2) == [0, 1000, 1100]
    assert starts(trace, "fairshare", num_gpus=2) == [0, 1100, 1000]


def test_fairshare_age_can_outweigh_usage():
    """With the age weight far above the fair-share weight the older job of the heavy user goes first."""
    trace = jobs((0, 2, 1000, 1000, 0), (10, 2, 100, 100, 0), (20, 2, 100, 100, 1))
    priority = Multifactor(weight_age=1e9, weight_fairshare=1.0, max_age_s=1e6)
    schedule = simulate(trace, Cluster(num_nodes=2, gpus_per_node=1), "fairshare", priority=priority)
    assert schedule.start_s.tolist() == [0, 1000, 1100]


def test_multi_node_jobs_take_whole_nodes():
    """5 GPUs on 4-GPU nodes hold both nodes: a 1-GPU job waits until they are free."""
    trace = jobs((0, 5, 10), (1, 1, 10))
    schedule = simulate(trace, Cluster(num_nodes=2, gpus_per_node=4), "easy")
    assert schedule.start_s.tolist() == [0, 10] and schedule.demand.tolist() == [8, 1]


def test_single_node_jobs_stay_on_one_node():
    """Two nodes with 1 GPU free each cannot hold a 2-GPU job: it waits for a node, though 2 GPUs are idle."""
    trace = jobs((0, 3, 10), (0, 3, 100), (2, 2, 5))
    assert starts(trace, "easy", num_nodes=2, gpus_per_node=4) == [0, 0, 10]


def test_easy_node_reservation_leaves_room_for_a_long_job():
    """The head (2 GPUs) is reserved on node 0 at t=10; a 1-GPU 50 s job may take node 0's spare GPU now."""
    trace = jobs((0, 3, 10), (0, 3, 100), (2, 2, 5), (3, 1, 50), (4, 2, 50))
    schedule = simulate(trace, Cluster(num_nodes=2, gpus_per_node=4), "easy")
    assert schedule.start_s.tolist()[:4] == [0, 0, 10, 3]
    assert schedule.start_s[2] <= schedule.reserved_s[2]


@pytest.mark.parametrize("policy", ["fifo", "easy", "conservative", "fairshare"])
def test_an_empty_cluster_starts_jobs_at_once(policy):
    """Jobs that fit together all start at their submission."""
    trace = jobs((0, 1, 10), (1, 2, 10), (2, 1, 10))
    assert starts(trace, policy) == [0, 1, 2]


def test_unknown_policy_is_a_config_error():
    """A policy name that is not registered names the choices."""
    with pytest.raises(ConfigError, match="fifo, easy, conservative, fairshare"):
        simulate(SHORT_FILLER, Cluster(num_nodes=4, gpus_per_node=1), "sjf")


def test_a_policy_is_a_plug_in():
    """Any factory with the Policy interface can be simulated: a FIFO that reports its own name."""
    class Named(Fifo):
        name = "mine"

    schedule = simulate(SHORT_FILLER, Cluster(num_nodes=4, gpus_per_node=1), Named)
    assert schedule.policy == "mine" and schedule.start_s.tolist() == [0, 10, 15]
    assert all(math.isnan(t) for t in schedule.reserved_s)


def test_easy_backfills_at_any_depth():
    """EASY finds a job that fits behind any number of queued jobs that do not (the queue is grouped by demand and
    estimate, issue 19 item 9); the one-by-one scan fair-share builds on reads only BACKFILL_DEPTH of them."""
    # 4 GPUs: a 3-GPU job runs long, the head wants all 4, fillers want 2 (never fit), then a 1-GPU short job
    def trace(fillers: int):
        return jobs((0, 3, 1000), (1, 4, 10), *((2, 2, 10) for _ in range(fillers)), (3, 1, 5))
    assert starts(trace(BACKFILL_DEPTH - 3), "easy")[-1] == 3
    assert starts(trace(BACKFILL_DEPTH), "easy")[-1] == 3
    assert starts(trace(BACKFILL_DEPTH - 3), Backfill)[-1] == 3
    assert starts(trace(BACKFILL_DEPTH), Backfill)[-1] > 3


def test_conservative_reserves_within_its_depth_only():
    """Past ``depth`` queued jobs a job holds no reservation and cannot backfill; when one of the first starts it
    gets its reservation, and starts no later than it (issue 19 item 9)."""
    # 4 GPUs: a 3-GPU job runs long, a 4-GPU job waits for it, then a short 1-GPU job that fits beside the first
    trace = jobs((0, 3, 1000), (1, 4, 10), (2, 1, 5))
    unbounded = simulate(trace, Cluster(num_nodes=4, gpus_per_node=1), "conservative")
    assert unbounded.start_s.tolist() == [0, 1000, 2]
    bounded = simulate(trace, Cluster(num_nodes=4, gpus_per_node=1), "conservative", depth=1)
    assert bounded.start_s.tolist() == [0, 1000, 1010]      # the short job reserved only once the 4-GPU job started
    assert bounded.reserved_s.tolist() == [0, 1000, 1010]
    assert (bounded.start_s <= bounded.reserved_s).all()


def test_easy_groups_backfill_a_job_ending_at_the_reservation():
    """The grouped queue (used past SCAN_BELOW jobs, here for any queue): when the 1-GPU job ends at t=2, J3 may
    backfill if it ends by J2's reservation (t=10): exactly at it (2 + 8) yes, a second later no."""
    with patch.object(waiting, "SCAN_BELOW", 0):
        assert starts(jobs((0, 3, 10), (0, 1, 2), (1, 4, 5), (1, 1, 8)), "easy") == [0, 0, 10, 2]
        assert starts(jobs((0, 3, 10), (0, 1, 2), (1, 4, 5), (1, 1, 9)), "easy") == [0, 0, 10, 15]
