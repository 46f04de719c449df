"""The one rich console and table the terminal views draw with."""

import io

from clusterplan.report.console import WIDTH, escape, new_console, new_table


def test_a_stream_that_is_no_terminal_gets_the_fixed_width():
    """Output to a pipe or a file is WIDTH characters wide, so it is the same everywhere."""
    assert new_console(io.StringIO()).width == WIDTH


def test_table_columns_align_and_markup_is_escaped():
    """Columns numbered in ``right`` are right-aligned; escaped text prints as typed."""
    stream = io.StringIO()
    table = new_table("Title", "name", "value", right=(1,))
    table.add_row(escape("[bold]x[/bold]"), "1")
    table.add_row("longer name", "1000")
    new_console(stream).print(table)
    lines = [line.rstrip() for line in stream.getvalue().splitlines()]
    assert lines[0] == "Title" and lines[-2].startswith("[bold]x[/bold]")
    assert lines[-2].endswith(" 1") and len(lines[-2]) == len(lines[-1])   # "1" under the last digit of "1000"
