"""How TCO, cost per GPU-hour and break-even move with the uncertain prices and rates (docs/sensitivity.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from clusterplan.catalog import Catalog
from clusterplan.errors import ConfigError
from clusterplan.plan.core import priced, resolved
from clusterplan.schema import FROZEN
from clusterplan.sensitivity import MAX_SAMPLES, Sensitivity, sensitivity
from clusterplan.spec import Spec


@dataclass(**FROZEN)
class Analysis:
    """The sensitivity of ``spec`` (resolved: the scenario as analysed)."""

    spec: Spec
    sensitivity: Sensitivity


def analysis(spec: Spec, catalog: Catalog | None = None, *, samples: int, seed: int, offer: str | None = None,
             progress: Callable[[int], None] | None = None) -> Analysis:
    """Tornado and Monte Carlo of the resolved ``spec``; ``offer``: break-even against it (default the first)."""
    check_sampling(samples, seed)
    catalog = priced(spec, catalog)
    spec = resolved(spec, catalog)
    return Analysis(spec=spec, sensitivity=sensitivity(spec, catalog, samples=samples, seed=seed, offer=offer,
                                                       progress=progress))


def check_sampling(samples: int, seed: int) -> None:
    """The Monte Carlo's sample count and seed, checked before any work."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise ConfigError(f"must be between 1 and {MAX_SAMPLES:,}, got {samples}", key="--samples")
    if seed < 0:
        raise ConfigError(f"must be >= 0, got {seed}", key="--seed")
