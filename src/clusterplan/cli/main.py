"""``clusterplan`` entry point: one place maps errors to exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from clusterplan import __version__
from clusterplan.cli import (bench, calibrate, catalog, collectives, compare, plan, reliability, report, schedule,
                             sensitivity, train)
from clusterplan.cli.exits import Exit
from clusterplan.errors import ConfigError, InfeasiblePlan


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(Exit.BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="clusterplan", description="Plan, price and prove GPU clusters for ML training.")
    parser.add_argument("--version", action="version", version=f"clusterplan {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback of an error")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in (plan, train, reliability, report, compare, sensitivity, collectives, bench, calibrate, catalog,
                   schedule):
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
        import os

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
