"""How compare prints a figure and its delta in the figure's unit."""

import pytest

from clusterplan.report.terminal_analysis import format_delta, format_figure


@pytest.mark.parametrize("value, unit, text", [
    (5528066.7, "USD", "$5.53M"), (4.5669, "USD/GPU-hour", "$4.57"), (18, "month", "month 18"),
    (None, "month", "never"), (25e9, "B/s", "25.0 GB/s"), (1972188.6, "s", "22.83 days"), (5300.5, "s", "1.47 h"),
    (4.136, "s", "4.136 s"), (0.698066, "fraction", "69.8%"), (1014102.3, "tokens/s", "1,014,102 tokens/s"),
    (170.021, "kW", "170.021 kW"),
])
def test_figures(value, unit, text):
    """Money, months, bandwidth, durations, shares and plain quantities in their own form."""
    assert format_figure(value, unit) == text


@pytest.mark.parametrize("value, unit, text", [
    (150310.0, "USD", "+$150.31K"), (-230400.0, "USD", "-$230.40K"), (1, "month", "+1 month"), (0, "kW", "0"),
    (None, "month", "-"), (-0.001871, "fraction", "-0.19 pp"), (-2718.0, "tokens/s", "-2,718 tokens/s"),
    (0.759, "kW", "+0.759 kW"),
])
def test_deltas(value, unit, text):
    """A delta carries its sign and the figure's unit; percentages move in points."""
    assert format_delta(value, unit) == text
