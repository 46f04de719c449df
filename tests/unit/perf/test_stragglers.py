import pytest

from clusterplan.perf.stragglers import expected_max, implied_jitter, straggler_slowdown


def test_expected_max_of_normals_by_hand():
    """E[max] of 1, 2 and 8 standard normals: 0, 1/sqrt(pi), 1.4236 (tabulated order statistics)."""
    assert expected_max(1) == 0
    assert expected_max(2) == pytest.approx(0.5641896, abs=1e-5)
    assert expected_max(8) == pytest.approx(1.4236, abs=1e-4)


def test_expected_max_of_exponentials_is_harmonic():
    """Exponential delays: E[max] - mean = H_n - 1."""
    assert expected_max(4, "exponential") == pytest.approx(1 + 1 / 2 + 1 / 3 + 1 / 4 - 1)


def test_slowdown_grows_with_ranks_and_jitter():
    """More ranks or more jitter never shrink the expected loss."""
    losses = [straggler_slowdown(n, 0.02) for n in (1, 8, 64, 512, 4096)]
    assert losses == sorted(losses) and losses[0] == 0
    assert straggler_slowdown(64, 0.04) == pytest.approx(2 * straggler_slowdown(64, 0.02))


def test_the_public_twelve_percent_claim_implies_five_percent_jitter():
    """A 12 % loss at 64 GPUs needs a per-rank step-time cv of about 5.1 % (normal)."""
    assert implied_jitter(64, 0.12) == pytest.approx(0.0512, abs=5e-4)


def test_bad_arguments():
    """Zero ranks, negative jitter and unknown distributions are ValueErrors."""
    for call in (lambda: expected_max(0), lambda: straggler_slowdown(8, -0.1), lambda: expected_max(8, "cauchy")):
        with pytest.raises(ValueError):
            call()
