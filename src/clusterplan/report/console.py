"""The rich console and table every terminal view draws with, made in one place."""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.table import Table

WIDTH = 110   # characters, where the stream is not a terminal (a pipe, a file, a test)


def escape(text: str) -> str:
    """User or catalog text, shown as text rather than read as rich markup."""
    return rich_escape(text)


def new_console(stream: TextIO) -> Console:
    """A console writing to ``stream``: the terminal's width, or ``WIDTH`` when it is not one."""
    return Console(file=stream, width=None if stream.isatty() else WIDTH, highlight=False)


def new_table(title: str, *columns: str, right: tuple[int, ...] = (), header: bool = True) -> Table:
    """A titled table in the house look; the columns numbered in ``right`` are right-aligned."""
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False, show_edge=False, show_header=header)
    for index, column in enumerate(columns):
        table.add_column(column, justify="right" if index in right else "left")
    return table
