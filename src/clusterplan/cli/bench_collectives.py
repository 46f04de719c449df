"""``clusterplan bench collectives``: nccl-tests on torch.distributed, under torchrun, srun or mpirun."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from clusterplan.bench.collective_run import PeerFailure, run_benchmark
from clusterplan.bench.collectives import AVERAGE_MODES, BACKENDS, BENCH_DTYPES, BenchConfig, bench_dtype, rows_for
from clusterplan.bench.documents import bench_run_document
from clusterplan.bench.launch import discover
from clusterplan.cli.exits import Exit
from clusterplan.cli.output import add_sweep_options, emit, progress, sweep_bytes, write_json
from clusterplan.errors import ConfigError
from clusterplan.perf.collectives import OPS
from clusterplan.report.nccl import render_bench


def add_parser(group) -> None:
    parser = group.add_parser(
        "collectives", help="measure a collective as nccl-tests does (torch.distributed, NCCL or gloo)",
        description="Time one collective over a sweep of sizes on every rank of the job and print the nccl-tests "
                    "table (rank 0 only). Ranks come from torchrun, srun or mpirun; see docs/bench.md.")
    parser.add_argument("--op", default="all_reduce", choices=OPS, help="collective (default all_reduce)")
    add_sweep_options(parser, default_min="32M", default_max="32M")
    parser.add_argument("-n", "--iters", type=int, default=20, help="timed calls per size and placement (default 20)")
    parser.add_argument("-w", "--warmup_iters", type=int, default=5, help="warm-up calls per size (default 5)")
    parser.add_argument("-c", "--check", type=int, default=1, help="check results in an untimed pass: 1 or 0")
    parser.add_argument("-d", "--datatype", default="float", type=bench_dtype, choices=BENCH_DTYPES,
                        help="element type: float, half, bfloat16, f8e4m3, or fp32, fp16, bf16, fp8 (default "
                             "float); f8e4m3 needs NCCL on GPUs that run fp8 (docs/bench.md)")
    parser.add_argument("-a", "--average", type=int, default=1, choices=sorted(AVERAGE_MODES),
                        help="combine rank times: 0 rank 0, 1 mean (default), 2 min, 3 max")
    parser.add_argument("--backend", default="auto", choices=BACKENDS,
                        help="auto: nccl on one GPU per local rank when CUDA is there, else gloo on the CPU")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="give up on a peer that died or hung after this long (default 300)")
    parser.add_argument("--master-addr", help="rendezvous host where the launcher sets no MASTER_ADDR")
    parser.add_argument("--master-port", type=int, help="rendezvous port where the launcher sets no MASTER_PORT")
    parser.add_argument("-o", "--output", "--out", dest="out", metavar="FILE",
                        help="also write the clusterplan.bench/1 JSON to FILE (rank 0); --out is the old name")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="stdout format (default table)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    launch = discover(os.environ, master_addr=args.master_addr, master_port=args.master_port)
    # torch's C++ warnings (socket polls, store retries) would bury the one-line failure message
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    # Options are checked before any rendezvous, and every rank says what is wrong: a launcher that stops the
    # other ranks when the first exits (torchrun) could otherwise kill the one rank meant to say it.
    config = _config(args, launch.world_size)
    try:   # the display is gone (also on Ctrl-C) before anything else is written
        with progress(args, "collectives", rank=launch.rank) as shown:
            result = run_benchmark(config, launch, progress=shown.update)
    except PeerFailure as failure:
        sys.stderr.write(f"clusterplan: error: {failure}\n")
        return Exit.FAILURE
    if launch.rank != 0:
        return Exit.FAILURE if result.wrong else Exit.OK
    _write(bench_run_document(result), args)
    if result.wrong:
        sys.stderr.write(f"clusterplan: error: {result.wrong} wrong elements in the results (see #wrong)\n")
        return Exit.FAILURE
    return Exit.OK


def _config(args: argparse.Namespace, world_size: int) -> BenchConfig:
    low, high, increment = sweep_bytes(args)
    if args.check not in (0, 1):
        raise ConfigError(f"must be 0 or 1, got {args.check}", key="-c")
    if args.out and not Path(args.out).resolve().parent.is_dir():
        raise ConfigError("its folder does not exist", key="--output", source=args.out)
    config = BenchConfig(op=args.op, min_bytes=low, max_bytes=high, step_factor=args.stepfactor,
                         step_bytes=increment, iterations=args.iters, warmup=args.warmup_iters,
                         check=bool(args.check), dtype=args.datatype, average=args.average, backend=args.backend,
                         timeout_s=args.timeout)
    rows_for(config, world_size)
    return config


def _write(document: dict, args: argparse.Namespace) -> None:
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), None)
    else:
        emit(lambda stream: render_bench(document, stream), None)
    if args.out:
        try:
            emit(lambda stream: write_json(document, stream), args.out)
        except ConfigError as error:
            raise ConfigError(error.message, key="--output", source=args.out) from None
