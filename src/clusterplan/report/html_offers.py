"""The cloud offers in a chart: the cheapest of each pricing mode in colour and named, the others grey behind.

Ten near-identical dashed lines cannot be told apart; the question a buyer asks of the chart is how owning
compares with the best on-demand, reserved and spot price, so those are drawn out and the rest kept as context
(each still with its tooltip, and every offer in the table under the chart).
"""

from __future__ import annotations

from collections.abc import Sequence

from clusterplan.report import svg
from clusterplan.units import plural

OTHER = "#b8b8b8"   # offers drawn in grey behind the highlighted ones


def cheapest_per_mode(cloud: Sequence[dict]) -> list[int]:
    """The index of the cheapest offer (total over the horizon) in each pricing mode, in the offers' order."""
    best: dict[str, int] = {}
    for i, offer in enumerate(cloud):
        if offer["pricing"] not in best or offer["total_usd"] < cloud[best[offer["pricing"]]]["total_usd"]:
            best[offer["pricing"]] = i
    return sorted(best.values())


def offer_style(index: int, cheapest: Sequence[int], name: str = "") -> dict:
    """A cheapest-in-its-mode offer in colour and named at its line's end; any other thin and grey."""
    if index in cheapest:
        return {"colour": svg.PALETTE[cheapest.index(index) % len(svg.PALETTE)], "label": name or "", "width": 2.0}
    return {"colour": OTHER, "width": 1.2}


def others_entry(cloud: Sequence[dict], cheapest: Sequence[int]) -> list[tuple[str, str, bool]]:
    """The legend line for the grey offers, when there are any."""
    others = len(cloud) - len(cheapest)
    if not others:
        return []
    return [(f"{others} other {plural(others, 'offers')} (grey: not the cheapest of its pricing mode; "
             "hover a line, or see the table)", OTHER, True)]
