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
