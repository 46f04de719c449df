"""``clusterplan`` entry point: one place maps errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from clusterplan import __version__
from clusterplan.cli.exits import Exit
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.files import forget_inputs


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(Exit.BAD_INPUT)


# Each subcommand and its module, in the order --help lists them. A run imports only its own command's module
# (and what that imports): loading all of them would double `clusterplan plan`'s start-up.
COMMANDS = {name: f"clusterplan.cli.{name}" for name in (
    "plan", "train", "reliability", "report", "compare", "sensitivity", "collectives", "bench", "calibrate",
    "catalog", "schedule", "serve", "size", "accept")}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of ``only`` that one."""
    parser = _Parser(prog="clusterplan", description="Plan, price and prove GPU clusters for ML training.")
    parser.add_argument("--version", action="version", version=f"clusterplan {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback of an error")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module).add_parser(commands)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, if it names a known one first."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    forget_inputs()           # -o refuses to write over the files this command reads
    parser = build_parser(_command(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # usage errors, --help and --version end here
        return int(done.code or 0)
    if not args.command:
        parser.print_help(sys.stderr)
        return Exit.BAD_INPUT
    try:
        return args.run(args)
    except ConfigError as error:
        if args.traceback:
            raise
        sys.stderr.write(f"clusterplan: error: {error}\n")
        return Exit.BAD_INPUT
    except InfeasiblePlan as error:
        if args.traceback:
            raise
        sys.stderr.write(f"clusterplan: infeasible: {error}\n")
        return Exit.INFEASIBLE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `clusterplan plan | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return Exit.OK
    except Exception as error:
        if args.traceback:
            raise
        if isinstance(error, ModuleNotFoundError) and error.name == "torch":
            sys.stderr.write("clusterplan: error: this command needs PyTorch: "
                             "pip install 'clusterplan[bench]' (or a torch build for your GPUs)\n")
            return Exit.BAD_INPUT
        sys.stderr.write(f"clusterplan: internal error: {type(error).__name__}: {error} "
                         f"(rerun with --traceback and report it)\n")
        return Exit.FAILURE


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
