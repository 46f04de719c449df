"""``clusterplan bench ...``: measure a real cluster (torch.distributed), or read other tools' results."""

from __future__ import annotations


def add_parser(commands) -> None:
    from clusterplan.cli import bench_collectives, bench_node, bench_parse
    from clusterplan.cli.main import _Parser

    parser = commands.add_parser("bench", help="measure the cluster: collectives, GEMM, memcpy, node health",
                                 description="Benchmarks run under torchrun, srun or mpirun (never a launcher "
                                             "of their own); `bench parse` reads nccl-tests logs.")
    group = parser.add_subparsers(dest="bench_command", metavar="BENCH", parser_class=_Parser)
    for module in (bench_collectives, bench_node, bench_parse):
        module.add_parser(group)
    parser.set_defaults(run=lambda args: parser.print_help() or 2)
