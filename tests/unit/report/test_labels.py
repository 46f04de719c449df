"""Label placement (spread, rows, lifts, legend grid) and the racks grouped into bars past MOST_RACKS."""

from clusterplan.report.html import rack_groups
from clusterplan.report.labels import grid, lifts, rows, spread


def test_spread_keeps_the_gap_and_the_bounds():
    """Three labels wanted at one height come out a gap apart, the last at most at the bottom."""
    placed = spread([100.0, 100.0, 100.0], 13.0, 40.0, 110.0)
    assert [b - a for a, b in zip(placed, placed[1:])] == [13.0, 13.0] and placed[-1] <= 110.0
    assert placed[0] >= 40.0 and spread([50.0, 200.0], 13.0, 40.0, 300.0) == [50.0, 200.0]


def test_rows_put_overlapping_spans_in_separate_rows():
    """Two overlapping spans take two rows; a third clear of the first goes back to row 0."""
    assert rows([(0.0, 50.0), (40.0, 90.0), (60.0, 100.0)]) == [0, 1, 0]


def test_lifts_raise_a_label_that_would_overlap():
    """Two labels on one baseline, overlapping: the second is raised a row; one far away is not."""
    assert lifts([(0.0, 20.0, 100.0), (10.0, 30.0, 100.0), (200.0, 220.0, 100.0)]) == [0.0, 12.0, 0.0]


def test_grid_fits_the_columns_in_the_width():
    """Short names share a row; a long one gets a column of its own."""
    assert grid(["a", "b", "c"], 600)[0] == 3 and grid(["x" * 80], 600)[0] == 1


def test_like_racks_share_a_bar():
    """529 racks of the 16,384-GPU plan are three runs: the compute racks, the full network racks, the last one."""
    names = [f"C{i + 1}" for i in range(512)] + [f"N{i + 1}" for i in range(17)]
    powers = [40.96] * 512 + [49.08] * 15 + [49.126, 2.454]
    assert rack_groups(names, powers) == [(0, 511), (512, 527), (528, 528)]
