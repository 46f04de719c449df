"""Tables (parsed TOML) -> frozen dataclasses, with errors that name the key.

One mechanism serves scenario files and catalog files alike. A field's type
annotation says what it accepts; ``unit(...)`` metadata lets a number field
also take a string with a unit ("50kW", "2PB", "$30K"), converted into the
unit the field's name carries. An optional field (``float | None``) also takes
"auto": None, a value the design derives (docs/scenario.md). Unknown keys, missing keys and wrong types are
``ConfigError``s naming the dotted key; ``__post_init__`` checks of values
raise ``ConfigError(key=field)`` and get the same treatment.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from clusterplan import units
from clusterplan.errors import ConfigError

Locate = Callable[[str], "int | None"]

FROZEN = dict(frozen=True, kw_only=True, slots=True)
AUTO = "auto"   # an optional field's value left to the design (None inside)


def unit(symbol: str, **kwargs: Any) -> Any:
    """A dataclass field holding a number in ``symbol`` that also accepts unit strings."""
    return dataclasses.field(metadata={"unit": symbol}, **kwargs)


def check(ok: bool, key: str, message: str) -> None:
    """Raise ``ConfigError`` for ``key`` unless ``ok``: the one validation helper."""
    if not ok:
        raise ConfigError(message, key=key)


def suggest(name: str, choices: typing.Iterable[str]) -> str:
    """" (did you mean 'a', 'b'?)" or ""."""
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.5)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def build(cls: type, table: Mapping[str, Any], *, path: str = "", locate: Locate = lambda _: None) -> Any:
    """Build dataclass ``cls`` from ``table``; ``path`` prefixes keys in errors."""
    def where(key: str) -> str:
        return f"{path}.{key}" if path else key

    if not isinstance(table, Mapping):
        raise ConfigError(f"expected a table, got {_kind(table)}", key=path, line=locate(path))
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in table:
        if key not in fields:
            what = "section" if not path else "key"
            hint = suggest(key, fields) if fields else f" ([{path}] takes no keys yet)"
            raise ConfigError(f"unknown {what}{hint}", key=where(key), line=locate(where(key)))
    values = {}
    for name, field in fields.items():
        if name not in table:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise ConfigError("missing required key", key=where(name), line=locate(path))
            continue
        values[name] = _convert(_hints(cls)[name], table[name], field.metadata.get("unit"),
                                where(name), locate)
    try:
        return cls(**values)
    except ConfigError as error:
        key = where(error.key) if error.key else path
        raise type(error)(error.message, key=key, source=error.source, line=locate(key)) from None


def _convert(hint: Any, value: Any, unit_symbol: str | None, key: str, locate: Locate) -> Any:
    def fail(expected: str) -> typing.NoReturn:
        raise ConfigError(f"expected {expected}, got {_kind(value)} {value!r}", key=key, line=locate(key))

    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [h for h in typing.get_args(hint) if h is not type(None)]
        return None if value is None or value == AUTO else _convert(options[0], value, unit_symbol, key, locate)
    if dataclasses.is_dataclass(hint):
        return build(hint, value, path=key, locate=locate)
    if origin is tuple:
        if not isinstance(value, list):
            fail("a list")
        item = typing.get_args(hint)[0]
        return tuple(_convert(item, v, unit_symbol, f"{key}[{i}]", locate) for i, v in enumerate(value))
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            fail("a table")
        item = typing.get_args(hint)[1]
        return types.MappingProxyType(
            {k: _convert(item, v, unit_symbol, f"{key}.{k}", locate) for k, v in value.items()})
    if hint is bool:
        if not isinstance(value, bool):
            fail("true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            fail("an integer")
        if abs(value) > MAX_INT:   # past a C long, numpy and math raised OverflowError far from the key
            raise ConfigError(f"must be at most {MAX_INT:,} in size, got {value}", key=key, line=locate(key))
        return value
    if hint is float:
        if isinstance(value, bool):
            fail("a number")
        if isinstance(value, (int, float)):
            try:
                number = float(value)
            except OverflowError:   # an integer past float's range
                number = math.inf
        elif isinstance(value, str) and unit_symbol:
            try:
                number = units.parse(value, unit_symbol)
            except units.UnitError as error:
                raise ConfigError(str(error), key=key, line=locate(key)) from None
        else:
            fail(f"a number (or a string with a unit, e.g. \"{_example(unit_symbol)}\")" if unit_symbol
                 else "a number")
        if not math.isfinite(number):   # inf, nan, 1e999, "1e999PB": no model has a use for them
            raise ConfigError(f"must be a finite number, got {value!r}", key=key, line=locate(key))
        return number
    if hint is str:
        if not isinstance(value, str):
            fail("a string")
        if "\0" in value:   # no id, name or path holds one; the OS refuses it in a path
            raise ConfigError("must not contain a NUL character", key=key, line=locate(key))
        return value
    raise TypeError(f"unsupported field type {hint!r} for {key}")  # a bug in a dataclass, not input


MAX_INT = 2**53   # the largest integer a float (and JSON's readers) hold exactly


def _example(symbol: str) -> str:
    return "$30K" if symbol == "USD" else f"10{symbol}"


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def locator(text: str) -> Locate:
    """Find the line of a dotted key (``section.key``) in TOML ``text``, if present."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+")
    assign = re.compile(r'^\s*("?)([^"=\s]+)\1\s*=')

    @functools.cache
    def locate(key: str) -> int | None:
        key = re.sub(r"\[\d+\]$", "", key)
        section, _, name = key.rpartition(".")
        current = ""
        for number, line in enumerate(lines, start=1):
            if (match := header.match(line)):
                current = match.group(1).replace('"', "")
                if current == key:
                    return number
                continue
            match = assign.match(line)
            if match and current == section and match.group(2) == name:
                return number
        return None

    return locate


def as_table(value: Any) -> Any:
    """A dataclass (or nested values) as plain dicts, lists and scalars (for JSON and TOML echoes)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_table(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {k: as_table(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_table(v) for v in value]
    return value


def positive(value: float, key: str) -> None:
    """A scenario key that must be > 0 (ConfigError naming ``key`` otherwise)."""
    check(value > 0, key, f"must be > 0, got {value}")


def non_negative(value: float | None, key: str) -> None:
    """A scenario key that must be >= 0; None ("auto") passes."""
    check(value is None or value >= 0, key, f"must be >= 0, got {value}")


def file_path(*, generated: str = "") -> Any:
    """A ``str`` field (default "", none) whose value names a file that a model reads; values that are
    ``generated`` or start with ``generated:`` (e.g. ``synthetic:jobs=100``) ask for generated input instead.
    Declared here, on the field, so that every reader of file-valued keys (the live server) sees them all."""
    return dataclasses.field(default="", metadata={"file": generated})


def file_values(value: Any, prefix: str = "") -> dict[str, str]:
    """The dotted key -> value of every ``file_path`` field of a dataclass tree whose value names a file
    ("" and generated inputs name none)."""
    found: dict[str, str] = {}
    for field in dataclasses.fields(value):
        item, key = getattr(value, field.name), f"{prefix}{field.name}"
        if "file" in field.metadata and item and not generated(item, field.metadata["file"]):
            found[key] = item
        elif dataclasses.is_dataclass(item):
            found |= file_values(item, f"{key}.")
    return found


def file_keys(cls: type, prefix: str = "") -> tuple[str, ...]:
    """The dotted keys of every ``file_path`` field of dataclass ``cls`` and the dataclasses it holds."""
    keys: list[str] = []
    for field in dataclasses.fields(cls):
        hint = _hints(cls)[field.name]
        if "file" in field.metadata:
            keys.append(f"{prefix}{field.name}")
        elif dataclasses.is_dataclass(hint):
            keys += file_keys(hint, f"{prefix}{field.name}.")
    return tuple(keys)


def generated(value: str, kind: str) -> bool:
    """Whether ``value`` asks for generated input of ``kind``: it is ``kind`` or starts with ``kind:``."""
    return bool(kind) and (value == kind or value.startswith(f"{kind}:"))
