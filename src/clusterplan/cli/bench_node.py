"""``clusterplan bench gemm|memcpy|nodes``: node checks and the cluster health report (docs/health.md)."""

from __future__ import annotations

import argparse
import os
import sys

from clusterplan.bench.gemm import DTYPES, TRANSFORMER_SHAPES, gemm_document, measure_gemm, render_gemm
from clusterplan.bench.launch import discover
from clusterplan.bench.memcpy import measure_memcpy, memcpy_document, render_memcpy
from clusterplan.bench.node_pairs import PAIRINGS
from clusterplan.bench.nodes import NodesConfig, run_nodes as run_all_nodes
from clusterplan.bench.nodes_document import nodes_document, render_nodes
from clusterplan.catalog import load_catalog
from clusterplan.cli.exits import Exit
from clusterplan.cli.output import add_output_options, emit, progress, write_json
from clusterplan.errors import ConfigError
from clusterplan.units import UnitError, parse_size


def add_parser(group) -> None:
    gemm = group.add_parser("gemm", help="achievable dense GEMM TFLOP/s per dtype and shape",
                            description="Square and transformer-shaped matrix multiplies timed after a warm-up "
                                        "(CUDA events on a GPU); FLOP = 2 m n k.")
    gemm.add_argument("--dtype", help=f"comma-separated, of {', '.join(DTYPES)} (default: bf16,fp16,fp32 on a GPU "
                                      "and fp8 where it has FP8 tensor cores, bf16,fp32 on a CPU); fp8 is e4m3 "
                                      "with per-tensor scales and a bf16 output")
    gemm.add_argument("--sizes", help="square sizes, comma-separated, K = 1024 (default 4096,8192,16384 on a GPU, "
                                      "512,1024,2048 on a CPU); 'none' for none")
    gemm.add_argument("--shapes", help="transformer shapes by name, 'all' or 'none' (default: all on a GPU, "
                                       "none on a CPU); `--shapes list` names them")
    _common(gemm)
    gemm.add_argument("--gpu", metavar="ID", help="catalog GPU id (e.g. h100-sxm): report the fraction of its peak")
    add_output_options(gemm, ("table", "json"))
    gemm.set_defaults(run=run_gemm)

    memcpy = group.add_parser("memcpy", help="host-device and device-device copy bandwidth (GB/s)",
                              description="Host-to-device and device-to-host from pinned and pageable memory, "
                                          "device-to-device and host-to-host; host-to-host only without CUDA.")
    memcpy.add_argument("--sizes", help="comma-separated, binary K/M/G (default 1M,16M,256M,1G on a GPU, "
                                        "1M,16M,64M on a CPU)")
    _common(memcpy)
    add_output_options(memcpy, ("table", "json"))
    memcpy.set_defaults(run=run_memcpy)

    nodes = group.add_parser("nodes", help="every node's checks and every link, with outliers named "
                                           "(run under torchrun/srun/mpirun)",
                             description="Short GEMM, memcpy and intra-node all_reduce on every node, then "
                                         "all_reduce between pairs of nodes; rank 0 prints the health report.")
    nodes.add_argument("--ranks-per-node", type=int, metavar="N",
                       help="group N consecutive ranks as a node instead of by host name (testing on one host)")
    nodes.add_argument("--pairing", choices=PAIRINGS, default="auto",
                       help="node pairs: all (every pair), ring (neighbours), auto (all up to 16 nodes)")
    nodes.add_argument("--gemm-size", help="square GEMM size (default 8192 on GPUs, 512 on CPUs)")
    nodes.add_argument("--gemm-dtype", choices=DTYPES, help="GEMM dtype (default bf16 on GPUs, fp32 on CPUs)")
    nodes.add_argument("--memcpy-size", help="copy size, binary K/M/G (default 256M on GPUs, 16M on CPUs)")
    nodes.add_argument("--size", help="all_reduce size, binary K/M/G (default 512M on GPUs, 4M on CPUs)")
    nodes.add_argument("-n", "--iterations", type=int, help="timed iterations (default 20 on GPUs, 5 on CPUs)")
    nodes.add_argument("-w", "--warmup", type=int, help="untimed warm-up iterations (default 5 on GPUs, 1 on CPUs)")
    nodes.add_argument("--backend", choices=("nccl", "gloo"), help="default: nccl with CUDA, else gloo")
    nodes.add_argument("--timeout", type=float, default=600.0, help="collective timeout in seconds (default 600)")
    nodes.add_argument("--master-addr", help="rendezvous host, where the launcher does not set MASTER_ADDR")
    nodes.add_argument("--master-port", type=int, help="rendezvous port, where the launcher does not set it")
    add_output_options(nodes, ("table", "json"))
    nodes.add_argument("--json", metavar="FILE", dest="json_file",
                       help="also write the clusterplan.nodes/1 document to FILE (atomically), whatever --format")
    nodes.set_defaults(run=run_nodes)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--iterations", type=int, help="timed iterations (default 20 on a GPU, few on a CPU)")
    parser.add_argument("-w", "--warmup", type=int, help="untimed warm-up iterations before timing")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N")


def _list(text: str | None) -> list[str] | None:
    return None if text is None else [item.strip() for item in text.split(",") if item.strip()]


def _sizes(text: str | None, key: str) -> list[int] | None:
    items = _list(text)
    if items is None or items == ["none"]:
        return None if items is None else []
    try:
        return [parse_size(item) for item in items]
    except UnitError as error:
        raise ConfigError(str(error), key=key) from None


def _size(text: str | None, key: str) -> int | None:
    sizes = _sizes(text, key)
    return sizes[0] if sizes else None


def _warn(lines) -> None:
    for line in lines:
        if line:
            sys.stderr.write(f"clusterplan: note: {line}\n")


def run_gemm(args: argparse.Namespace) -> int:
    if args.shapes == "list":
        sys.stdout.write("".join(f"{s.name:<26} m={s.m:<6} n={s.n:<6} k={s.k}\n" for s in TRANSFORMER_SHAPES))
        return Exit.OK
    gpu = load_catalog().get("gpus", args.gpu, key="--gpu") if args.gpu else None
    with progress(args, "gemm") as shown:
        result = measure_gemm(sizes=_sizes(args.sizes, "--sizes"), shape_names=_list(args.shapes),
                              dtypes=_list(args.dtype), iterations=args.iterations, warmup=args.warmup,
                              device=args.device, gpu=gpu, progress=shown.update)
    _warn(result.notes)
    document = gemm_document(result)
    emit(lambda stream: (write_json if args.format == "json" else render_gemm)(document, stream), args.output)
    return Exit.OK


def run_memcpy(args: argparse.Namespace) -> int:
    with progress(args, "memcpy") as shown:
        result = measure_memcpy(sizes=_sizes(args.sizes, "--sizes") or None, iterations=args.iterations,
                                warmup=args.warmup, device=args.device, progress=shown.update)
    _warn([result.note])
    document = memcpy_document(result)
    emit(lambda stream: (write_json if args.format == "json" else render_memcpy)(document, stream), args.output)
    return Exit.OK


def run_nodes(args: argparse.Namespace) -> int:
    config = NodesConfig(ranks_per_node=args.ranks_per_node, pairing=args.pairing,
                         gemm_size=_size(args.gemm_size, "--gemm-size"), gemm_dtype=args.gemm_dtype,
                         memcpy_bytes=_size(args.memcpy_size, "--memcpy-size"),
                         all_reduce_bytes=_size(args.size, "--size"), iterations=args.iterations,
                         warmup=args.warmup, backend=args.backend, timeout_s=args.timeout)
    launch = discover(os.environ, master_addr=args.master_addr, master_port=args.master_port)
    with progress(args, "nodes", rank=launch.rank) as shown:
        result = run_all_nodes(config, launch, progress=shown.update)
    if result is None:          # not rank 0: rank 0 reports for everyone
        return Exit.OK
    document = nodes_document(result)
    if args.json_file:
        emit(lambda stream: write_json(document, stream), args.json_file)
    emit(lambda stream: (write_json if args.format == "json" else render_nodes)(document, stream), args.output)
    return Exit.OK
