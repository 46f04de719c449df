"""The SWF reader: the fields it needs, header comments, bad lines."""

import math

import numpy as np

import pytest
from hypothesis import given, settings, strategies as st

from clusterplan.errors import ConfigError
from clusterplan.sched.swf import parse_swf
from trace_texts import SWF


def test_swf_reads_the_fields_it_needs():
    """Float times, allocated else requested processors, request as estimate, run cut at the request."""
    trace = parse_swf(SWF, name="t.swf")
    assert trace.job_id.tolist() == [1, 2, 4]
    assert trace.submit_s.tolist() == [0.0, 5.5, 8.0]
    assert trace.gpus.tolist() == [4, 8, 2]
    assert trace.run_s.tolist() == [100.5, 50.0, 100.0] and trace.estimate_s.tolist() == [200.0, 50.0, 100.0]
    assert trace.user.tolist() == [3, 4, 3] and trace.partition.tolist() == [2, 1, 1]
    assert trace.num_truncated == 1 and trace.exact_estimates == 1
    assert trace.dropped == {"unknown or zero run time": 1}
    assert trace.recorded_wait_s[0] == 10 and math.isnan(trace.recorded_wait_s[1])


def test_swf_header_comments():
    """Header keys with or without a space after ';', repeated keys kept, MaxProcs as the machine size."""
    trace = parse_swf(SWF)
    assert trace.max_gpus == 64 and trace.header["Note"] == "first note | second note"


def test_swf_bad_line_names_its_number():
    """A line with 17 fields is an error at its line number, with the --skip-bad hint."""
    text = SWF + "    5   9  0  10  1 -1 -1 1 10 -1 1 3 1 -1 1 1 -1\n"
    with pytest.raises(ConfigError) as error:
        parse_swf(text, name="t.swf")
    assert str(error.value).startswith("t.swf:10: bad SWF line: expected 18 fields, got 17")
    assert "--skip-bad" in str(error.value)


def test_swf_non_number_names_the_field():
    """A non-numeric field is reported by number and name."""
    text = SWF.replace("    2       5.5", "    2       5x5")
    with pytest.raises(ConfigError, match=r"t.swf:7: .*field 2 \(submit\) is not a number: '5x5'"):
        parse_swf(text, name="t.swf")


def test_skip_bad_counts_and_skips():
    """--skip-bad: the two bad lines are skipped and counted, the good jobs kept."""
    text = SWF + "garbage\n    6 9 0 10 1 -1 -1 1 10 -1 1 3 1 -1 1 1 -1 -1 99\n"
    trace = parse_swf(text, skip_bad=True)
    assert trace.num_bad_lines == 2 and trace.num_jobs == 3


GOOD = "1 0 0 100 8 100 -1 8 200 -1 1 1 1 -1 1 1 -1 -1"


@pytest.mark.parametrize(("field", "value", "name"), [(4, "inf", "run"), (5, "1e30", "allocated_procs"),
                                                      (1, "nan", "job"), (12, "1e400", "user")])
def test_non_finite_and_huge_fields_are_bad_lines(field, value, name):
    """inf, nan, 1e30 GPUs (an int64 cast would wrap) are a line-numbered error, or a counted skip (issue 19 item 7)."""
    fields = GOOD.split()
    fields[field - 1] = value
    text = GOOD + "\n" + " ".join(fields) + "\n"
    with pytest.raises(ConfigError, match=rf"t.swf:2: bad SWF line: field {field} \({name}\) is not a finite number"):
        parse_swf(text, name="t.swf")
    trace = parse_swf(text, name="t.swf", skip_bad=True)
    assert trace.num_jobs == 1 and trace.num_bad_lines == 1


# --- the fast path reads what the slow path reads (issue 19 item 9) -------------------------

_FIELD = st.one_of(st.integers(-1, 10**15).map(str), st.integers(-99, 99).map(lambda v: f"{v}.25"),
                   st.sampled_from(["-1", "0", "1e3", "552.21", "007", "-0"]))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.lists(_FIELD, min_size=18, max_size=18), min_size=1, max_size=30),
       st.sampled_from([" ", "  ", "\t", " \t "]))
def test_fast_path_equals_the_slow_one(rows, gap):
    """Whole numbers, decimals, exponents, leading zeros and spacing: the byte-wise numpy reading gives the
    numbers float() gives, line by line."""
    from clusterplan.sched.swf import _fast, _slow
    text = "\n".join(gap + gap.join(row) for row in rows) + "\n"
    fast = _fast([line.strip() for line in text.splitlines()])
    slow, bad = _slow(text, "t.swf", False)
    assert fast is not None and bad == 0 and np.array_equal(fast.T, slow)


@pytest.mark.parametrize("field", ["nan", "inf", "1e30", "x", "0x10", "--1", "-"])
def test_a_field_the_fast_path_doubts_gets_the_slow_paths_verdict(field):
    """Every doubtful field falls back to the line-by-line reader, which names the line (exit 2)."""
    row = ["1"] * 18
    row[3] = field
    with pytest.raises(ConfigError) as info:
        parse_swf("; MaxProcs: 4\n" + " ".join(["2"] * 18) + "\n" + " ".join(row) + "\n", name="t.swf")
    assert info.value.line == 3 and "field 4 (run)" in str(info.value)
