"""``clusterplan bench collectives``: nccl-tests on torch.distributed, under torchrun, srun or mpirun."""

from __future__ import annotations

import argparse
import sys

from clusterplan.cli.output import add_sweep_options, sweep_bytes


def add_parser(group) -> None:
    from clusterplan.bench.collectives import AVERAGE_MODES, BACKENDS, BENCH_DTYPES
    from clusterplan.perf.collectives import OPS

    parser = group.add_parser(
        "collectives", help="measure a collective as nccl-tests does (torch.distributed, NCCL or gloo)",
        description="Time one collective over a sweep of sizes on every rank of the job and print the nccl-tests "
                    "table (rank 0 only). Ranks come from torchrun, srun or mpirun; see docs/bench.md.")
    parser.add_argument("--op", default="all_reduce", choices=OPS, help="collective (default all_reduce)")
    add_sweep_options(parser, default_min="32M", default_max="32M")
    parser.add_argument("-n", "--iters", type=int, default=20, help="timed calls per size and placement (default 20)")
    parser.add_argument("-w", "--warmup_iters", type=int, default=5, help="warm-up calls per size (default 5)")
    parser.add_argument("-c", "--check", type=int, default=1, help="check results in an untimed pass: 1 or 0")
    parser.add_argument("-d", "--datatype", default="float", choices=BENCH_DTYPES, help="element type")
    parser.add_argument("-a", "--average", type=int, default=1, choices=sorted(AVERAGE_MODES),
                        help="combine rank times: 0 rank 0, 1 mean (default), 2 min, 3 max")
    parser.add_argument("--backend", default="auto", choices=BACKENDS,
                        help="auto: nccl on one GPU per local rank when CUDA is there, else gloo on the CPU")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="give up on a peer that died or hung after this long (default 300)")
    parser.add_argument("--master-addr", help="rendezvous host where the launcher sets no MASTER_ADDR")
    parser.add_argument("--master-port", type=int, help="rendezvous port where the launcher sets no MASTER_PORT")
    parser.add_argument("--out", metavar="FILE", help="also write the clusterplan.bench/1 JSON to FILE (rank 0)")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="stdout format (default table)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import os

    from clusterplan.bench.collectives import PeerFailure, bench_run_document, run_benchmark
    from clusterplan.bench.launch import discover
    from clusterplan.errors import ConfigError

    launch = discover(os.environ, master_addr=args.master_addr, master_port=args.master_port)
    # torch's C++ warnings (socket polls, store retries) would bury the one-line failure message
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    try:
        config = _config(args, launch.world_size)
    except ConfigError:
        if launch.rank != 0:
            return 2  # every rank sees the same options: rank 0 says what is wrong
        raise
    progress = _progress(args, launch.rank)
    try:
        result = run_benchmark(config, launch, progress=progress)
    except PeerFailure as failure:
        _clear(progress)
        sys.stderr.write(f"clusterplan: error: {failure}\n")
        return 1
    except BaseException:  # Ctrl-C (main exits 130) and the rest: no progress line left behind
        _clear(progress)
        raise
    _clear(progress)
    if launch.rank != 0:
        return 1 if result.wrong else 0
    document = bench_run_document(result)
    _write(document, args)
    if result.wrong:
        sys.stderr.write(f"clusterplan: error: {result.wrong} wrong elements in the results (see #wrong)\n")
        return 1
    return 0


def _config(args: argparse.Namespace, world_size: int):
    from pathlib import Path

    from clusterplan.bench.collectives import BenchConfig, rows_for
    from clusterplan.errors import ConfigError
    low, high, increment = sweep_bytes(args)
    if args.check not in (0, 1):
        raise ConfigError(f"must be 0 or 1, got {args.check}", key="-c")
    if args.out and not Path(args.out).resolve().parent.is_dir():
        raise ConfigError("its folder does not exist", key="--out", source=args.out)
    config = BenchConfig(op=args.op, min_bytes=low, max_bytes=high, step_factor=args.stepfactor,
                         step_bytes=increment, iterations=args.iters, warmup=args.warmup_iters,
                         check=bool(args.check), dtype=args.datatype, average=args.average, backend=args.backend,
                         timeout_s=args.timeout)
    rows_for(config, world_size)
    return config


def _write(document: dict, args: argparse.Namespace) -> None:
    from clusterplan.cli.output import emit, write_json
    from clusterplan.errors import ConfigError
    from clusterplan.report.nccl import render_bench

    if args.format == "json":
        emit(lambda stream: write_json(document, stream), None)
    else:
        emit(lambda stream: render_bench(document, stream), None)
    if args.out:
        try:
            emit(lambda stream: write_json(document, stream), args.out)
        except ConfigError as error:
            raise ConfigError(error.message, key="--out", source=args.out) from None


def _progress(args: argparse.Namespace, rank: int):
    """A one-line progress display on rank 0's stderr when it is a terminal and the table is asked."""
    if rank != 0 or args.format != "table" or not sys.stderr.isatty():
        return None

    def show(during: str, done: int, total: int) -> None:
        share = f" [{done + 1}/{total}]" if total else ""
        sys.stderr.write(f"\r\x1b[2K{during}{share}"[:200])
        sys.stderr.flush()

    return show


def _clear(progress) -> None:
    if progress:
        sys.stderr.write("\r\x1b[2K")
        sys.stderr.flush()
