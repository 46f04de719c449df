"""Shared options and the one way results leave the process (stdout or ``-o FILE``)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from clusterplan.errors import ConfigError
from clusterplan.files import is_input
from clusterplan.units import UnitError, parse_size


def add_output_options(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    parser.add_argument("--format", choices=formats, default=formats[0], help=f"output format (default {formats[0]})")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")


def add_scenario_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", nargs="?", metavar="SCENARIO",
                        help="scenario TOML file (default: the reference 128 x H100 cluster)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a scenario key (repeatable)")


GPUS_KEY = "cluster.num_gpus"   # what --gpus sets, in plan, train and reliability


def add_gpus_option(parser: argparse.ArgumentParser, text: str) -> None:
    """``--gpus N``: the cluster's size in GPUs (``cluster.num_gpus``), as plan, train and reliability read it."""
    parser.add_argument("--gpus", type=int, metavar="N", help=text)


def scenario_overrides(args: argparse.Namespace) -> list[str]:
    """The ``--set`` overrides, then ``--gpus`` as ``cluster.num_gpus`` where it is given."""
    return [*args.overrides, *([f"{GPUS_KEY}={args.gpus}"] if args.gpus is not None else [])]


def named_gpus(error: ConfigError, args: argparse.Namespace) -> ConfigError:
    """An error about ``cluster.num_gpus`` names ``--gpus`` where that flag set it; any other as it is."""
    if error.key == GPUS_KEY and args.gpus is not None:
        return ConfigError(error.message, key="--gpus")
    return error


def add_sweep_options(parser: argparse.ArgumentParser, *, default_min: str, default_max: str) -> None:
    """nccl-tests' size sweep: -b, -e, and -f or -i (binary K/M/G suffixes)."""
    parser.add_argument("-b", "--minbytes", default=default_min,
                        help=f"smallest size, binary K/M/G (default {default_min})")
    parser.add_argument("-e", "--maxbytes", default=default_max, help=f"largest size (default {default_max})")
    step = parser.add_mutually_exclusive_group()
    step.add_argument("-f", "--stepfactor", type=float, default=2.0, help="size multiplier (default 2)")
    step.add_argument("-i", "--stepbytes", default="0", help="size increment instead of a factor")


DEFAULT_SAMPLES = 100_000
DEFAULT_SEED = 1


def add_sampling_options(parser: argparse.ArgumentParser) -> None:
    """The sensitivity analysis' Monte Carlo options (sensitivity and report)."""
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES,
                        help=f"Monte Carlo samples (default {DEFAULT_SAMPLES:,})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})")
    parser.add_argument("--offer", metavar="ID",
                        help="cloud offer that break-even is measured against (default: the first of cloud.offers)")


def sweep_bytes(args: argparse.Namespace) -> tuple[int, int, int]:
    """(min, max, increment) in bytes from the sweep options; a ConfigError naming them if unreadable."""
    try:
        return parse_size(args.minbytes), parse_size(args.maxbytes), parse_size(args.stepbytes)
    except UnitError as error:
        raise ConfigError(str(error), key="-b/-e/-i") from None


def emit(render: Callable[[TextIO], None], output: str | None) -> None:
    """Render fully in memory, then write stdout or replace FILE atomically: nothing half-written."""
    buffer = io.StringIO()
    render(buffer)
    if output is None:
        sys.stdout.write(buffer.getvalue())
        return
    _replace(Path(output), buffer.getvalue().encode("utf-8"))


def emit_binary(data: bytes, output: str | None, *, what: str) -> None:
    """Binary output (``what``, e.g. "xlsx") to FILE atomically, or to stdout unless it is a terminal."""
    if output is None:
        if sys.stdout.isatty():
            raise ConfigError(f"{what} is binary; write it with -o FILE (or redirect stdout)", key="--format")
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    _replace(Path(output), data)


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (docs/inputs.md, "Output files").

    A device or FIFO (``-o /dev/null``) is written through. A regular file is replaced atomically by a
    temporary file beside it, which no failure leaves behind, nor SIGINT, SIGTERM or SIGHUP; an existing file
    keeps its mode, a new one gets the umask's. A symlink is followed: its target is written. A file the
    command read as input, or one the user may not write, is refused.
    """
    try:
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        info = _stat(target)
        if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            with open(target, "wb") as stream:
                stream.write(data)
            return
        if info is not None and stat.S_ISREG(info.st_mode):
            _may_replace(target, info, shown=str(path))
        mode = stat.S_IMODE(info.st_mode) if info is not None and stat.S_ISREG(info.st_mode) else 0o666 & ~_umask()
        with _signals_end_the_write():
            _write_beside(target, data, mode)
    except OSError as error:
        raise ConfigError(f"cannot write output: {error.strerror or error}", key="-o", source=str(path)) from None


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None


def _may_replace(target: Path, info: os.stat_result, *, shown: str) -> None:
    """Refuse (naming ``shown``, the -o given) one of the command's inputs, or a file the user may not write."""
    if is_input(info):
        raise ConfigError("is one of this command's inputs; write the output to another file", key="-o",
                          source=shown)
    if not os.access(target, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
        raise ConfigError(f"you may not write this file (mode {stat.S_IMODE(info.st_mode):04o}); it is kept",
                          key="-o", source=shown)


def _write_beside(target: Path, data: bytes, mode: int) -> None:
    """A temporary file in ``target``'s folder, renamed over it once whole; removed on any failure."""
    name = None
    try:
        with _signals_held():     # a signal during mkstemp waits until the name is known, so it can be removed
            handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:64]}.")
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(name, mode)
        os.replace(name, target)
    except BaseException:
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name)
        raise


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held back while the block runs, delivered when it ends. A handler that only
    records them, not a signal mask: the system may deliver a process's signal to any of its threads (numpy's
    BLAS threads among them), while Python runs its handlers in the main thread, whichever thread received it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    numbers = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]
    saved = {number: signal.signal(number, lambda signum, _frame: caught.append(signum)) for number in numbers}
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
        for number in caught:
            signal.raise_signal(number)


@contextlib.contextmanager
def _signals_end_the_write() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP (where their action is the default) end the process as
    SIGINT does, by an exception, so that the temporary file is removed: exit status 128 + the signal."""
    names = [name for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    saved = {}
    for name in names:
        number = getattr(signal, name)
        if signal.getsignal(number) is signal.SIG_DFL:
            saved[number] = signal.signal(number, stop)
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def write_json(document: object, stream: TextIO) -> None:
    import json

    json.dump(document, stream, indent=2, allow_nan=False)
    stream.write("\n")


def show_progress(args: argparse.Namespace, *, rank: int = 0) -> bool:
    """The one rule for progress displays: on stderr, only for a person watching it.

    That is: stderr is a terminal, the output is not machine-read (``--format json``), and, in a
    distributed benchmark, this process is rank 0.
    """
    return rank == 0 and getattr(args, "format", None) != "json" and sys.stderr.isatty()


class ProgressDisplay:
    """What a command tells its progress display; every method does nothing when the display is off."""

    def __init__(self, bar: Any = None, task: Any = None, description: str = ""):
        self._bar, self._task, self._description = bar, task, description

    def update(self, done: int, total: int, label: str = "") -> None:
        """``done`` of ``total`` steps finished (``total`` 0: unknown, a spinner), now on ``label``."""
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total or None, description=self._text(label))

    def say(self, label: str) -> None:
        """Name the step now running, with no count (a spinner)."""
        if self._bar is not None:
            self._bar.update(self._task, description=self._text(label))

    def advance(self, steps: int) -> None:
        """``steps`` more steps finished."""
        if self._bar is not None:
            self._bar.advance(self._task, steps)

    def _text(self, label: str) -> str:
        return f"{self._description}: {label}" if label else self._description


@contextlib.contextmanager
def progress(args: argparse.Namespace, description: str, *, total: int | None = None,
             rank: int = 0) -> Iterator[ProgressDisplay]:
    """A transient progress display on stderr while the block runs, where ``show_progress`` allows one.

    With ``total`` it is a bar; without, a spinner until ``update`` gives a total. Elsewhere the
    display yielded does nothing, so that callers need no test of their own.
    """
    if not show_progress(args, rank=rank):
        yield ProgressDisplay()
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn
    from rich.table import Column

    columns = (SpinnerColumn(), BarColumn(bar_width=20), TaskProgressColumn(),
               TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis")))
    with Progress(*columns, console=Console(stderr=True), transient=True, redirect_stdout=False) as bar:
        yield ProgressDisplay(bar, bar.add_task(description, total=total), description)
