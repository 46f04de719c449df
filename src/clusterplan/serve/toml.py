"""The scenario TOML that reproduces a view: the effective scenario (``as_table(spec)``) written out.

Only what a scenario holds: tables of scalars, lists of scalars and inline tables of numbers. Loading the text
gives back the same Spec (tests pin the round trip).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from clusterplan.schema import AUTO

BARE = re.compile(r"[A-Za-z0-9_-]+")


def _key(name: str) -> str:
    return name if BARE.fullmatch(name) else json.dumps(name)


def value(item: Any) -> str:
    """``item`` as a TOML value; None (a value left to the design) as "auto"."""
    if item is None:
        return json.dumps(AUTO)
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, (int, float)):
        if isinstance(item, float) and not math.isfinite(item):
            return "inf" if item > 0 else ("-inf" if item < 0 else "nan")
        return repr(item)
    if isinstance(item, str):
        return json.dumps(item)   # a JSON string is a TOML basic string
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(v) for v in item) + "]"
    if isinstance(item, dict):
        return "{" + ", ".join(f"{_key(k)} = {value(v)}" for k, v in item.items()) + "}"
    raise TypeError(f"no TOML for {type(item).__name__}")


def dumps(table: dict[str, Any], *, header: str = "") -> str:
    """One ``[section]`` per top-level table, its keys in order; ``header`` as comment lines first."""
    lines = [f"# {line}" for line in header.splitlines()]
    for section, items in table.items():
        lines += ["", f"[{_key(section)}]"] + [f"{_key(k)} = {value(v)}" for k, v in items.items()]
    return "\n".join(lines).lstrip("\n") + "\n"
