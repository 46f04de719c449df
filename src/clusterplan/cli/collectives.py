"""``clusterplan collectives``: what nccl-tests would measure on the planned cluster."""

from __future__ import annotations

import argparse

from clusterplan.cli.output import (add_output_options, add_scenario_options, add_sweep_options, emit, sweep_bytes,
                                    write_json)


def add_parser(commands) -> None:
    from clusterplan.perf.collectives import DTYPE_BYTES, OPS

    parser = commands.add_parser("collectives", help="predict nccl-tests results on the designed cluster",
                                 description="Predicted collective time, algbw and busbw per message size.")
    add_scenario_options(parser)
    parser.add_argument("--op", default="all_reduce", choices=OPS, help="collective (default all_reduce)")
    add_sweep_options(parser, default_min="8", default_max="16G")
    parser.add_argument("--gpus", type=int, help="GPUs in the group (default: the whole cluster)")
    parser.add_argument("--dtype", default="float", choices=sorted(DTYPE_BYTES), help="element type")
    parser.add_argument("--measured", metavar="FILE", help="nccl-tests log or clusterplan.bench/1 JSON to compare")
    parser.add_argument("--calibration", metavar="FILE", help="calibration TOML from `clusterplan calibrate`")
    add_output_options(parser, ("table", "json"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from clusterplan.catalog import load_catalog
    from clusterplan.design import design
    from clusterplan.errors import ConfigError
    from clusterplan.perf.collectives import size_sweep
    from clusterplan.spec import load_scenario

    scenario = load_scenario(args.scenario, args.overrides)
    spec = scenario.spec
    with scenario.located():
        built = design(spec, load_catalog().with_prices(spec.prices))
    low, high, increment = sweep_bytes(args)
    try:
        sizes = size_sweep(low, high, factor=args.stepfactor, increment=increment)
    except ValueError as error:
        raise ConfigError(str(error), key="-b/-e/-f/-i") from None
    hbm = built.parts.gpu.hbm_bytes
    if high > hbm:
        raise ConfigError(f"{args.maxbytes} does not fit the {hbm / 2**30:.0f} GiB of one {built.parts.gpu.id}",
                          key="-e")
    if len(sizes) > 10_000:
        raise ConfigError(f"{len(sizes)} sizes; use a larger -f or -i", key="-f/-i")
    gpus = args.gpus or built.num_gpus
    if not 1 <= gpus <= built.num_gpus:
        raise ConfigError(f"must be between 1 and the cluster's {built.num_gpus} GPUs, got {gpus}", key="--gpus")
    if gpus > built.gpus_per_node and gpus % built.gpus_per_node:
        raise ConfigError(f"{gpus} GPUs do not fill whole nodes of {built.gpus_per_node}", key="--gpus")

    def calibrate(prediction):
        return _calibrate(prediction, args.calibration, args.op, gpus)

    measured = _measured(args.measured, args.op) if args.measured else None
    document = predicted_document(spec, built, op=args.op, sizes=sizes, gpus=gpus, dtype=args.dtype,
                                  measured=measured, measured_source=args.measured or "",
                                  calibrate=calibrate if args.calibration else None)
    if args.format == "json":
        emit(lambda stream: write_json(document, stream), args.output)
    else:
        from clusterplan.report.nccl import render_collectives

        emit(lambda stream: render_collectives(document, stream), args.output)
    return 0


def predicted_document(spec, built, *, op: str, sizes, gpus: int, dtype: str = "float",
                       measured: dict[int, dict] | None = None, measured_source: str = "", calibrate=None) -> dict:
    """The ``clusterplan.collectives/1`` document of ``op`` over ``sizes`` on ``gpus`` GPUs of ``built``."""
    from clusterplan.errors import ConfigError
    from clusterplan.perf.collectives import element_count, predict, system_from_design
    from clusterplan.report.export import collectives_document

    rounded = [element_count(op, size, dtype, gpus) for size in sizes]
    rows = [(size, count) for size, count in rounded if size > 0]
    if not rows:
        raise ConfigError(f"every size is below one {dtype} per rank", key="-b")
    prediction = predict(op, [size for size, _ in rows], system_from_design(built), gpus)
    if calibrate:
        prediction = calibrate(prediction)
    return collectives_document(spec=spec, design=built, prediction=prediction, dtype=dtype,
                                counts=[count for _, count in rows], measured=measured,
                                measured_source=measured_source)


def _calibrate(prediction, path: str, op: str, gpus: int):
    """Calibrated times where the file fits this (op, group size); the model elsewhere, said on stderr."""
    import sys

    from clusterplan.bench.calibrate import calibrated, read_calibration
    from clusterplan.cli.bench_parse import _read

    fit = read_calibration(_read(path), source=path).find(op, gpus)
    if fit is None:
        sys.stderr.write(f"clusterplan: {path} has no fit for {op} on {gpus} ranks; the model is used\n")
        return prediction
    return calibrated(prediction, fit)


def _measured(path: str, op: str) -> dict[int, dict]:
    """Out-of-place measurements by size from an nccl-tests log or a clusterplan.bench/1 JSON file."""
    from clusterplan.errors import ConfigError

    found, _, rows = read_measured(path, op)
    if found and found != op:
        raise ConfigError(f"the file is a {found} run, not {op}; pass --op {found}", source=path)
    return rows


def read_measured(path: str, op: str | None = None) -> tuple[str | None, int | None, dict[int, dict]]:
    """(collective, ranks, out-of-place measurements by size) of an nccl-tests log or bench JSON file."""
    import json

    from clusterplan.bench.nccltests import parse_nccl_tests
    from clusterplan.errors import ConfigError

    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read measurements: {getattr(error, 'strerror', None) or error}",
                          source=path) from None
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
            rows = doc["rows"]
            return doc.get("op"), doc.get("world_size"), {int(r["size_bytes"]): r["out_of_place"] for r in rows}
        except (ValueError, KeyError, TypeError) as error:
            raise ConfigError(f"not a clusterplan.bench/1 document ({error})", source=path) from None
    log = parse_nccl_tests(text, source=path, op=op)
    return log.op, log.num_ranks, {row.size_bytes: {"time_s": row.out_of_place.time_s,
                                                    "algbw_GBps": row.out_of_place.algbw_GBps,
                                                    "busbw_GBps": row.out_of_place.busbw_GBps} for row in log.rows}
