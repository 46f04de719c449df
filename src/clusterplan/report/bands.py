"""A prediction and its evidence band as one statement, the same words on every surface.

The band (docs/evidence.md) is where published runs of the prediction's regime measured, relative to what the model
predicted for them, applied to this prediction. When it excludes the point, the model's value and the band disagree
in a known direction: the words say which way published runs fell and by how much, so a point outside its own range
reads as a finding, not a bug. For example::

    10.893 s predicted; published runs of this kind measured 2-9 % faster: 9.897 s to 10.677 s

Terminal (report/training.py), HTML and the live page (report/html_training.py) and the workbook (report/xlsx_cash.py)
all call ``band_statement`` or ``band_phrase``.
"""

from __future__ import annotations

from collections.abc import Callable

# kind of figure -> (word for a measured value below the point, word for one above it)
WORDS = {
    "time": ("faster", "slower"),     # a step, a run: less time is faster
    "rate": ("slower", "faster"),     # tokens/s, bandwidth: a lower rate is slower
    "cost": ("less", "more"),         # a cost in proportion to a time
}


def kind_of(name: str) -> str:
    """The kind of a document's figure by its name: ``tokens_per_s``/``busbw_GBps`` rates, ``*_usd`` costs, else
    times."""
    if name.startswith("tokens_per_s") or "GBps" in name:
        return "rate"
    return "cost" if "usd" in name else "time"


def band_phrase(value: float, low: float, high: float, fmt: Callable[[float], str], *, kind: str = "time",
                out_of_domain: bool = False) -> str:
    """What the band says about ``value``: "published runs of this kind measured 2-9 % faster: LOW to HIGH"."""
    below, above = WORDS[kind]
    runs = "published runs of every kind (none of this kind)" if out_of_domain else "published runs of this kind"
    span = _span(value, low, high, below, above)
    if kind == "cost":
        return f"at the speed {runs} measured, {span}: {fmt(low)} to {fmt(high)}"
    return f"{runs} measured {span}: {fmt(low)} to {fmt(high)}"


def band_statement(value: float, low: float, high: float, fmt: Callable[[float], str], *, kind: str = "time",
                   out_of_domain: bool = False) -> str:
    """The point and its band in one sentence: "10.893 s predicted; published runs of this kind measured ..."."""
    return f"{fmt(value)} predicted; " + band_phrase(value, low, high, fmt, kind=kind, out_of_domain=out_of_domain)


def _span(value: float, low: float, high: float, below: str, above: str) -> str:
    """How far the band lies from the point, in whole per cent: "2-9 % faster", "10 % faster to 17 % slower"."""
    if not value:
        return "around the prediction"
    first, last = low / value - 1, high / value - 1     # first <= last
    if last <= 0:
        return _percent(-last, -first) + f" {below}"
    if first >= 0:
        return _percent(first, last) + f" {above}"
    return f"{-first:.0%} {below} to {last:.0%} {above}".replace("%", " %")


def _percent(near: float, far: float) -> str:
    """"2-9 %" (or "3 %" where both round alike)."""
    near_text, far_text = f"{near * 100:.0f}", f"{far * 100:.0f}"
    return f"{near_text} %" if near_text == far_text else f"{near_text}-{far_text} %"
