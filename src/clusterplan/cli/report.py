"""``clusterplan report``: the whole plan as one self-contained HTML file (docs/report.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from clusterplan.cli.output import add_output_options, add_scenario_options, emit, write_json

COLLECTIVE_SIZES = (2**10, 16 * 2**30)   # 1 KiB .. 16 GiB, factor 2, as nccl-tests -b 1K -e 16G -f 2


def add_parser(commands) -> None:
    from clusterplan.cli.sensitivity import add_sampling_options

    parser = commands.add_parser("report", help="self-contained HTML report with charts",
                                 description="Summary, BoM, opex, owning vs renting, power, fabric, checks, "
                                             "collectives, training (with a [workload]) and sensitivity in one "
                                             "offline HTML file.")
    add_scenario_options(parser)
    parser.add_argument("--measured", metavar="FILE",
                        help="nccl-tests log or clusterplan.bench/1 JSON to draw beside the predicted busbw")
    add_sampling_options(parser)
    add_output_options(parser, ("html", "json"))
    parser.set_defaults(run=run)


def group_sizes(num_gpus: int, gpus_per_node: int, measured_ranks: int | None) -> list[int]:
    """One node, the whole cluster, and the measured run's rank count, each once, smallest first."""
    sizes = {min(gpus_per_node, num_gpus), num_gpus}
    if measured_ranks:
        sizes.add(measured_ranks)
    return sorted(sizes)


def collectives(spec, built, measured_path: str | None) -> list[dict]:
    """Predicted all_reduce (or the measured run's collective) for each group size; measured rows attached."""
    from clusterplan.cli.collectives import predicted_document, read_measured
    from clusterplan.errors import ConfigError
    from clusterplan.perf.collectives import size_sweep

    op, ranks, rows = "all_reduce", None, None
    if measured_path:
        found, ranks, rows = read_measured(measured_path)
        op = found or op
        if ranks and not (1 <= ranks <= built.num_gpus
                          and (ranks <= built.gpus_per_node or ranks % built.gpus_per_node == 0)):
            raise ConfigError(f"the run has {ranks} ranks; the cluster has {built.num_gpus} GPUs in nodes of "
                              f"{built.gpus_per_node}", source=measured_path)
    sizes = size_sweep(*COLLECTIVE_SIZES, factor=2.0)
    measured_group = ranks or built.num_gpus
    return [predicted_document(spec, built, op=op, sizes=sizes, gpus=gpus,
                               measured=rows if rows and gpus == measured_group else None,
                               measured_source=measured_path or "")
            for gpus in group_sizes(built.num_gpus, built.gpus_per_node, ranks)]


def job_sizes(num_gpus: int, gpus_per_node: int, job_gpus: int) -> list[int]:
    """One node doubling up to the whole cluster, the whole cluster, and the plan's job, each once, smallest first."""
    sizes, gpus = {num_gpus, job_gpus}, min(gpus_per_node, num_gpus)
    while gpus < num_gpus:
        sizes.add(gpus)
        gpus *= 2
    return sorted(sizes)


def training_sweep(spec, planned) -> dict | None:
    """The workload predicted on each job size (its best layout only), or None without a workload."""
    if planned.training is None:
        return None
    from dataclasses import replace

    from clusterplan.catalog import load_catalog
    from clusterplan.errors import ConfigError
    from clusterplan.plan.training import training
    from clusterplan.report.documents import sweep_row

    built = planned.design
    offers = [rental.cost.offer for rental in planned.rentals]
    rows = []
    for gpus in job_sizes(built.num_gpus, built.gpus_per_node, planned.training.num_gpus):
        if gpus == planned.training.num_gpus:   # the plan's own job, already predicted
            rows.append(sweep_row(gpus=gpus, gpus_per_node=built.gpus_per_node, job=planned.training))
            continue
        sized = replace(spec, workload=replace(spec.workload, gpus=gpus))
        try:
            job = training(sized, load_catalog(), built, planned.costs.cost_per_gpu_hour_usd, offers, top=1)
        except ConfigError as error:   # a layout degree held fixed that this size cannot hold
            rows.append(sweep_row(gpus=gpus, gpus_per_node=built.gpus_per_node, reason=error.message))
            continue
        rows.append(sweep_row(gpus=gpus, gpus_per_node=built.gpus_per_node, job=job))
    return {"hbm_bytes_per_gpu": built.parts.gpu.hbm_bytes, "sweep": rows}


def run(args: argparse.Namespace) -> int:
    from clusterplan.cli.plan import effective_spec
    from clusterplan.cli.sensitivity import analyse
    from clusterplan.plan import plan
    from clusterplan.report.documents import report_document
    from clusterplan.report.export import plan_document
    from clusterplan.spec import load_scenario

    scenario = load_scenario(args.scenario, args.overrides)
    spec = effective_spec(scenario)
    with scenario.located():
        planned = plan(spec)
        groups = collectives(spec, planned.design, args.measured)
        sweep = training_sweep(spec, planned)
    sensitivity = analyse(scenario, spec, args)
    title = spec.about.name or (Path(args.scenario).stem if args.scenario else "reference scenario")
    document = report_document(title=title, source=args.scenario or "reference scenario",
                               plan=plan_document(planned), collectives=groups, sensitivity=sensitivity,
                               training=sweep)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        from clusterplan.report.html import render_report

        emit(lambda stream: render_report(document, stream), args.output)
    return 0
