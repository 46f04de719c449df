"""``clusterplan sensitivity``: tornado and Monte Carlo of TCO, cost per GPU-hour and break-even."""

from __future__ import annotations

import argparse

from clusterplan.cli.output import add_output_options, add_scenario_options, emit, progress, show_progress, write_json

DEFAULT_SAMPLES = 100_000
DEFAULT_SEED = 1


def add_sampling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES,
                        help=f"Monte Carlo samples (default {DEFAULT_SAMPLES:,})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})")
    parser.add_argument("--offer", metavar="ID",
                        help="cloud offer that break-even is measured against (default: the first of cloud.offers)")


def add_parser(commands) -> None:
    parser = commands.add_parser("sensitivity", help="tornado and Monte Carlo of TCO and break-even",
                                 description="How TCO, cost per GPU-hour and break-even move with each "
                                             "uncertain price and rate (docs/sensitivity.md).")
    add_scenario_options(parser)
    add_sampling_options(parser)
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def analyse(scenario, spec, args: argparse.Namespace) -> dict:
    """The ``clusterplan.sensitivity/1`` document for ``spec`` with the sampling options of ``args``."""
    from clusterplan.catalog import load_catalog
    from clusterplan.cost.sensitivity import MAX_SAMPLES
    from clusterplan.errors import ConfigError
    from clusterplan.report.documents import sensitivity_document
    from clusterplan.sensitivity import sensitivity

    if not 1 <= args.samples <= MAX_SAMPLES:
        raise ConfigError(f"must be between 1 and {MAX_SAMPLES:,}, got {args.samples}", key="--samples")
    if args.seed < 0:
        raise ConfigError(f"must be >= 0, got {args.seed}", key="--seed")
    with scenario.located(), progress(args.samples, "Monte Carlo", show_progress(args)) as advance:
        result = sensitivity(spec, load_catalog(), samples=args.samples, seed=args.seed, offer=args.offer,
                             progress=advance)
    return sensitivity_document(result, spec=spec)


def run(args: argparse.Namespace) -> int:
    from clusterplan.cli.plan import effective_spec
    from clusterplan.spec import load_scenario

    scenario = load_scenario(args.scenario, args.overrides)
    document = analyse(scenario, effective_spec(scenario), args)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        from clusterplan.report.terminal_analysis import render_sensitivity

        emit(lambda stream: render_sensitivity(document, stream), args.output)
    return 0
