"""``clusterplan accept SCENARIO``: an acceptance run judged against the design (docs/accept.md).

Run under torchrun, srun or mpirun like ``bench nodes``; rank 0 prints. ``--audit DIR`` judges
saved tool captures instead of the live node tools, and ``--audit-only`` stops after the audit
(no ranks, no torch). Exit 0: every check passed (warnings allowed); 4: a check failed or a rank
died or hung; 2: bad input.
"""

from __future__ import annotations

import argparse
import os
import sys

from clusterplan.audit.probe import probe, read_captures
from clusterplan.bench.accept import AcceptConfig, first_line, run_accept
from clusterplan.bench.launch import discover
from clusterplan.bench.node_pairs import PAIRINGS
from clusterplan.cli.exits import Exit
from clusterplan.cli.inputs import read_calibration_file
from clusterplan.cli.output import add_scenario_options, emit, progress, write_json
from clusterplan.errors import ConfigError
from clusterplan.plan.accept import accept
from clusterplan.report.accept import accept_document, render_accept, render_accept_html
from clusterplan.spec import load_scenario
from clusterplan.units import UnitError, parse_size

FAILED = 4


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "accept", help="acceptance run of a delivered cluster, judged against its design (torchrun/srun/mpirun)",
        description="Topology audit, per-GPU GEMM and copies, intra-node collectives, node pairs and the whole "
                    "cluster, each judged against the design's prediction (or a calibration). Exit 0 pass, "
                    "4 a check failed or a rank died or hung, 2 bad input.")
    add_scenario_options(parser)
    parser.add_argument("--calibration", metavar="FILE",
                        help="judge against this calibration (clusterplan calibrate of an earlier run) instead of "
                             "the design: how a CPU run is judged")
    parser.add_argument("--audit", metavar="DIR", help="audit saved captures in DIR (topo.txt, smi-q.txt, "
                                                       "ibstat.txt, ibv_devinfo.txt, sys.txt) for every node")
    parser.add_argument("--audit-only", action="store_true", help="the audit alone: no ranks, no measurements")
    parser.add_argument("--ranks-per-node", type=int, metavar="N",
                        help="group N consecutive ranks as a node instead of by host name (testing on one host)")
    parser.add_argument("--pairing", choices=PAIRINGS, default="auto", help="node pairs (default auto)")
    parser.add_argument("--sizes", help="collective sizes, comma-separated, binary K/M/G (default 64M,256M,1G on "
                                        "GPUs, 256K,4M on CPUs)")
    parser.add_argument("-n", "--iterations", type=int, help="timed iterations (default 20 on GPUs, 5 on CPUs)")
    parser.add_argument("-w", "--warmup", type=int, help="warm-up iterations (default 5 on GPUs, 1 on CPUs)")
    parser.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto",
                        help="default: nccl with CUDA, else gloo")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds before a silent peer counts as dead or hung (default 300)")
    parser.add_argument("--master-addr", help="rendezvous host, where the launcher does not set MASTER_ADDR")
    parser.add_argument("--master-port", type=int, help="rendezvous port, where the launcher does not set it")
    parser.add_argument("--format", choices=("table", "json", "html"), default="table",
                        help="output format (default table)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument("--json", metavar="FILE", dest="json_file",
                        help="also write the clusterplan.accept/1 document to FILE, whatever --format")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.overrides)
    calibration = read_calibration_file(args.calibration) if args.calibration else None
    captures = read_captures(args.audit) if args.audit else None
    if args.audit_only:
        if captures is None:
            raise ConfigError("needs --audit DIR (saved captures); a live audit runs with the measurements",
                              key="--audit-only")
        with scenario.located():
            result = accept(scenario.spec, None, captures={"node": captures}, calibration=calibration,
                            calibration_source=args.calibration or "")
        return _emit(args, result)
    config = AcceptConfig(ranks_per_node=args.ranks_per_node, pairing=args.pairing, sizes=_sizes(args.sizes),
                          iterations=args.iterations, warmup=args.warmup, backend=args.backend,
                          timeout_s=args.timeout)
    launch = discover(os.environ, master_addr=args.master_addr, master_port=args.master_port)
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")     # torch's C++ warnings would bury the one line
    if config.ranks_per_node and launch.world_size % config.ranks_per_node:
        raise ConfigError(f"{launch.world_size} ranks do not split into nodes of {config.ranks_per_node}",
                          key="--ranks-per-node")
    local_gpu = launch.local_rank

    def node_probe():
        return captures if captures is not None else probe(local_gpu=local_gpu)

    with progress(args, "accept", total=5, rank=launch.rank) as shown:
        try:
            measured = run_accept(config, launch, probe=node_probe, progress=shown.update)
        except (RuntimeError, OSError) as error:      # a survivor other than rank 0: rank 0 reports
            sys.stderr.write(f"clusterplan: accept: rank {launch.rank}: stopped, a peer died or hung "
                             f"({first_line(error)}); rank 0 reports\n")
            return FAILED
    if measured is None:
        return Exit.OK
    with scenario.located():
        result = accept(scenario.spec, measured, captures={node: captures for node in measured.audits}
                        if captures is not None else None, calibration=calibration,
                        calibration_source=args.calibration or "")
    return _emit(args, result)


def _sizes(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(parse_size(item.strip()) for item in text.split(",") if item.strip())
    except UnitError as error:
        raise ConfigError(str(error), key="--sizes") from None


def _emit(args: argparse.Namespace, result) -> int:
    document = accept_document(result)
    if args.json_file:
        emit(lambda stream: write_json(document, stream), args.json_file)
    render = {"json": write_json, "html": render_accept_html, "table": render_accept}[args.format]
    emit(lambda stream: render(document, stream), args.output)
    return document["exit_code"]
