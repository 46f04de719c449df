"""A prediction and its evidence band as one statement (report/bands.py): hand-computed cases."""

from clusterplan.report.bands import band_phrase, band_statement, kind_of


def seconds(value: float) -> str:
    return f"{value:.3f} s"


def test_a_band_below_the_point_says_faster_and_by_how_much():
    """10.893 s against 9.897-10.677 s: measured 9.1 % and 2.0 % below the point, so "2-9 % faster"."""
    assert band_statement(10.893, 9.897, 10.677, seconds) == (
        "10.893 s predicted; published runs of this kind measured 2-9 % faster: 9.897 s to 10.677 s")


def test_a_band_around_the_point_names_both_directions():
    """45.166 s against 40.431-52.925 s: 10.5 % below to 17.2 % above."""
    assert band_phrase(45.166, 40.431, 52.925, seconds) == (
        "published runs of this kind measured 10 % faster to 17 % slower: 40.431 s to 52.925 s")


def test_a_rate_above_the_point_is_faster():
    """Tokens/s 770,075 against 785,707-847,621: 2.0 % and 10.1 % higher, so faster."""
    assert band_phrase(770_075, 785_707, 847_621, lambda v: f"{v:,.0f}", kind="rate") == (
        "published runs of this kind measured 2-10 % faster: 785,707 to 847,621")


def test_a_band_above_a_time_is_slower_and_equal_ends_print_once():
    """A step of 10 s against 11.02-11.04 s: both ends round to 10 % slower."""
    assert band_phrase(10, 11.02, 11.04, seconds) == (
        "published runs of this kind measured 10 % slower: 11.020 s to 11.040 s")


def test_a_cost_out_of_domain_says_so():
    """A cost reads as "at the speed ... measured, N % less"; out of domain names every kind of run."""
    assert band_phrase(100, 80, 95, lambda v: f"${v:.0f}", kind="cost", out_of_domain=True) == (
        "at the speed published runs of every kind (none of this kind) measured, 5-20 % less: $80 to $95")


def test_kind_of_a_figure_by_its_name():
    """tokens/s and bandwidths are rates, USD figures costs, the rest times."""
    assert [kind_of(name) for name in ("tokens_per_s_per_gpu", "busbw_GBps", "cost_to_train_usd", "step_time_s")] \
        == ["rate", "rate", "cost", "time"]
