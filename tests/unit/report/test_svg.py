"""SVG chart primitives: ticks, axes, marks carrying their pointer, escaped text."""

import math

from clusterplan.report import svg


def test_linear_axis_has_round_ticks_covering_the_values():
    """Ticks are 1, 2, 2.5 or 5 x 10^k apart and cover the data (from zero)."""
    axis = svg.linear_axis([12.3, 187.6], "x", str)
    assert axis.low == 0 and axis.high >= 187.6
    steps = {round(b - a, 9) for a, b in zip(axis.ticks, axis.ticks[1:])}
    assert len(steps) == 1 and steps.pop() in (25, 50, 20, 40)


def test_log2_axis_ticks_are_powers_of_two():
    """1 KiB .. 16 GiB: ticks at powers of two, at most 8 + 1 of them."""
    axis = svg.log2_axis([1024, 16 * 2**30], "S", svg.binary_size)
    assert all(math.log2(t).is_integer() for t in axis.ticks) and len(axis.ticks) <= 9
    assert axis.at(1024, 0, 100) == 0 and axis.at(16 * 2**30, 0, 100) == 100


def test_marks_carry_pointer_value_and_tooltip():
    """A bar drawn from the document names its pointer and value, with a <title> tooltip."""
    mark = svg.Mark(value=1.5, pointer="/plan/cost/tco_usd", tip="TCO: $1.50")
    out = svg.horizontal_bars("T", [("a", mark)], svg.linear_axis([1.5], "USD", svg.usd))
    assert 'data-pointer="/plan/cost/tco_usd" data-value="1.5"' in out and "<title>TCO: $1.50</title>" in out


def test_text_is_escaped():
    """A label or title holding markup is drawn as text."""
    out = svg.bar_chart("<script>x</script>", ["<b>"], [("s", [svg.Mark(value=1.0)])],
                        svg.linear_axis([1.0], "y", str), x_label="&")
    assert "<script>" not in out and "&lt;script&gt;" in out and "&lt;b&gt;" in out and "&amp;" in out


def test_money_format():
    """Axis money: $1.5M, $250K, $4.57."""
    assert (svg.usd(1.5e6), svg.usd(250e3), svg.usd(4.57), svg.usd(0)) == ("$1.5M", "$250K", "$4.57", "$0")
