"""Calibrate the collective model from measured rows (docs/calibration.md).

For each (op, group size) the measured out-of-place times are fitted by the
model's own two terms, a latency and a bus bandwidth,

    t = latency_s + size x bus_factor(op, n) / busbw_Bps,

in three size regimes that mirror NCCL's protocols (below 64 KiB the
latency-bound LL regime, up to 64 MiB the LL128-like middle, above that the
bandwidth-bound Simple regime). Each regime is a weighted least-squares fit of
relative error; a prediction takes the fastest regime, as NCCL takes the
fastest protocol. The file records where the numbers came from.
"""

from __future__ import annotations

import datetime
import math
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.parsing import parse_toml
from clusterplan.perf.collectives import OPS, Prediction, bus_factor
from clusterplan.schema import FROZEN

REGIME_EDGES = (0, 64 * 2**10, 64 * 2**20)  # bytes: LL-like, LL128-like, Simple-like
MIN_POINTS = 2


@dataclass(**FROZEN)
class Regime:
    min_size_bytes: int
    latency_s: float
    busbw_Bps: float


@dataclass(**FROZEN)
class Fit:
    """Calibrated terms for one collective on one group size."""

    op: str
    num_ranks: int
    regimes: tuple[Regime, ...]
    points: int
    min_size_bytes: int
    max_size_bytes: int
    median_error: float
    max_error: float

    def time_s(self, size_bytes: float) -> float:
        factor = bus_factor(self.op, self.num_ranks)
        return min(r.latency_s + size_bytes * factor / r.busbw_Bps for r in self.regimes)


@dataclass(**FROZEN)
class Calibration:
    fits: tuple[Fit, ...]
    sources: tuple[str, ...]
    hosts: tuple[str, ...]
    created: str
    rates: tuple[tuple[str, float], ...] = ()   # measured device rates by check ("gemm" FLOP/s, "h2d" B/s, ...)

    def find(self, op: str, num_ranks: int) -> Fit | None:
        return next((f for f in self.fits if f.op == op and f.num_ranks == num_ranks), None)


def fit_rows(op: str, num_ranks: int, points: Sequence[tuple[float, float]]) -> Fit:
    """Fit (size_bytes, time_s) points of one group; sizes of zero time are skipped."""
    points = sorted((s, t) for s, t in points if s > 0 and t > 0)
    if len(points) < MIN_POINTS:
        raise ConfigError(f"{op} on {num_ranks} ranks: {len(points)} usable rows, need at least {MIN_POINTS}")
    factor = bus_factor(op, num_ranks) if num_ranks > 1 else 1.0
    regimes = []
    edges = (*REGIME_EDGES, math.inf)
    for low, high in zip(edges, edges[1:]):
        band = [(s, t) for s, t in points if low <= s < high]
        if len(band) >= MIN_POINTS or (band and not regimes and len(points) == len(band)):
            regimes.append(_fit_line(band, factor, low))
    if not regimes:  # every band too thin on its own: one line through everything
        regimes.append(_fit_line(points, factor, 0))
    fit = Fit(op=op, num_ranks=num_ranks, regimes=tuple(regimes), points=len(points),
              min_size_bytes=int(points[0][0]), max_size_bytes=int(points[-1][0]), median_error=0.0, max_error=0.0)
    errors = sorted(abs(fit.time_s(s) - t) / t for s, t in points)
    return Fit(op=op, num_ranks=num_ranks, regimes=fit.regimes, points=fit.points,
               min_size_bytes=fit.min_size_bytes, max_size_bytes=fit.max_size_bytes,
               median_error=errors[len(errors) // 2], max_error=errors[-1])


def _fit_line(points: Sequence[tuple[float, float]], factor: float, min_size: int) -> Regime:
    """Least squares of relative error for t = a + x / B, x = size x factor (a >= 0, B > 0)."""
    xs = [s * factor for s, _ in points]
    ts = [t for _, t in points]
    # minimise sum((a + b x - t)^2 / t^2): normal equations in (a, b)
    w = [1 / t**2 for t in ts]
    s_w, s_x, s_xx = sum(w), sum(wi * x for wi, x in zip(w, xs)), sum(wi * x * x for wi, x in zip(w, xs))
    s_t, s_xt = sum(wi * t for wi, t in zip(w, ts)), sum(wi * x * t for wi, x, t in zip(w, xs, ts))
    det = s_w * s_xx - s_x * s_x
    a, b = ((s_t * s_xx - s_x * s_xt) / det, (s_w * s_xt - s_x * s_t) / det) if det > 0 else (0.0, 0.0)
    if a < 0 or b <= 0:  # latency cannot be negative: refit the slope alone, or the intercept alone
        a = 0.0
        b = s_xt / s_xx if s_xx > 0 else 0.0
        if b <= 0:
            a, b = s_t / s_w, 1e-30
    return Regime(min_size_bytes=int(min_size), latency_s=a, busbw_Bps=1 / b)


def calibrate(documents: Iterable[dict], *, today: datetime.date | None = None,
              rates: Iterable[tuple[str, float]] = ()) -> Calibration:
    """Fit every (op, world size) found in ``clusterplan.bench/1`` documents; ``rates`` are recorded as given."""
    groups: dict[tuple[str, int], list[tuple[float, float]]] = {}
    sources, hosts = [], []
    for doc in documents:
        op, ranks = doc.get("op"), doc.get("world_size")
        if op not in OPS or not isinstance(ranks, int) or ranks < 1:
            raise ConfigError(f"needs the collective and the number of ranks (got op {op!r}, ranks {ranks!r}); "
                              f"pass --op and --ranks for a log that does not print them", source=doc.get("source", ""))
        groups.setdefault((op, ranks), []).extend(_points(doc))
        sources.append(doc.get("source", ""))
        hosts.extend(h for h in doc.get("hosts", []) if h not in hosts)
    fits = tuple(fit_rows(op, ranks, points) for (op, ranks), points in sorted(groups.items()))
    return Calibration(fits=fits, sources=tuple(sources), hosts=tuple(hosts),
                       created=(today or datetime.date.today()).isoformat(), rates=tuple(rates))


def _points(doc: dict) -> list[tuple[float, float]]:
    """(size in bytes, out-of-place time in s) of each row; a row that is not one is named by its index."""
    rows = doc.get("rows")
    if not isinstance(rows, list):
        raise ConfigError("rows: expected a list of {size_bytes, out_of_place: {time_s}}", source=doc.get("source", ""))
    points = []
    for index, row in enumerate(rows):
        placement = (row.get("out_of_place") or {}) if isinstance(row, dict) else None
        size, time_s = (row.get("size_bytes"), placement.get("time_s", 0.0)) if isinstance(placement, dict) else (None, None)
        if not (_finite(size) and _finite(time_s) and size >= 0 and time_s >= 0):
            raise ConfigError(f"rows[{index}]: needs size_bytes and out_of_place.time_s, finite numbers >= 0",
                              source=doc.get("source", ""))
        points.append((size, time_s))
    return points


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def to_toml(calibration: Calibration) -> str:
    """The calibration file: provenance, then one [[fit]] per group with its regimes."""
    def strings(values: Iterable[str]) -> str:
        return "[" + ", ".join(_quote(v) for v in values) + "]"

    lines = ["# clusterplan calibration of the collective model (docs/calibration.md)",
             "# time = latency_s + size x bus_factor / busbw_Bps; the fastest regime applies", "",
             "[provenance]", f"created = {_quote(calibration.created)}",
             f"sources = {strings(calibration.sources)}", f"hosts = {strings(calibration.hosts)}", ""]
    if calibration.rates:
        lines += ["[rates]   # measured device rates: gemm in FLOP/s, copies in B/s"]
        lines += [f"{name} = {value:.6g}" for name, value in calibration.rates] + [""]
    for fit in calibration.fits:
        lines += ["[[fit]]", f"op = {_quote(fit.op)}", f"num_ranks = {fit.num_ranks}", f"points = {fit.points}",
                  f"sizes_bytes = [{fit.min_size_bytes}, {fit.max_size_bytes}]",
                  f"median_error = {fit.median_error:.6g}", f"max_error = {fit.max_error:.6g}", "regimes = ["]
        lines += [f"  {{ min_size_bytes = {r.min_size_bytes}, latency_s = {r.latency_s:.6g}, "
                  f"busbw_Bps = {r.busbw_Bps:.6g} }}," for r in fit.regimes]
        lines += ["]", ""]
    return "\n".join(lines)


def read_calibration(text: str, *, source: str) -> Calibration:
    """Parse a calibration file written by ``to_toml`` (errors name the file and the fit)."""
    try:
        table = parse_toml(text, source=source)
        provenance = table.get("provenance", {})
        fits = []
        for index, fit in enumerate(table.get("fit", [])):
            if fit["op"] not in OPS or int(fit["num_ranks"]) < 1:
                raise ValueError(f"fit[{index}]: op {fit['op']!r} on {fit['num_ranks']} ranks")
            regimes = tuple(Regime(min_size_bytes=int(r["min_size_bytes"]), latency_s=float(r["latency_s"]),
                                   busbw_Bps=float(r["busbw_Bps"])) for r in fit["regimes"])
            if not regimes or any(r.busbw_Bps <= 0 or r.latency_s < 0 for r in regimes):
                raise ValueError(f"fit[{index}]: regimes need latency_s >= 0 and busbw_Bps > 0")
            fits.append(Fit(op=fit["op"], num_ranks=int(fit["num_ranks"]), regimes=regimes,
                            points=int(fit.get("points", 0)), min_size_bytes=int(fit["sizes_bytes"][0]),
                            max_size_bytes=int(fit["sizes_bytes"][1]), median_error=float(fit["median_error"]),
                            max_error=float(fit["max_error"])))
        rates = tuple((str(name), float(value)) for name, value in table.get("rates", {}).items())
        if any(value <= 0 for _, value in rates):
            raise ValueError("rates must be > 0")
    except ConfigError:
        raise
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"malformed calibration TOML: {error}", source=source) from None
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise ConfigError(f"not a clusterplan calibration ({error})", source=source) from None
    return Calibration(fits=tuple(fits), sources=tuple(provenance.get("sources", [])),
                       hosts=tuple(provenance.get("hosts", [])), created=str(provenance.get("created", "")),
                       rates=rates)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def calibrated(prediction: Prediction, fit: Fit) -> Prediction:
    """``prediction`` (a perf.collectives.Prediction) with times from ``fit`` instead of the model."""
    import numpy as np   # numpy is not imported by the commands that never calibrate

    sizes = np.asarray(prediction.size_bytes, dtype=float)
    factor = bus_factor(fit.op, fit.num_ranks)
    time_s = np.min([r.latency_s + sizes * factor / r.busbw_Bps for r in fit.regimes], axis=0)
    algbw = sizes / time_s / 1e9
    return Prediction(op=prediction.op, num_ranks=prediction.num_ranks, num_nodes=prediction.num_nodes,
                      size_bytes=sizes, time_s=time_s, algbw_GBps=algbw, busbw_GBps=algbw * factor,
                      algorithm=("calibrated",) * sizes.size, protocol=("fit",) * sizes.size)
