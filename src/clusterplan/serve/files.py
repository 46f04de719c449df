"""Which files a request may make the server read: only those its operator named (docs/serve.md, "Security").

A scenario key that names a file (``schema.file_path``: ``workload.model_config``,
``finance.utilization_from_trace``) may hold, in a request, only "", a generated input (``synthetic:...``) or
a file the person who started the server named on its command line: one the scenario names, or one given to
``--allow-file``. A request's value is compared as written (made absolute, ``os.path.abspath``, with no look
at the disk), so an answer says nothing about whether a path exists and no request-named path is opened,
stat-ed or resolved; a refusal names the key and echoes only the request's own value.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN, file_values
from clusterplan.spec import Spec


@dataclass(**FROZEN)
class Files:
    """The absolute paths (as named, and with links resolved) that requests may name in file-valued keys."""

    allowed: frozenset[str] = frozenset()

    def check(self, spec: Spec) -> None:
        """Raise ``ConfigError`` naming the first file-valued key of ``spec`` that names another file."""
        for key, value in file_values(spec).items():
            if os.path.abspath(value) not in self.allowed:
                raise ConfigError(f"the live server reads only files named when it was started (the scenario's "
                                  f"own, or --allow-file); got {value!r}", key=key)


def operator_files(scenario: Spec, extra: Iterable[str] = ()) -> Files:
    """The files the scenario (as loaded at start) names in file-valued keys, and those given to
    ``--allow-file``; each must be a regular file or a folder (a FIFO or a device is refused, here at start)."""
    allowed: set[str] = set()
    named = [(key, value) for key, value in file_values(scenario).items()] + [("--allow-file", p) for p in extra]
    for key, value in named:
        try:
            mode = os.stat(value).st_mode
        except OSError as error:
            raise ConfigError(f"cannot read {value}: {error.strerror}", key=key) from None
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise ConfigError(f"{value} is not a regular file or a folder", key=key)
        allowed |= {os.path.abspath(value), os.path.realpath(value)}
    return Files(allowed=frozenset(allowed))
