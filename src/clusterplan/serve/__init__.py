"""``clusterplan serve``: the live what-if page over plan/ and report/ (optional extra ``serve``; docs/serve.md).

``views`` answers every request as a pure function of (scenario, overrides) with the CLI's own functions and
the report's own renderers; ``app`` is the Starlette application over it and ``server`` runs it on uvicorn.
Starlette and uvicorn are imported inside the functions that need them, so that the CLI loads without the extra.
"""

from __future__ import annotations

import importlib.util

EXTRA = ("starlette", "uvicorn")


def missing() -> str | None:
    """The first package of the ``serve`` extra that is not installed, or None."""
    return next((name for name in EXTRA if importlib.util.find_spec(name) is None), None)
