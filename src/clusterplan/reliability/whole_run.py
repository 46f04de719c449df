"""What a whole training run spends beyond its steady-state step: each known cause its own line
(docs/reliability.md#whole-run).

The steady state (the layout search's tokens/s) trains every token at the run's main sequence length and
batch, never stops and holds every GPU it pays for. A published run does not:

- **batch-size ramp-up**: the first tokens train at a fraction b of the batch. A step's time is
  T = C + F, C the part that scales with the batch (the micro-batches' compute and communication), F the part
  that does not (pipeline fill and drain, exposed gradient reduction, optimizer step), so a token at b x the
  batch takes (C + F / b) / (C + F) of a steady-state token;
- **multi-stage runs**: context-extension stages train tokens at a longer sequence, each token costing its
  model FLOPs there over its FLOPs at the main length (attention grows with the sequence);
- **evaluation pauses**: every ``eval_interval_steps`` the run evaluates for ``eval_steps`` forward-only
  steps, a third of a training step each (2N of the 6N FLOPs per token);
- **data-pipeline pauses**: a share of the wall clock the GPUs wait for data (0 unless stated);
- **failures and restarts, checkpoint stalls**: the goodput model (model.py);
- **the share of the reservation the job held**: GPU-hours are billed on every reserved GPU, the job runs on
  ``held_fraction`` of them (hot spares, nodes drained for repair).

What these causes do not explain is the "whole run" evidence regime (docs/evidence.md), a band from the
published whole runs. This module computes from numbers only; the plan supplies them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.errors import InfeasiblePlan
from clusterplan.schema import FROZEN

FORWARD_SHARE = 1 / 3      # a forward-only step: 2N of the 6N FLOPs per token of a training step


@dataclass(**FROZEN)
class Recipe:
    """The run's recipe beyond its steady state (the scenario's [reliability] whole-run keys)."""

    ramp_tokens_fraction: float = 0.0     # share of the tokens trained while the batch ramps up
    ramp_batch_fraction: float = 0.5      # ... at this share of the full batch
    long_context_tokens_fraction: float = 0.0   # share of the tokens in context-extension stages
    long_context_seq_len: int = 0         # ... at this sequence length (0 = none)
    eval_interval_steps: int = 0          # training steps between evaluations (0 = none)
    eval_steps: int = 0                   # forward-only steps per evaluation
    pause_fraction: float = 0.0           # share of the wall clock lost to data-pipeline stalls
    held_fraction: float = 1.0            # share of the reserved GPUs the job ran on


@dataclass(**FROZEN)
class WholeRun:
    """A run's time by cause: the steady state, then what each cause adds, in seconds of wall clock.

    ``lines`` add up to ``wall_clock_s``; ``billed_s`` is the wall clock of every reserved GPU
    (wall_clock / held_fraction), the figure GPU-hours and cost follow.
    """

    steady_s: float
    ramp_s: float
    long_context_s: float
    evaluation_s: float
    data_pause_s: float
    failures_s: float
    checkpoint_s: float
    held_fraction: float

    @property
    def useful_s(self) -> float:
        """Training time of every token, no stops: steady state, ramp-up and the longer stages."""
        return self.steady_s + self.ramp_s + self.long_context_s

    @property
    def wall_clock_s(self) -> float:
        return sum(self.lines().values())

    @property
    def billed_s(self) -> float:
        return self.wall_clock_s / self.held_fraction

    @property
    def idle_reserved_s(self) -> float:
        """The reserved GPUs' time the job did not hold, in wall-clock seconds of the whole reservation."""
        return self.billed_s - self.wall_clock_s

    def lines(self) -> dict[str, float]:
        return {"steady state": self.steady_s, "batch-size ramp-up": self.ramp_s,
                "context-extension stages": self.long_context_s, "evaluation pauses": self.evaluation_s,
                "data-pipeline pauses": self.data_pause_s, "failures and restarts": self.failures_s,
                "checkpoint stalls": self.checkpoint_s}

    def breakdown(self) -> dict[str, float]:
        """Every line in seconds of the reserved GPUs' time, the idle share last; adds up to ``billed_s``."""
        return {**self.lines(), "GPUs reserved, not held": self.idle_reserved_s}


def ramp_ratio(*, batch_scaled_s: float, fixed_s: float, batch_fraction: float) -> float:
    """A token's time at ``batch_fraction`` of the batch over its steady-state time: (C + F / b) / (C + F)."""
    if not 0 < batch_fraction <= 1:
        raise ValueError(f"batch fraction must be in (0, 1], got {batch_fraction}")
    return (batch_scaled_s + fixed_s / batch_fraction) / (batch_scaled_s + fixed_s)


def linear_ramp_batch_fraction(start_fraction: float) -> float:
    """The constant batch fraction that costs what a linear ramp from ``start_fraction`` of the batch to the full
    batch costs (Megatron-LM's --rampup-batch-size: equal samples at every batch size on the way).

    A token at batch fraction b costs C + F / b, so the ramp's tokens cost C + F x mean(1 / b); over b spread
    evenly on [b0, 1] that mean is ln(1 / b0) / (1 - b0), the reciprocal of the fraction returned. It is below
    the ramp's mean batch (1 + b0) / 2: the small batches at the start cost most per token.
    """
    if not 0 < start_fraction <= 1:
        raise ValueError(f"start fraction must be in (0, 1], got {start_fraction}")
    if start_fraction == 1:
        return 1.0
    return (1 - start_fraction) / math.log(1 / start_fraction)


def whole_run(recipe: Recipe, *, steady_s: float, ramp_ratio_: float, long_context_ratio: float,
              failure_waste: float, checkpoint_waste: float) -> WholeRun:
    """The run's time by cause from its steady-state time ``steady_s`` (every token at the main length and
    batch), a ramp-up token's time ratio, a long-context token's FLOP ratio, and the goodput model's wall-time
    fractions lost to failures (lost work and restarts) and to checkpoints.

    Evaluation pauses count against training steps (a fraction of the useful time); failures, checkpoints and
    data stalls against the wall clock: wall = (useful + evaluation) / (1 - failures - checkpoints - stalls).
    """
    ramp_s = steady_s * recipe.ramp_tokens_fraction * (ramp_ratio_ - 1)
    long_s = steady_s * recipe.long_context_tokens_fraction * (long_context_ratio - 1)
    useful_s = steady_s + ramp_s + long_s
    evaluation_s = (useful_s * recipe.eval_steps / recipe.eval_interval_steps * FORWARD_SHARE
                    if recipe.eval_interval_steps else 0.0)
    lost = failure_waste + checkpoint_waste + recipe.pause_fraction
    if lost >= 1:   # failures, checkpoints and data pauses take all the wall time: goodput 0
        raise InfeasiblePlan("the job never finishes: failures, checkpoints and data pauses take all of its time "
                             "(reliability.failure_rates, reliability.checkpoint_interval_min)")
    if not 0 <= lost:
        raise ValueError(f"wall-time losses must not be negative, got {lost}")
    wall_s = (useful_s + evaluation_s) / (1 - lost)
    return WholeRun(steady_s=steady_s, ramp_s=ramp_s, long_context_s=long_s, evaluation_s=evaluation_s,
                    data_pause_s=wall_s * recipe.pause_fraction, failures_s=wall_s * failure_waste,
                    checkpoint_s=wall_s * checkpoint_waste, held_fraction=recipe.held_fraction)
