"""The event core: heap order with a sequence tie-breaker, batching of one instant, the Schedule."""

import numpy as np

from clusterplan.sched import Cluster, EventQueue, simulate
from clusterplan.sched.engine import FINISH, SUBMIT
from sched_cases import jobs


def test_events_pop_by_time_then_push_order():
    """Equal times pop in the order they were pushed; earlier times first."""
    queue = EventQueue()
    for time, job in ((5.0, 1), (1.0, 2), (5.0, 3), (1.0, 4)):
        queue.push(time, FINISH, job)
    assert [queue.pop() for _ in range(4)] == [(1.0, FINISH, 2), (1.0, FINISH, 4), (5.0, FINISH, 1),
                                               (5.0, FINISH, 3)]
    assert len(queue) == 0 and queue.next_time() == float("inf")


def test_a_completion_frees_gpus_for_a_submission_at_the_same_instant():
    """J1 is submitted exactly when J0 ends: it starts then, whatever order the two events were pushed in."""
    trace = jobs((0, 4, 10), (10, 4, 5))
    schedule = simulate(trace, Cluster(num_nodes=4, gpus_per_node=1), "fifo")
    assert schedule.start_s.tolist() == [0, 10] and schedule.end_s.tolist() == [10, 15]
    assert schedule.num_events == 4 and SUBMIT != FINISH


def test_jobs_larger_than_the_cluster_are_left_out_and_counted():
    """A 16-GPU job on 8 GPUs cannot run: dropped with its reason, the rest replayed."""
    trace = jobs((0, 16, 10), (1, 2, 10))
    schedule = simulate(trace, Cluster(num_nodes=1, gpus_per_node=8), "easy")
    assert schedule.trace.num_jobs == 1 and schedule.trace.dropped == {"larger than the cluster": 1}


def test_schedule_arrays_are_read_only():
    """The result is frozen: its arrays cannot be written."""
    schedule = simulate(jobs((0, 1, 1)), Cluster(num_nodes=1, gpus_per_node=1), "fifo")
    assert not schedule.start_s.flags.writeable and np.array_equal(schedule.wait_s, [0.0])
