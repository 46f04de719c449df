"""One root error; typed subclasses that also subclass the builtin they refine."""

from __future__ import annotations


class ClusterplanError(Exception):
    """Root of every error clusterplan raises on purpose."""


class ConfigError(ValueError, ClusterplanError):
    """A scenario, a ``--set`` override or a catalog file holds a bad value.

    ``key`` is the dotted key (``cluster.num_nodes``), ``source`` the file or
    ``--set`` it came from and ``line`` its line number where known.
    """

    def __init__(self, message: str, *, key: str = "", source: str = "", line: int | None = None):
        super().__init__(message)
        self.message = message
        self.key = key
        self.source = source
        self.line = line

    def __str__(self) -> str:
        where = self.source
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        parts = [p for p in (where, self.key) if p]
        return ": ".join([*parts, self.message])


class CatalogError(ConfigError):
    """A catalog id that does not exist, or a catalog entry that is malformed."""


class InfeasiblePlan(ClusterplanError):
    """The scenario cannot be built as asked (a server over its rack's power, ...)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
