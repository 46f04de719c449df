import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterplan.bench.nccltests import parse_nccl_tests
from clusterplan.errors import ConfigError

DATA = Path(__file__).parent / "data"

HEADER = """\
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""
ROW = "     1048576        262144     float     sum      -1    309.4    3.39    6.35      0    307.3    3.41    6.40      0"


def load(name: str, **kwargs):
    return parse_nccl_tests((DATA / name).read_text(), source=name, **kwargs)


def error_of(text: str, source: str = "run.log") -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_nccl_tests(text, source=source)
    return info.value


# --- the p4de table (aws-samples/awsome-distributed-training, commit 7217859f) ------------

def test_p4de_table_reads_every_row_with_its_header():
    """All 29 rows (8 B to 2 GiB) of the srun-labelled 2 x p4de all_reduce_perf table."""
    log = load("p4de_all_reduce.log")
    assert log.op == "all_reduce"
    assert len(log.rows) == 29
    assert [r.size_bytes for r in log.rows] == [8 * 2**k for k in range(29)]
    assert log.num_ranks == 16
    assert log.version == "2.18.3+cuda12.2"


def test_p4de_2gib_row_hand_checked():
    """2147483648 B: oop 51406 us = 0.051406 s, algbw 41.78, busbw 78.33; in-place 41.77."""
    row = load("p4de_all_reduce.log").rows[-1]
    assert (row.size_bytes, row.count, row.dtype, row.redop, row.root) == (
        2147483648, 536870912, "float", "sum", None)
    oop = row.out_of_place
    assert (oop.time_s, oop.algbw_GBps, oop.busbw_GBps, oop.wrong, oop.error) == (
        pytest.approx(0.051406), 41.78, 78.33, 0, None)
    assert row.in_place.time_s == pytest.approx(51406e-6)
    assert row.in_place.algbw_GBps == 41.77


def test_time_is_converted_from_microseconds():
    """time_s = printed us x 1e-6 (8 B row: 164.3 us oop, 163.3 us in-place)."""
    row = load("p4de_all_reduce.log").rows[0]
    assert row.out_of_place.time_s == pytest.approx(164.3e-6)
    assert row.in_place.time_s == pytest.approx(163.3e-6)


def test_p4de_rows_obey_the_nccl_tests_bandwidth_definitions():
    """algbw = S / t and busbw = algbw x 2(n-1)/n for all_reduce on 16 ranks, to print rounding."""
    log = load("p4de_all_reduce.log")
    factor = 2 * (log.num_ranks - 1) / log.num_ranks
    for row in log.rows:
        for p in (row.out_of_place, row.in_place):
            assert p.algbw_GBps == pytest.approx(row.size_bytes / p.time_s / 1e9, rel=5e-3, abs=0.01)
            assert p.busbw_GBps == pytest.approx(p.algbw_GBps * factor, rel=5e-3, abs=0.02)


def test_avg_bus_bandwidth_footer():
    """'# Avg bus bandwidth : X' is read as GB/s; a log without the footer gives None."""
    assert load("p4de_all_reduce.log").avg_busbw_GBps == 18.5359
    assert load("mi300x_rccl_all_reduce.log").avg_busbw_GBps == 354.657
    assert load("oci_a100_all_reduce.log").avg_busbw_GBps is None


# --- versions, ranks, op -----------------------------------------------------------------

def test_current_layout_with_job_log_around_it():
    """nccl-tests 2.17.9 in a Slurm job log: shell output ignored, versions read, 4 rows."""
    log = load("oci_a100_all_reduce.log")
    assert log.op == "all_reduce"
    assert log.version == "2.17.9"
    assert log.nccl_version == "2.29.3+cuda13.1"
    assert [r.out_of_place.busbw_GBps for r in log.rows] == [184.92, 187.18, 188.39, 189.60]
    assert log.rows[-1].in_place.time_s == pytest.approx(84992.3e-6)


def test_elided_rank_list_counts_up_to_the_highest_rank():
    """Rank lines 0, 7, 8, 15 (the rest elided) mean 16 ranks."""
    assert load("oci_a100_all_reduce.log").num_ranks == 16


def test_rccl_tests_log():
    """rccl-tests on MI300X: 'rccl-tests: Version develop:a52452e', Rank lines without device names."""
    log = load("mi300x_rccl_all_reduce.log")
    assert (log.op, log.version, log.nccl_version, log.num_ranks) == (
        "all_reduce", "develop:a52452e", None, 16)
    assert log.rows[-1].size_bytes == 17179869184
    assert log.rows[-1].out_of_place.busbw_GBps == 358.37


def test_nranks_hint_when_there_are_no_rank_lines():
    """Without '#  Rank' lines the largest NCCL INFO 'nranks N' is the rank count."""
    text = ("host:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
            "host:1:3 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 busId 81000 - Init COMPLETE\n"
            + HEADER + ROW + "\n")
    assert parse_nccl_tests(text).num_ranks == 2
    assert parse_nccl_tests(HEADER + ROW).num_ranks is None


def test_op_from_the_binary_name_on_the_command_line():
    """Old logs have no 'Collective test starting' line: the *_perf command line names the op."""
    assert load("broadcast_old_root.log").op == "broadcast"
    assert load("p4de_all_reduce.log").op == "all_reduce"


def test_op_argument_when_the_log_does_not_name_it():
    """A bare table takes op from the argument (canonicalised); the log's own name wins."""
    assert load("headerless.log").op is None
    assert load("headerless.log", op="all_reduce_perf").op == "all_reduce"
    assert load("headerless.log", op="reduce_scatter").op == "reduce_scatter"
    assert load("alltoall_none.log", op="all_reduce").op == "alltoall"


@pytest.mark.parametrize("name, op", [
    ("alltoall_none.log", "alltoall"), ("oop_only.log", "reduce_scatter"),
    ("per_iteration.log", "all_gather"), ("timestamps.log", "sendrecv"),
])
def test_op_from_collective_test_starting(name, op):
    """'# Collective test starting: X_perf' gives the canonical op name."""
    assert load(name).op == op


# --- layouts -----------------------------------------------------------------------------

def test_old_layout_with_error_column_and_no_root():
    """'size count type redop time algbw busbw error ...': error kept as a float, wrong None, root None."""
    log = load("old_error_column.log")
    assert log.nccl_version == "2.8.4+cuda11.2" and log.num_ranks == 4
    row = log.rows[0]
    assert (row.size_bytes, row.redop, row.root) == (33554432, "sum", None)
    assert (row.out_of_place.error, row.out_of_place.wrong) == (1e-06, None)
    assert (row.in_place.error, row.in_place.wrong) == (0.0, None)
    assert row.out_of_place.time_s == pytest.approx(420.5e-6)
    assert row.out_of_place.busbw_GBps == 119.69


def test_old_broadcast_layout_with_root_and_no_redop_and_na():
    """'size count type root time ... error' with validation off: root 0, redop None, error N/A -> None."""
    log = load("broadcast_old_root.log")
    assert len(log.rows) == 5
    row = log.rows[-1]
    assert (row.size_bytes, row.count, row.redop, row.root) == (1048576, 262144, None, 0)
    assert row.out_of_place.error is None and row.out_of_place.wrong is None
    assert row.in_place.time_s == pytest.approx(1518.8e-6)


def test_ops_without_redop_or_root():
    """alltoall prints redop 'none' and root -1: both None; in-place '#wrong N/A' -> None."""
    log = load("alltoall_none.log")
    assert len(log.rows) == 4 and log.num_ranks == 8
    for row in log.rows:
        assert row.redop is None and row.root is None
        assert row.out_of_place.wrong == 0
        assert row.in_place.wrong is None
    assert log.rows[2].out_of_place.busbw_GBps == 103.60


def test_out_of_place_only_table():
    """A header with only the out-of-place group gives rows with in_place None."""
    log = load("oop_only.log")
    assert [r.in_place for r in log.rows] == [None] * 3
    assert log.rows[1].out_of_place.time_s == pytest.approx(140.2e-6)


def test_out_of_place_only_rows_under_a_full_header():
    """A 9-column row under the 13-column header is out-of-place only, next to complete rows."""
    short = "     2097152        524288     float     sum      -1    432.6    4.85    9.09      0"
    log = parse_nccl_tests(HEADER + ROW + "\n" + short + "\n" + ROW + "\n")
    assert [r.in_place is None for r in log.rows] == [False, True, False]
    assert log.rows[1].out_of_place.busbw_GBps == 9.09


def test_headerless_table():
    """Rows pasted without any '#' line are read by their column count."""
    log = load("headerless.log")
    assert [r.size_bytes for r in log.rows] == [4096, 65536, 1048576]
    assert log.rows[0].dtype == "half" and log.rows[0].redop == "max"
    assert log.rows[2].in_place.busbw_GBps == 30.78


def test_headerless_old_rows_tell_root_from_redop_by_value():
    """Twelve columns without a header: an integer 4th column is a root, a word a redop."""
    with_root = "        8192          2048   float       0    61.35    0.13    0.13    N/A    60.02    0.14    0.14    N/A"
    with_redop = "    33554432       8388608   float     sum    420.5   79.80  119.69  1e-06    418.9   80.10  120.15  0e+00"
    root_row, = parse_nccl_tests(with_root).rows
    redop_row, = parse_nccl_tests(with_redop).rows
    assert (root_row.root, root_row.redop, root_row.out_of_place.error) == (0, None, None)
    assert (redop_row.root, redop_row.redop, redop_row.out_of_place.error) == (None, "sum", 1e-06)


def test_per_iteration_columns_are_skipped():
    """With -I 1 the i_min/i_max/i_p99/i_cv% columns after each group are read past."""
    row = load("per_iteration.log").rows[1]
    assert row.out_of_place.time_s == pytest.approx(201.3e-6)
    ip = row.in_place
    assert (ip.time_s, ip.algbw_GBps, ip.busbw_GBps, ip.wrong) == (
        pytest.approx(199.8e-6), 167.94, 125.96, 0)


def test_timestamp_column_is_skipped():
    """A trailing 'YYYY-MM-DD HH:MM:SS' timestamp column does not shift the in-place values."""
    row = load("timestamps.log").rows[1]
    assert row.in_place.busbw_GBps == 47.97 and row.in_place.wrong == 0


def test_cputime_column_is_a_time():
    """A 'cputime' header column (CPU timing) is read like 'time'."""
    row, = parse_nccl_tests(HEADER.replace(" time", "cputime") + ROW).rows
    assert row.out_of_place.time_s == pytest.approx(309.4e-6)


def test_wrong_count_printed_with_an_exponent():
    """%g prints a large #wrong as 1.23457e+06: read as a whole number."""
    row = ROW.replace("      0    307.3", " 1.23457e+06    307.3")
    assert parse_nccl_tests(HEADER + row).rows[0].out_of_place.wrong == 1234570


# --- wrapped and prefixed rows -----------------------------------------------------------

def test_wrapped_rows_are_joined():
    """Rows wrapped at a column boundary, inside a number, over three lines, or trimmed are joined."""
    log = load("wrapped.log")
    assert [r.size_bytes for r in log.rows] == [131072, 262144, 524288, 1048576, 2097152]
    assert log.rows[1].out_of_place.busbw_GBps == 13.33    # split as "1" + "3.33"
    assert log.rows[3].in_place.time_s == pytest.approx(30.77e-6)  # trimmed pieces
    assert log.rows[4].redop == "sum"                        # split as "s" + "um"
    assert all(r.in_place.wrong == 0 for r in log.rows)


def test_prefixed_rows_are_stripped():
    """kubectl timestamps plus mpirun '[1,0]<stdout>:' tags; MPI help and NCCL INFO lines ignored."""
    log = load("prefixed.log")
    assert (log.op, log.num_ranks, log.avg_busbw_GBps) == ("all_reduce", 16, 116.031)
    assert [r.size_bytes for r in log.rows] == [8, 1024, 1048576, 1073741824]
    assert log.rows[-1].out_of_place.busbw_GBps == 436.60


@pytest.mark.parametrize("prefix", [
    "0: ", " 12: ", "[1,0]<stdout>:", "[1,12]<stdout>: ", "2024-05-14T09:31:02.118529012Z ",
    "2024-05-14 09:31:02,118 ", "[2024-05-14 09:31:02] ", "09:31:02 ", "node-a1: ",
    "[pod/nccl-launcher-x7/mpi] ", "2024-05-14T09:31:02Z node-a1: 3: ",
])
def test_launcher_prefixes(prefix):
    """srun, mpirun, kubectl, pdsh and timestamp prefixes before header and row are stripped."""
    text = "".join(prefix + line + "\n" for line in (HEADER + ROW).splitlines())
    row, = parse_nccl_tests(text).rows
    assert (row.size_bytes, row.in_place.busbw_GBps) == (1048576, 6.40)


def test_blank_and_comment_lines_anywhere():
    """Blank lines and '#' comments between rows do not end or break the table."""
    text = HEADER + "\n" + ROW + "\n#\n# a note\n\n" + ROW + "\n\n"
    assert len(parse_nccl_tests(text).rows) == 2


def test_numbers_before_the_table_are_not_rows():
    """Lines before the header (a '4 GPUs' echo, a job id) are not taken for rows."""
    text = "4 8 GPUs found\n123456 7 pending\n" + HEADER + ROW + "\n"
    assert len(parse_nccl_tests(text).rows) == 1


def test_unmistakable_rows_outside_a_table_are_kept():
    """A row with size, count and a data type after the footer is read with the last layout."""
    text = HEADER + ROW + "\n# Out of bounds values : 0 OK\n" + ROW + "\n2 4 nodes\n"
    assert len(parse_nccl_tests(text).rows) == 2


def test_crlf_and_carriage_returns():
    """CRLF endings and a line redrawn with carriage returns keep editor line numbers."""
    text = (HEADER + "progress 50%\r" + ROW + "\n" + ROW.replace("309.4", "x") + "\n").replace("\n", "\r\n")
    error = error_of(text)
    assert str(error) == "run.log:5: time 'x' is not a number"


def test_several_tables_of_one_test_are_concatenated():
    """The header repeated (two runs in one log) starts a new table; its rows are added."""
    text = HEADER + ROW + "\n# Avg bus bandwidth : 6.375\n" + HEADER + ROW + "\n# Avg bus bandwidth : 7.5\n"
    log = parse_nccl_tests(text)
    assert len(log.rows) == 2 and log.avg_busbw_GBps == 7.5


# --- results ------------------------------------------------------------------------------

def test_results_are_frozen():
    """NcclTestsLog, Row and Placement cannot be changed after parsing."""
    log = load("headerless.log")
    with pytest.raises(dataclasses.FrozenInstanceError):
        log.rows[0].out_of_place.time_s = 0.0


# --- bad input ---------------------------------------------------------------------------

def test_empty_text_has_no_rows():
    """An empty file is a ConfigError at line 1."""
    error = error_of("", source="empty.log")
    assert str(error).startswith("empty.log:1: no nccl-tests result table found")
    assert (error.source, error.line) == ("empty.log", 1)


def test_header_without_rows_names_the_header_and_the_failure():
    """A run that died after the header: the error names the header line and the failure line."""
    text = "# Collective test starting: all_reduce_perf\n#\n" + HEADER + (
        "node1: Test NCCL failure common.cu:1005 'unhandled system error'\n")
    error = error_of(text)
    assert str(error).startswith("run.log:4: the nccl-tests table header has no result rows")
    assert "(line 6: Test NCCL failure common.cu:1005" in str(error)
    assert error.line == 4


def test_text_without_a_table_names_the_last_line():
    """Prose without a table is a ConfigError at its last line."""
    error = error_of("hello\nsrun: error: task 3: Exited\n")
    assert str(error).startswith("run.log:2: no nccl-tests result table found")


def test_row_with_too_few_columns():
    """A 5-column row that no join completes names its line and the expected layout."""
    text = HEADER + ROW + "\n           8             2     float     sum      -1\n" + ROW + "\n"
    error = error_of(text)
    assert str(error) == ("run.log:5: expected 13 columns of an nccl-tests row (size count type "
                          "redop root time algbw busbw #wrong ...), got 5")
    assert error.line == 5


def test_row_with_too_many_columns():
    """Fifteen columns under a 13-column header is an error on that line."""
    error = error_of(HEADER + ROW + " 1 2\n")
    assert str(error).startswith("run.log:4: expected 13 columns"), str(error)
    assert str(error).endswith("got 15")


def test_non_numeric_size():
    """A size that is not a whole number names its line and the token."""
    error = error_of(HEADER + ROW.replace("     1048576", "       1M576") + "\n")
    assert str(error) == "run.log:4: size '1M576' is not a whole number"


def test_non_numeric_time():
    """A time that is not a number names its line and the token."""
    error = error_of(HEADER + ROW + "\n" + ROW.replace("309.4", "fast!") + "\n", source="<log>")
    assert str(error) == "<log>:5: time 'fast!' is not a number"


def test_fractional_wrong_count():
    """A '#wrong' that is not a whole number is an error, not a silent float."""
    error = error_of(HEADER + ROW.replace("      0    307.3", "  1e-06    307.3"))
    assert str(error) == "run.log:4: #wrong '1e-06' is not a whole number"


def test_headerless_row_with_an_unknown_column_count():
    """Without a header, a row of 10 columns matches no known layout."""
    error = error_of("8 2 float sum -1 164.3 0.00 0.00 0 163.3\n")
    assert str(error).startswith("run.log:1: expected 13 columns of an nccl-tests row"), str(error)


def test_nccl1_format_is_rejected():
    """The NCCL 1.x test table (bytes N type op ... res, time in ms) is refused at its header."""
    text = ("#  bytes             N    type      op     time  algbw  busbw      res\n"
            "10000000      10000000    char     sum    0.064  157.38   0.00    0e+00\n")
    error = error_of(text)
    assert str(error).startswith("run.log:1: columns 'bytes N type op ... res'")


def test_unknown_header_column_is_rejected():
    """A header column clusterplan does not know is an error at the header line."""
    error = error_of(HEADER.replace("#wrong     time", "#wrong  p50   time") + ROW + "\n")
    assert str(error) == "run.log:2: unrecognised column 'p50' in the nccl-tests table header"


def test_two_different_tests_in_one_log():
    """Results of two collectives in one log are refused at the second test's start line."""
    text = ("# Collective test starting: all_reduce_perf\n" + HEADER + ROW + "\n"
            "# Collective test starting: all_gather_perf\n" + HEADER + ROW + "\n")
    error = error_of(text)
    assert str(error).startswith("run.log:6: the log holds more than one test (all_reduce at line 1, "
                                 "all_gather at line 6)")


def test_unreadable_footer():
    """An average bus bandwidth that is not a number names its line."""
    error = error_of(HEADER + ROW + "\n# Avg bus bandwidth    : fast\n")
    assert str(error) == "run.log:5: average bus bandwidth 'fast' is not a number"


def test_config_error_is_a_value_error():
    """Bad logs raise ConfigError, which is also a ValueError."""
    with pytest.raises(ValueError):
        parse_nccl_tests("nothing here")


FRAGMENTS = (DATA / "p4de_all_reduce.log").read_text().splitlines()[20:40] + [
    "", "#", "# Avg bus bandwidth : 1", "abc", "8 2 float", "[1,0]<stdout>:", "0: 1 2 3",
    "x" * 3, "nan inf -1", "1e400 2 float sum -1 1 1 1 N/A", "# size count type time algbw busbw",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(FRAGMENTS), st.integers(0, 130), st.integers(0, 130)),
                max_size=12))
def test_any_mangled_log_gives_a_result_or_a_config_error(pieces):
    """Cut and shuffled log lines never raise anything but ConfigError."""
    text = "\n".join(line[:cut] + line[start:] for line, cut, start in pieces)
    try:
        parse_nccl_tests(text)
    except ConfigError as error:
        assert error.line is not None and error.source == "<log>"


@pytest.mark.parametrize("bad", ["nan", "inf", "1e400"])
def test_a_non_finite_row_or_average_is_a_line_numbered_error(bad):
    """nan, inf or 1e400 as a time, a bandwidth or the average: one verdict, a line-numbered error for every
    reader of the log (bench parse, calibrate, report --measured); issue 19 item 6."""
    assert str(error_of(HEADER + ROW.replace("309.4", bad) + "\n")) == f"run.log:4: time '{bad}' is not a finite number"
    assert str(error_of(HEADER + ROW + f"\n# Avg bus bandwidth    : {bad}\n")) == (
        f"run.log:5: average bus bandwidth '{bad}' is not a finite number")


# --- a log that ends inside its last row (issue 19 item 6) ---------------------------------

@pytest.mark.parametrize("cut", [1, 2, 3, 6, 8, 10, 12])
def test_a_last_row_the_log_ends_inside_is_left_out_and_counted(cut):
    """A last row cut after any number of columns (but the out-of-place-only 9) is counted, not read or lost."""
    other = ROW.replace("1048576        262144", "2097152        524288")
    tokens = other.split()
    log = parse_nccl_tests(HEADER + ROW + "\n" + "  ".join(tokens[:cut]), source="run.log")
    assert len(log.rows) == 1 and log.num_truncated_rows == 1 and log.truncated_line == 5
    assert log.notes("run.log") == ["run.log:5: the log ends inside this row (1 truncated row left out; 1 rows read)"]


def test_a_complete_last_row_is_not_counted_and_a_cut_row_inside_the_log_is_an_error():
    """Only the last line can be a truncated row: the same line followed by another row is a line-numbered error."""
    log = parse_nccl_tests(HEADER + ROW + "\n" + ROW + "\n", source="run.log")
    assert len(log.rows) == 2 and log.num_truncated_rows == 0 and log.notes("run.log") == []
    cut = "  ".join(ROW.split()[:6])
    assert error_of(HEADER + ROW + "\n" + cut + "\n" + ROW + "\n").line == 5


def test_a_headerless_truncated_last_row_is_judged_by_the_row_before():
    """Without a header the layout of the last full row says the row after it was cut short."""
    log = parse_nccl_tests(ROW + "\n" + "  ".join(ROW.split()[:5]) + "\n", source="run.log")
    assert len(log.rows) == 1 and log.truncated_line == 2
