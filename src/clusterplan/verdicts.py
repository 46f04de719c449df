"""The acceptance thresholds (the scenario's ``[accept]`` section) and the one rule that turns a
measured / predicted ratio into a verdict (docs/accept.md, "Thresholds")."""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.schema import FROZEN, check, unit

ACCEPT_SCHEMA = "clusterplan.accept/1"           # the document of `clusterplan accept` (docs/json.md)
VERDICTS = ("pass", "warn", "fail", "skip")     # worst first after skip: fail > warn > pass


@dataclass(**FROZEN)
class AcceptThresholds:
    """Fail below ``fail_ratio`` of the prediction, warn below ``warn_ratio``; collectives smaller than
    ``large_bytes`` (latency-bound, where the model is least exact) use the ``small_`` pair."""

    fail_ratio: float = 0.85
    warn_ratio: float = 0.92
    small_fail_ratio: float = 0.5
    small_warn_ratio: float = 0.7
    large_bytes: float = unit("B", default=256 * 2**20)

    def __post_init__(self) -> None:
        for fail, warn in (("fail_ratio", "warn_ratio"), ("small_fail_ratio", "small_warn_ratio")):
            check(0.05 <= getattr(self, fail) <= 1.0, fail, f"must be in [0.05, 1], got {getattr(self, fail)}")
            check(getattr(self, fail) <= getattr(self, warn) <= 1.0, warn,
                  f"must be in [{fail} ({getattr(self, fail)}), 1], got {getattr(self, warn)}")
        check(1 <= self.large_bytes <= 2**40, "large_bytes", f"must be between 1 B and 1 TiB, got {self.large_bytes:g}")

    def ratios(self, size_bytes: float | None) -> tuple[float, float]:
        """(fail, warn) for a collective of ``size_bytes`` (None: a GEMM or a copy, the large pair)."""
        if size_bytes is not None and size_bytes < self.large_bytes:
            return self.small_fail_ratio, self.small_warn_ratio
        return self.fail_ratio, self.warn_ratio


def verdict(ratio: float, fail_ratio: float, warn_ratio: float) -> str:
    """"fail" below ``fail_ratio``, "warn" below ``warn_ratio``, else "pass"."""
    return "fail" if ratio < fail_ratio else "warn" if ratio < warn_ratio else "pass"


def worst(verdicts) -> str:
    """The worst of ``verdicts`` (fail > warn > pass > skip); "skip" for none."""
    found = set(verdicts)
    return next((name for name in ("fail", "warn", "pass") if name in found), "skip")
