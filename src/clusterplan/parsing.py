"""TOML and JSON read with bounds checked before the parser sees the text (docs/inputs.md).

Python's parsers recurse once per nested ``[`` or ``{`` (500 of them exhaust the interpreter's stack) and
refuse integers of more than 4,300 digits with a bare ``ValueError``. Every text clusterplan parses (a
scenario, a ``--set`` value, a model's config.json, measured and calibration files, a Philly job log, the live
server's request bodies and overrides) goes through ``parse_toml`` or ``parse_json``: nesting past
``MAX_DEPTH`` or a number of more than ``MAX_DIGITS`` digits is a ``ConfigError`` naming the source, key and
line, raised before the parser runs.
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from typing import Any

from clusterplan.errors import ConfigError

MAX_DEPTH = 64         # levels of arrays and tables; a scenario needs 3, a model's config.json 4
MAX_DIGITS = 100       # digits in one number; a float64 holds 17 significant ones

_JSON_STRING = r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
_TOML_STRING = (r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""' r"|'''[\s\S]*?'''" r'|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
                r"|'[^'\n]*'|#[^\n]*")
_NUMBER = r"[0-9](?:_?[0-9]){%d,}" % MAX_DIGITS      # more than MAX_DIGITS digits
_OPEN_CLOSE = {"[": 1, "{": 1, "]": -1, "}": -1}
_OPEN_CLOSE_BYTES = {ord(bracket): step for bracket, step in _OPEN_CLOSE.items()}
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def parse_toml(text: str, *, source: str = "", key: str = "", first_line: int | None = 1) -> dict[str, Any]:
    """``tomllib.loads(text)`` once ``check_text`` passes; its ``TOMLDecodeError`` reaches the caller."""
    check_text(text, _TOML_STRING, source=source, key=key, first_line=first_line)
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise _too_deep(source, key, None) from None
    check_depth(value, source=source, key=key)     # dotted keys (a.b.c...) nest without a bracket
    return value


def parse_json(text: str, *, source: str = "", key: str = "") -> Any:
    """``json.loads(text)`` once ``check_text`` passes; its ``JSONDecodeError`` reaches the caller."""
    check_text(text, _JSON_STRING, source=source, key=key)
    try:
        return json.loads(text)
    except RecursionError:
        raise _too_deep(source, key, None) from None


def check_text(text: str, strings: str, *, source: str = "", key: str = "", first_line: int | None = 1) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH`` or a digit run longer than ``MAX_DIGITS`` outside the
    strings (and comments) that the regular expression ``strings`` matches; ``first_line`` None names no line.

    A text of at most ``MAX_DEPTH`` opening brackets and no long digit run passes at once; any other is
    measured with its strings removed, and only one that fails is scanned token by token to name the line."""
    if text.count("[") + text.count("{") <= MAX_DEPTH and not re.search(_NUMBER, text):
        return
    if not _suspect(re.sub(strings, '""', text)):
        return
    depth = 0
    for match in re.finditer(f"{strings}|[\\[{{\\]}}]|{_NUMBER}", text):     # the slow pass, only to name the line
        token = match.group()
        if token in _OPEN_CLOSE:
            depth += _OPEN_CLOSE[token]
            if depth > MAX_DEPTH:
                raise _too_deep(source, key, _line(text, match.start(), first_line))
        elif token[0].isdigit():
            digits = sum(c.isdigit() for c in token)
            raise ConfigError(f"a number of {digits} digits; at most {MAX_DIGITS}", source=source, key=key,
                              line=_line(text, match.start(), first_line))
    raise _too_deep(source, key, None)


def check_depth(value: Any, *, source: str = "", key: str = "") -> None:
    """Refuse a parsed value whose tables and arrays nest deeper than ``MAX_DEPTH`` (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(source, key, None)
        if isinstance(item, dict):
            stack += [(child, depth + 1) for child in item.values()]
        elif isinstance(item, list):
            stack += [(child, depth + 1) for child in item]


def _suspect(text: str) -> bool:
    """Whether ``text`` (its strings removed) nests past ``MAX_DEPTH`` or holds a number of too many digits."""
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)   # UTF-8 keeps ASCII bytes apart
    deep = bool(brackets) and max(itertools.accumulate(map(_OPEN_CLOSE_BYTES.__getitem__, brackets))) > MAX_DEPTH
    return deep or re.search(_NUMBER, text) is not None


def _line(text: str, position: int, first_line: int | None) -> int | None:
    return None if first_line is None else first_line + text.count("\n", 0, position)


def _too_deep(source: str, key: str, line: int | None) -> ConfigError:
    return ConfigError(f"arrays and tables nested more than {MAX_DEPTH} deep", source=source, key=key, line=line)
