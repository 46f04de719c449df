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


def test_axis_ticks_are_round_in_the_unit_asked():
    """Bytes shown in GiB: ticks at round GiB, the axis still in bytes."""
    axis = svg.linear_axis([61.7 * 2**30, 80 * 2**30], "GiB", str, unit=2**30)
    assert axis.high >= 80 * 2**30 and all((t / 2**30).is_integer() and t / 2**30 % 10 == 0 for t in axis.ticks)


def test_a_point_without_a_value_breaks_the_line():
    """None leaves a gap: no circle there, and the line starts again after it."""
    points = tuple((x, svg.Mark(value=v, pointer=f"/p/{x}" if v is not None else ""))
                   for x, v in ((1, 1.0), (2, 2.0), (3, None), (4, 3.0), (5, 4.0)))
    x = svg.Axis(low=1, high=5, ticks=(1, 5), label="x", format=str)
    out = svg.line_chart("T", [svg.Series(name="s", points=points)], x, svg.linear_axis([4.0], "y", str))
    path = out[out.index('<path d="') + 9:]
    path = path[:path.index('"')]
    assert path.count("M") == 2 and path.count("L") == 2 and out.count("<circle") == 4


def test_a_marker_label_at_the_right_end_reads_leftwards():
    """A marker's label near the right edge ends at the marker, so it is not cut off; elsewhere it starts there."""
    x = svg.Axis(low=0, high=10, ticks=(0, 10), label="x", format=str)
    line = svg.Series(name="s", points=((0, svg.Mark(value=1.0)), (10, svg.Mark(value=2.0))))
    for at, anchored in ((10, True), (1, False)):
        out = svg.line_chart("T", [line], x, svg.linear_axis([2.0], "y", str),
                             markers=[(at, svg.Mark(value=1.5), "here")], legend=False)
        label = out[out.index('<g class="marker">'):]
        assert ('text-anchor="end"' in label[:label.index("here")]) is anchored
