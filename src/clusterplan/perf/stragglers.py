"""Stragglers: a synchronous step waits for its slowest rank (order statistics, docs/collectives.md).

Each of ``n`` ranks takes ``T (1 + X_i)`` with ``X_i`` independent, mean 0 and
coefficient of variation ``cv``. The step takes the maximum, so its expected
slowdown over ``T`` is ``cv x E[max of n standard variates]``:

- normal:      E[max] = integral of x n phi(x) Phi(x)^(n-1) dx (about sqrt(2 ln n) for large n)
- exponential: X_i = cv (E_i - 1) with E_i ~ Exp(1), E[max] = H_n - 1 (harmonic number): heavier tail
"""

from __future__ import annotations

import functools
import math


@functools.cache
def expected_max(num_ranks: int, distribution: str = "normal") -> float:
    """E[max of ``num_ranks`` i.i.d. standardised variates] (0 for one rank)."""
    if num_ranks < 1:
        raise ValueError(f"num_ranks must be >= 1, got {num_ranks}")
    if distribution == "exponential":
        return sum(1.0 / k for k in range(1, num_ranks + 1)) - 1.0
    if distribution != "normal":
        raise ValueError(f"distribution must be 'normal' or 'exponential', got {distribution!r}")
    import numpy as np

    x = np.linspace(-12.0, 12.0, 24001)
    cdf = 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    density = num_ranks * pdf * cdf ** (num_ranks - 1)
    integrate = getattr(np, "trapezoid", None) or np.trapz  # numpy >= 2.0 renamed it
    return float(integrate(x * density, x))


def straggler_slowdown(num_ranks: int, jitter_cv: float, distribution: str = "normal") -> float:
    """Expected fractional slowdown of a synchronous step of ``num_ranks`` ranks (0.05 = 5 % slower)."""
    if jitter_cv < 0:
        raise ValueError(f"jitter_cv must be >= 0, got {jitter_cv}")
    return jitter_cv * expected_max(num_ranks, distribution)


def implied_jitter(num_ranks: int, slowdown: float, distribution: str = "normal") -> float:
    """The per-rank coefficient of variation that a claimed slowdown at ``num_ranks`` implies."""
    spread = expected_max(num_ranks, distribution)
    return slowdown / spread if spread else float("inf")
