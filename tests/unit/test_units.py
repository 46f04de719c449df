import pytest

from clusterplan import units


def test_decimal_and_binary_prefixes_are_distinct():
    """GB is 1e9 bytes, GiB is 2**30."""
    assert units.parse("80GB", "B") == 80e9
    assert units.parse("80GiB", "B") == 80 * 2**30


def test_bit_rates_convert_to_bytes_once():
    """200 Gb/s is 25 GB/s; every spelling of bits per second agrees."""
    for text in ("200Gbps", "200Gb/s", "200 Gbit/s"):
        assert units.parse(text, "B/s") == 25e9
    assert units.parse("25GB/s", "B/s") == 25e9


def test_value_is_expressed_in_the_requested_unit():
    """A string converts into the field's unit; a bare number is taken as already in it."""
    assert units.parse("2PB", "TB") == 2000
    assert units.parse("50kW", "kW") == 50
    assert units.parse("40000W", "kW") == 40
    assert units.parse(7, "kW") == 7.0
    assert units.parse("989.4TFLOP/s", "FLOP/s") == pytest.approx(989.4e12)
    assert units.parse("130ns", "s") == pytest.approx(130e-9)


def test_money_suffixes():
    """$30K, 1.2M and 30,000 are amounts in USD."""
    assert units.parse("$30K", "USD") == 30_000
    assert units.parse("1.2M", "USD") == 1_200_000
    assert units.parse("$30,000", "USD") == 30_000


@pytest.mark.parametrize("text, unit, message", [
    ("50 kg", "kW", "unknown unit 'kg'"),
    ("5GB", "kW", "is in bytes, expected watts"),
    ("fast", "B/s", "cannot read 'fast'"),
    ("$3X", "USD", "cannot read '$3X'"),
])
def test_bad_quantities_name_the_problem(text, unit, message):
    """Unparseable or wrong-dimension strings raise UnitError with the reason."""
    with pytest.raises(units.UnitError, match=message.replace("$", r"\$")):
        units.parse(text, unit)


def test_booleans_are_not_quantities():
    """true is not a number of kW."""
    with pytest.raises(units.UnitError):
        units.parse(True, "kW")


def test_formatting():
    """Money and SI figures print with a prefix."""
    assert units.format_usd(12_328_894) == "$12.33M"
    assert units.format_usd(512) == "$512"
    assert units.format_si(3.35e12, "B/s") == "3.35 TB/s"


def test_plural_reads_right_for_one():
    """One switch, engineer, node or month; any other count (0, 1.5, 3, -2) keeps the plural; -1 is one too."""
    from clusterplan.units import plural
    assert [plural(1, noun) for noun in ("switches", "engineers", "nodes", "months", "GPUs")] == \
        ["switch", "engineer", "node", "month", "GPU"]
    assert [plural(count, "switches") for count in (0, 1.5, 3, -2, -1)] == \
        ["switches", "switches", "switches", "switches", "switch"]


def test_compare_prints_one_switch():
    """Issue 30: compare's figures and deltas say "1 switch", "+1 month", not "1 switches"."""
    from clusterplan.report.terminal_analysis import format_delta, format_figure
    assert (format_figure(1, "switches"), format_figure(3, "switches")) == ("1 switch", "3 switches")
    assert (format_delta(1, "switches"), format_delta(-1, "month"), format_delta(2, "month")) == \
        ("+1 switch", "-1 month", "+2 months")
