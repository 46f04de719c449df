"""A ``clusterplan.accept/1`` document as calibration input (docs/accept.md, "Calibrating from a run").

``clusterplan calibrate accept.json`` fits the collective model to the run's measured rows, one
``clusterplan.bench/1``-shaped document per (collective, group size), and records the device rates
as the median over the ranks (GEMM FLOP/s, copy bytes/s): the expectations a CPU run, or a
cluster accepted once, is judged against the next time.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from clusterplan.errors import ConfigError
from clusterplan.perf.collectives import bus_factor

RATES = {"gemm": "gemm_flops_per_s", "h2d": "h2d_Bps", "d2h": "d2h_Bps", "h2h": "h2h_Bps"}


def calibration_inputs(doc: Mapping[str, Any], *, source: str) -> tuple[list[dict], list[tuple[str, float]]]:
    """(bench documents by (op, ranks), device rates) from an acceptance document."""
    measurements = doc.get("measurements")
    if not isinstance(measurements, Mapping):
        raise ConfigError("the acceptance document has no measurements (an audit alone, or a failed run)",
                          source=source)
    groups: dict[tuple[str, int], list[dict]] = {}
    try:
        for collective in measurements["collectives"]:
            n = len(collective["ranks"])
            for row in collective["rows"]:
                size, time_s = int(row["size_bytes"]), float(row["time_s"])
                if time_s > 0 and not row.get("wrong"):
                    algbw = size / time_s / 1e9
                    groups.setdefault((collective["op"], n), []).append(
                        {"size_bytes": size, "out_of_place": {"time_s": time_s, "algbw_GBps": algbw,
                                                              "busbw_GBps": algbw * bus_factor(collective["op"], n)}})
        devices = measurements["devices"]
        rates = [(name, statistics.median(values)) for name, key in RATES.items()
                 if (values := [float(d[key]) for d in devices if d.get(key)])]
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(f"malformed clusterplan.accept/1 measurements ({error})", source=source) from None
    documents = [{"schema": "clusterplan.bench/1", "op": op, "world_size": n, "rows": rows,
                  "source": f"{source} ({op} on {n} ranks)"} for (op, n), rows in sorted(groups.items())]
    return documents, rates
