"""``clusterplan schedule``: replay a job trace on the planned cluster under a scheduling policy."""

from __future__ import annotations

import argparse

from clusterplan.cli.output import add_output_options, add_scenario_options, emit, progress, write_json
from clusterplan.plan.schedule import schedule
from clusterplan.report.schedule import render_schedule, schedule_document
from clusterplan.sched.priority import parse_multifactor
from clusterplan.spec import load_scenario

# The choices of the flags; tests pin them to sched's own lists.
POLICY_NAMES = ("fifo", "easy", "conservative", "fairshare")
TRACE_FORMATS = ("swf", "sacct", "csv", "philly")


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "schedule", help="replay a job trace under FIFO, EASY, conservative backfill or fair-share",
        description="Utilization, waits and slowdown of a job trace replayed on the scenario's cluster.")
    parser.add_argument("trace", metavar="TRACE",
                        help="SWF (.swf, .swf.gz), sacct --parsable2, GPU-cluster CSV or Philly JSON file; "
                             "or synthetic[:jobs=N,load=L,seed=S,...]")
    add_scenario_options(parser)
    parser.add_argument("--policy", choices=POLICY_NAMES, default="easy", help="scheduling policy (default easy)")
    parser.add_argument("--compare", action="store_true", help="run every policy on the trace, one row each")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--gpus", type=int, help="cluster size in GPUs (default: the scenario's)")
    size.add_argument("--nodes", type=int, help="cluster size in nodes of the scenario's GPUs per node")
    parser.add_argument("--topology-aware", action="store_true",
                        help="place multi-node jobs under one leaf switch where they fit (leaf size from the design)")
    parser.add_argument("--skip-bad", action="store_true", help="skip and count malformed trace lines")
    parser.add_argument("--trace-format", choices=TRACE_FORMATS, help="trace format (default: detected)")
    parser.add_argument("--priority", action="append", default=[], metavar="KEY=VALUE",
                        help="fair-share option: age, fairshare, job_size, partition, qos (weights), max_age, "
                             "half_life, calc_period, favor_small, share:USER, partition:NAME, qos:NAME")
    parser.add_argument("--depth", type=int, metavar="N",
                        help="conservative backfilling: reservations for the first N queued jobs only, as Slurm's "
                             "bf_max_job_test (default 2000, which no shipped trace reaches)")
    parser.add_argument("--bins", type=int, default=24, help="time bins of the utilization timeline (default 24)")
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.overrides)
    priority = parse_multifactor(args.priority) if args.priority else None
    policies = POLICY_NAMES if args.compare else (args.policy,)
    with scenario.located(), progress(args, "simulating") as shown:
        result = schedule(scenario.spec, trace=args.trace, policies=policies, trace_format=args.trace_format,
                          skip_bad=args.skip_bad, priority=priority, num_gpus=args.gpus, num_nodes=args.nodes,
                          topology_aware=args.topology_aware, depth=args.depth, num_bins=args.bins,
                          on_policy=shown.say)
    document = schedule_document(result)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        emit(lambda stream: render_schedule(document, stream), args.output)
    return 0
