"""``clusterplan bench ...``: measure a real cluster (torch.distributed), or read other tools' results."""

from __future__ import annotations

from clusterplan.cli import bench_collectives, bench_node, bench_parse
from clusterplan.cli.exits import Exit


def add_parser(commands) -> None:
    parser = commands.add_parser("bench", help="measure the cluster: collectives, GEMM, memcpy, node health",
                                 description="Benchmarks run under torchrun, srun or mpirun (never a launcher "
                                             "of their own); `bench parse` reads nccl-tests logs.")
    # The subcommands' parsers are of this parser's class: main's, which reports a usage error in one line.
    group = parser.add_subparsers(dest="bench_command", metavar="BENCH")
    for module in (bench_collectives, bench_node, bench_parse):
        module.add_parser(group)
    parser.set_defaults(run=lambda args: parser.print_help() or Exit.BAD_INPUT)
