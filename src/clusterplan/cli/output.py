"""Shared options and the one way results leave the process (stdout or ``-o FILE``)."""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from clusterplan.errors import ConfigError


def add_output_options(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    parser.add_argument("--format", choices=formats, default=formats[0], help=f"output format (default {formats[0]})")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")


def add_scenario_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", nargs="?", metavar="SCENARIO",
                        help="scenario TOML file (default: the reference 128 x H100 cluster)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a scenario key (repeatable)")


def emit(render: Callable[[TextIO], None], output: str | None) -> None:
    """Render fully in memory, then write stdout or replace FILE atomically: nothing half-written."""
    buffer = io.StringIO()
    render(buffer)
    if output is None:
        sys.stdout.write(buffer.getvalue())
        return
    path = Path(output)
    try:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent or ".", delete=False,
                                         prefix=f".{path.name}.") as handle:
            handle.write(buffer.getvalue())
        os.replace(handle.name, path)
    except OSError as error:
        raise ConfigError(f"cannot write output: {error.strerror}", key="-o", source=str(path)) from None


def write_json(document: object, stream: TextIO) -> None:
    import json

    json.dump(document, stream, indent=2, allow_nan=False)
    stream.write("\n")
