"""Parse quantities with units at the edge; everything inside is SI.

Decimal and binary prefixes are distinct (GB = 1e9 B, GiB = 2**30 B); rates in
bits are converted to bytes once, here. Money is USD with optional K/M/B
suffixes ("$30K", "1.2M").
"""

from __future__ import annotations

import re

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}


def _units() -> dict[str, tuple[str, float]]:
    """Every accepted unit symbol -> (dimension, factor to SI)."""
    table: dict[str, tuple[str, float]] = {}
    for prefix, scale in {**_DECIMAL, **_BINARY}.items():
        table[f"{prefix}B"] = ("bytes", scale)
        table[f"{prefix}B/s"] = ("bytes/s", scale)
        table[f"{prefix}Bps"] = ("bytes/s", scale)
    for prefix, scale in _DECIMAL.items():
        table[f"{prefix}b/s"] = ("bytes/s", scale / 8)
        table[f"{prefix}bps"] = ("bytes/s", scale / 8)
        table[f"{prefix}bit/s"] = ("bytes/s", scale / 8)
        table[f"{prefix}FLOP/s"] = ("flop/s", scale)
        table[f"{prefix}FLOPS"] = ("flop/s", scale)
        table[f"{prefix}W"] = ("watts", scale)
        table[f"{prefix}Wh"] = ("joules", scale * 3600)
    for symbol, scale in {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9,
                          "min": 60.0, "h": 3600.0, "d": 86400.0}.items():
        table[symbol] = ("seconds", scale)
    table["USD"] = ("usd", 1.0)
    return table


UNITS = _units()
_MONEY_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}
_COUNT_SUFFIX = {**_MONEY_SUFFIX, "G": 1e9, "T": 1e12}  # plain counts: "2T" tokens, "300B"
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/]*)\s*$")
_MONEY = re.compile(r"^\s*\$?\s*([-+]?(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([kKMB]?)\s*$")
_COUNT = re.compile(r"^\s*([-+]?(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([kKMBGT]?)\s*$")


class UnitError(ValueError):
    """A string that is not a quantity of the expected dimension."""


def dimension(unit: str) -> str:
    """The dimension of a unit symbol ("kW" -> "watts")."""
    return UNITS[unit][0]


def parse(text: str | int | float, unit: str) -> float:
    """Value of ``text`` expressed in ``unit`` ("2PB" in "TB" -> 2000.0).

    A bare number is taken to be in ``unit`` already.
    """
    if isinstance(text, bool):
        raise UnitError(f"expected a quantity in {unit}, got {text!r}")
    if isinstance(text, (int, float)):
        return float(text)
    if unit == "USD":
        return _parse_money(text)
    if unit == "count":
        match = _COUNT.match(text)
        if not match:
            raise UnitError(f"cannot read {text!r} as a count (e.g. 2T, 300B, 1.5e12)")
        return float(match.group(1).replace(",", "").replace("_", "")) * _COUNT_SUFFIX[match.group(2)]
    want, scale = UNITS[unit]
    match = _QUANTITY.match(text)
    if not match:
        raise UnitError(f"cannot read {text!r} as a quantity in {unit}")
    number, symbol = match.groups()
    if not symbol:
        return float(number.replace(",", "").replace("_", ""))
    if symbol not in UNITS:
        raise UnitError(f"unknown unit {symbol!r} in {text!r} (expected {want}, e.g. {unit})")
    got, factor = UNITS[symbol]
    if got != want:
        raise UnitError(f"{text!r} is in {got}, expected {want} (e.g. {unit})")
    return float(number.replace(",", "").replace("_", "")) * factor / scale


def _parse_money(text: str) -> float:
    match = _MONEY.match(text)
    if not match:
        raise UnitError(f"cannot read {text!r} as an amount in USD (e.g. 30000, \"$30K\", \"1.2M\")")
    number, suffix = match.groups()
    return float(number.replace(",", "").replace("_", "")) * _MONEY_SUFFIX[suffix]


def format_usd(amount: float) -> str:
    """"$1.23M", "$45.6K", "$789" for tables."""
    sign = "-" if amount < 0 else ""
    value = abs(amount)
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= limit:
            return f"{sign}${value / limit:,.2f}{suffix}"
    return f"{sign}${value:,.0f}"


def format_quantity(value: float) -> str:
    """"16,384", "49,152", "0.25", "12.5": a count or amount with thousands separators, never "1.638e+04"."""
    if float(value).is_integer() or abs(value) >= 1e3:
        return f"{value:,.0f}"
    return f"{value:,.4g}"


SINGULAR = {"switches": "switch", "GPUs": "GPU", "racks": "rack", "nodes": "node", "engineers": "engineer",
            "months": "month", "years": "year", "days": "day", "jobs": "job", "links": "link", "servers": "server",
            "interruptions": "interruption", "layouts": "layout", "runs": "run", "users": "user",
            "fabrics": "fabric", "modes": "mode", "counts": "count", "terms": "term", "offers": "offer"}


def plural(count: float, noun: str) -> str:
    """``noun`` (a plural, "switches") as ``count`` takes it: "switch" for exactly one (or minus one), else as given.
    The one place the reports choose a noun's number: "1 switch", "3 switches", "1.5 engineers", "+1 month"."""
    return SINGULAR.get(noun, noun) if abs(count) == 1 else noun


def format_si(value: float, symbol: str) -> str:
    """"3.35 TB/s", "989.4 TFLOP/s", "700 W": an SI value with a decimal prefix."""
    for prefix, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.4g} {prefix}{symbol}"
    return f"{value:.4g} {symbol}"


_BINARY_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """A message size as nccl-tests reads it: binary K/M/G/T suffixes ("128M" = 128 x 2**20 bytes)."""
    match = _BINARY_SIZE.match(str(text))
    if not match:
        raise UnitError(f"cannot read {text!r} as a size (e.g. 8, 64K, 128M, 8G)")
    number, suffix = match.groups()
    return int(float(number) * 1024 ** "_KMGT".index(suffix.upper() or "_"))


def format_size(size_bytes: float) -> str:
    """"8", "64K", "128M", "8G": the binary form nccl-tests users read."""
    for suffix, scale in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{int(size_bytes // scale)}{suffix}"
    return f"{int(size_bytes)}"
