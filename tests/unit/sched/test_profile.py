"""The availability profile of conservative backfilling."""

import numpy as np

from clusterplan.sched.profile import Profile


def test_earliest_slot_skips_a_gap_too_short():
    """4 GPUs, all busy over [10, 20): a 2-GPU job of 15 s at t=0 cannot use [0, 10); it goes at 20."""
    profile = Profile(1, 4)
    profile.add(10, 20, np.array([0]), 4, sign=-1)
    assert profile.earliest(2, 15, 0)[0] == 20
    assert profile.earliest(2, 10, 0)[0] == 0


def test_whole_node_slot_needs_every_node_free_long_enough():
    """Two 2-GPU nodes; node 1 busy over [0, 5): a 2-node job starts at 5."""
    profile = Profile(2, 2)
    profile.add(0, 5, np.array([1]), 1, sign=-1)
    start, nodes, per_node = profile.earliest(4, 1, 0)
    assert (start, nodes.tolist(), per_node) == (5, [0, 1], 2)


def test_giving_back_restores_the_profile():
    """Taking then giving back the same GPUs leaves the free counts unchanged; advance drops the past."""
    profile = Profile(1, 4)
    profile.add(2, 8, np.array([0]), 3, sign=-1)
    profile.add(2, 8, np.array([0]), 3)
    assert set(profile.free[:, 0].tolist()) == {4}
    profile.advance(9)
    assert profile.times.size == 1 and profile.times[0] <= 9


def test_room_never_rules_out_a_slot_the_search_finds():
    """On random booked profiles, a reservation ``Room`` says cannot begin earlier gets, from the full search,
    its own start (tried after an early end gives GPUs back), and ``same_start`` gives the nodes the full search gives."""
    rng = np.random.default_rng(7)
    proved = moves = 0
    for _ in range(300):
        num_nodes, size = int(rng.integers(1, 5)), int(rng.choice([1, 2, 4]))
        profile = Profile(num_nodes, size)
        now = float(rng.integers(0, 5))
        booked = []
        for _ in range(int(rng.integers(1, 12))):
            demand = int(rng.integers(1, num_nodes * size + 1))
            if demand > size:
                demand -= demand % size
            duration = float(rng.integers(1, 20))
            start, nodes, per_node = profile.earliest(demand, duration, now)
            profile.add(start, start + duration, nodes, per_node, sign=-1)
            booked.append((demand, duration, start, nodes, per_node))
        gone = booked.pop(int(rng.integers(len(booked))))   # an early end: its GPUs come back
        profile.add(gone[2], gone[2] + gone[1], gone[3], gone[4])
        room = profile.room(now)
        for demand, duration, start, nodes, per_node in booked:
            step = room.step_before(start)
            earlier = profile.earliest_without(demand, duration, now, start, nodes, per_node)[0] < start
            moves += earlier
            if start <= now or step < 0 or room.can_move_earlier(step, demand, duration, start):
                continue
            proved += 1
            slot = profile.earliest_without(demand, duration, now, start, nodes, per_node)
            same = profile.same_start(demand, start, duration, nodes, per_node)
            assert slot[0] == same[0] == start
            assert slot[1].tolist() == same[1].tolist() and slot[2] == same[2]
    assert proved > 300 and moves > 150


def test_a_step_that_ended_at_now_does_not_choose_the_node():
    """GPUs given back from ``now`` without an advance leave the step before ``now`` in the profile; the earliest
    slot at ``now`` ranks nodes by what they have free at ``now`` (all 4: the lowest, node 0), not by that stale
    step's row (node 0 had 1 free), as a longer property run found (issue 31)."""
    profile = Profile(3, 4)
    profile.add(0, 10, np.array([0]), 3, sign=-1)
    profile.advance(5)
    profile.add(5, 10, np.array([0]), 3)
    start, nodes, per_node = profile.earliest(3, 7, 5)
    assert (start, nodes.tolist(), per_node) == (5, [0], 3)
