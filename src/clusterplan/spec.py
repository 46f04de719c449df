"""The user's scenario: TOML sections mapped onto frozen dataclasses.

A scenario file overrides the reference scenario shipped with the package
(``scenarios/reference.toml``) key by key, and ``--set section.key=value``
overrides both: CLI > file > reference. Every key is documented in
``docs/scenario.md``; the reference file gives each default with its source.
"""

from __future__ import annotations

import contextlib
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from clusterplan.errors import ConfigError
from clusterplan.files import read_input_text
from clusterplan.jobs import ReliabilitySettings, Size, Workload
from clusterplan.limits import FAILURE_RATE_LIMIT, LIMITS, PRICE_LIMIT_USD, within
from clusterplan.parsing import parse_toml
from clusterplan.schema import FROZEN, build, check, file_path, generated, locator, non_negative, positive, unit
from clusterplan.verdicts import AcceptThresholds

TOPOLOGIES = ("fat-tree", "rail-optimized")


@dataclass(**FROZEN)
class Cluster:
    gpu: str
    num_nodes: int
    gpus_per_node: int
    server: str = ""  # "" = the GPU's default platform

    def __post_init__(self) -> None:
        positive(self.num_nodes, "num_nodes")
        positive(self.gpus_per_node, "gpus_per_node")

    @property
    def num_gpus(self) -> int:
        return self.num_nodes * self.gpus_per_node


@dataclass(**FROZEN)
class Network:
    fabric: str
    nics_per_node: int
    topology: str
    oversubscription: float
    tiers: int = 0  # 0 = as few as the endpoints need

    def __post_init__(self) -> None:
        positive(self.nics_per_node, "nics_per_node")
        check(self.topology in TOPOLOGIES, "topology",
              f"must be one of {', '.join(TOPOLOGIES)}, got {self.topology!r}")
        check(self.oversubscription >= 1, "oversubscription",
              f"must be >= 1 (1.0 = non-blocking, 2.0 = 2:1), got {self.oversubscription}")
        check(self.tiers in (0, 1, 2, 3), "tiers", f"must be 0 (auto), 1, 2 or 3, got {self.tiers}")


@dataclass(**FROZEN)
class Storage:
    tier: str
    usable_tb: float | None = unit("TB", default=None)   # None ("auto") = tb_per_gpu x GPUs
    tb_per_gpu: float = unit("TB")         # the capacity rule when usable_tb is "auto"
    read_Bps_per_gpu: float = unit("B/s")  # what data loading needs, per GPU; the tier gets enough blocks for it
    burst_buffer: str                      # catalog id of the tier a burst buffer is built from
    burst_buffer_tb: float = unit("TB")    # its capacity; 0 = no burst buffer

    def __post_init__(self) -> None:
        non_negative(self.usable_tb, "usable_tb")
        non_negative(self.tb_per_gpu, "tb_per_gpu")
        non_negative(self.read_Bps_per_gpu, "read_Bps_per_gpu")
        non_negative(self.burst_buffer_tb, "burst_buffer_tb")


@dataclass(**FROZEN)
class Facility:
    electricity_usd_per_kwh: float = unit("USD")
    pue: float
    rack_power_kw: float = unit("kW")
    colocation_usd_per_kw_month: float = unit("USD")
    cooling: str
    rack: str
    pdu: str
    pdus_per_rack: int
    integration: str

    def __post_init__(self) -> None:
        non_negative(self.electricity_usd_per_kwh, "electricity_usd_per_kwh")
        check(self.pue >= 1, "pue", f"must be >= 1, got {self.pue}")
        positive(self.rack_power_kw, "rack_power_kw")
        non_negative(self.colocation_usd_per_kw_month, "colocation_usd_per_kw_month")
        non_negative(self.pdus_per_rack, "pdus_per_rack")


@dataclass(**FROZEN)
class Staff:
    setup_engineers: float | None = None   # None ("auto") = the rule below
    setup_months: float
    ops_engineers: float | None = None     # None ("auto") = ceil(GPUs / gpus_per_engineer), at least min_engineers
    gpus_per_engineer: float
    min_engineers: float
    loaded_cost_usd_per_year: float = unit("USD")

    def __post_init__(self) -> None:
        for name in ("setup_engineers", "setup_months", "ops_engineers", "min_engineers", "loaded_cost_usd_per_year"):
            non_negative(getattr(self, name), name)
        positive(self.gpus_per_engineer, "gpus_per_engineer")


SYNTHETIC = "synthetic"   # finance.utilization_from_trace's generated trace: "synthetic[:key=value,...]"


def synthetic_trace(trace: str) -> bool:
    """Whether ``trace`` asks for a generated (synthetic) trace rather than naming a trace file."""
    return generated(trace, SYNTHETIC)


@dataclass(**FROZEN)
class Finance:
    years: int
    utilization: float
    discount_rate: float
    utilization_from_trace: str = file_path(generated=SYNTHETIC)   # a job trace whose replay sets the
    # utilization ("" = use utilization)
    utilization_policy: str = "easy"   # the scheduling policy of that replay
    # Owning (docs/cost.md): licences switched on by catalog id, the fabric's subnet manager, support after the
    # warranty (or from support_start_year), the flat maintenance fraction instead (0 = off), economic lives per
    # asset class, resale at the horizon, spare nodes, sales tax and a loan.
    licences: tuple[str, ...] = ()
    fabric_manager: str = "opensm"
    support_fraction_per_year: float = 0.10
    support_start_year: float | None = None   # None ("auto") = when each asset class's warranty ends
    maintenance_fraction_per_year: float = 0.0
    life_years: Mapping[str, float] = field(default_factory=dict)   # asset class id -> years (catalog/assets.toml)
    warranty_years: Mapping[str, float] = field(default_factory=dict)   # asset class id -> years (a quote's term)
    resale_fraction: float = 1.0       # share of the straight-line book value a sale at the horizon realises
    spare_nodes: int | None = None     # None ("auto") = the reliability model's recommendation; 0 = none
    sales_tax: float = 0.0
    loan_rate: float = 0.0
    loan_years: int = 0

    def __post_init__(self) -> None:
        check(1 <= self.years <= 30, "years", f"must be between 1 and 30, got {self.years}")
        check(self.utilization_policy in ("fifo", "easy", "conservative", "fairshare"), "utilization_policy",
              f"must be fifo, easy, conservative or fairshare, got {self.utilization_policy!r}")
        check(0 < self.utilization <= 1, "utilization", f"must be in (0, 1], got {self.utilization}")
        check(0 <= self.discount_rate < 1, "discount_rate", f"must be in [0, 1), got {self.discount_rate}")
        for name in ("support_fraction_per_year", "resale_fraction"):   # maintenance: limits.py
            check(0 <= getattr(self, name) <= 1, name, f"must be in [0, 1], got {getattr(self, name)}")
        check(0 <= self.sales_tax < 1, "sales_tax", f"must be in [0, 1), got {self.sales_tax}")
        check(0 <= self.loan_rate < 1, "loan_rate", f"must be in [0, 1), got {self.loan_rate}")
        check(0 <= self.loan_years <= 30, "loan_years", f"must be between 0 and 30, got {self.loan_years}")
        start = self.support_start_year
        check(start is None or 0 <= start < self.years, "support_start_year",
              f"must be in [0, finance.years = {self.years}) (support bought after the horizon costs nothing "
              f"within it), got {start}")
        for asset, life in self.life_years.items():
            check(1 <= life <= 30, f"life_years.{asset}", f"must be between 1 and 30, got {life}")
        for asset, years in self.warranty_years.items():
            check(0 <= years <= 30, f"warranty_years.{asset}", f"must be between 0 and 30, got {years}")
        check(self.spare_nodes is None or 0 <= self.spare_nodes <= 100_000, "spare_nodes",
              f"must be \"auto\" or between 0 and 100,000, got {self.spare_nodes}")
        check(len(set(self.licences)) == len(self.licences), "licences", "names a licence twice")


@dataclass(**FROZEN)
class About:
    """What the scenario is called and why; shown by reports and compare, used by no model."""

    name: str = ""
    notes: str = ""


@dataclass(**FROZEN)
class Cloud:
    offers: tuple[str, ...]
    burst_offer: str = ""  # "" = no hybrid option
    resale_fraction: float = 0.0   # share of a reservation's idle remainder recovered by reselling it (docs/cloud.md)
    capacity: Mapping[str, int] = field(default_factory=dict)   # offer id -> the largest block quoted (GPUs)

    def __post_init__(self) -> None:
        check(0 <= self.resale_fraction < 1, "cloud.resale_fraction",
              f"must be a fraction in [0, 1), got {self.resale_fraction}")
        for offer, gpus in self.capacity.items():
            check(isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0, f"cloud.capacity.{offer}",
                  f"must be a positive whole number of GPUs, got {gpus!r}")


@dataclass(**FROZEN)
class Spec:
    cluster: Cluster
    network: Network
    storage: Storage
    facility: Facility
    staff: Staff
    finance: Finance
    cloud: Cloud
    reliability: ReliabilitySettings
    prices: Mapping[str, float] = unit("USD", default_factory=dict)
    workload: Workload = field(default_factory=Workload)
    size: Size = field(default_factory=Size)
    about: About = field(default_factory=About)
    accept: AcceptThresholds = field(default_factory=AcceptThresholds)   # `clusterplan accept` (docs/accept.md)

    def __post_init__(self) -> None:
        for key, (low, high) in LIMITS.items():
            section, _, name = key.partition(".")
            value = getattr(getattr(self, section), name)
            if value is not None:   # None: "auto", derived by the design
                within(key, value, low, high)
        for entry_id, price in self.prices.items():
            within(f"prices.{entry_id}", price, 0, PRICE_LIMIT_USD)
        for cause, rate in self.reliability.failure_rates.items():
            within(f"reliability.failure_rates.{cause}", rate, 0, FAILURE_RATE_LIMIT)

    def with_nodes(self, num_nodes: int) -> "Spec":
        """The same scenario with another node count (for hybrid and scaling sweeps)."""
        return replace(self, cluster=replace(self.cluster, num_nodes=num_nodes))


REFERENCE = "reference scenario"


def reference_text() -> str:
    return (resources.files("clusterplan.scenarios") / "reference.toml").read_text(encoding="utf-8")


def reference_value(section: str, key: str) -> Any:
    """The reference scenario's value of ``section.key`` (the default every scenario starts from)."""
    return tomllib.loads(reference_text())[section][key]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A loaded spec and where each of its keys came from (for errors found later)."""

    spec: Spec
    origins: Mapping[str, tuple[str, Any]]

    def locate(self, error: ConfigError) -> ConfigError:
        """``error`` with the file and line (or ``--set``) of its key; a command-line option's error as it is."""
        return error if error.key.startswith("-") else _locate(error, self.origins)

    @contextlib.contextmanager
    def located(self) -> Iterator[None]:
        """Re-raise a ``ConfigError`` from the block with the origin of its key."""
        try:
            yield
        except ConfigError as error:
            raise self.locate(error) from None


def load_spec(path: str | Path | None = None, overrides: Sequence[str] = ()) -> Spec:
    """Reference scenario < scenario file < ``--set`` overrides, validated."""
    return load_scenario(path, overrides).spec


def load_scenario(path: str | Path | None = None, overrides: Sequence[str] = ()) -> Scenario:
    """Like ``load_spec``, keeping the origin of every key."""
    table = _parse(reference_text(), REFERENCE)
    origins: dict[str, tuple[str, Any]] = {}
    if path is not None:
        text = _read(Path(path))
        user = _parse(text, str(path))
        _merge(table, user, origins, (str(path), locator(text)))
    for override in overrides:
        key, value = parse_override(override)
        section, _, name = key.partition(".")
        target = table.setdefault(section, {})
        if not isinstance(target, dict):
            raise ConfigError("is not a section", key=section, source=f"--set {override}")
        target[name] = value
        origins[key] = (f"--set {override}", None)
        origins.setdefault(section, (f"--set {override}", None))
    try:
        _nodes_from_gpus(table, origins)
        return Scenario(spec=build(Spec, table), origins=origins)
    except ConfigError as error:
        raise _locate(error, origins) from None


def _nodes_from_gpus(table: dict, origins: Mapping[str, tuple[str, Any]]) -> None:
    """``cluster.num_gpus`` (given instead of ``num_nodes``) as the nodes of ``gpus_per_node`` it makes;
    a ``num_nodes`` given beside it at the same level (both in the file, or both on the command line) must
    agree, and the command line wins over the file (``plan FILE --gpus 256`` where FILE says ``num_nodes``)."""
    cluster = table.get("cluster")
    if not isinstance(cluster, dict) or "num_gpus" not in cluster:
        return
    gpus, per_node = cluster.pop("num_gpus"), cluster.get("gpus_per_node")
    if type(gpus) is not int or gpus < 1:
        raise ConfigError(f"must be a whole number of GPUs >= 1, got {gpus!r}", key="cluster.num_gpus")
    if type(per_node) is not int or per_node < 1:
        return   # the schema names gpus_per_node's problem
    if gpus % per_node:
        raise ConfigError(f"{gpus:,} GPUs are not whole nodes of {per_node}", key="cluster.num_gpus")
    nodes = cluster.get("num_nodes")
    levels = {key: origins[key][0].startswith("--set ") for key in ("cluster.num_gpus", "cluster.num_nodes")
              if key in origins}
    if levels.get("cluster.num_nodes", False) and not levels.get("cluster.num_gpus", True):
        return   # num_nodes on the command line over num_gpus in the file
    if levels.get("cluster.num_nodes") == levels.get("cluster.num_gpus") and nodes != gpus // per_node:
        raise ConfigError(f"{gpus:,} GPUs conflict with cluster.num_nodes = {nodes!r} of {per_node} GPUs; "
                          f"give one of them", key="cluster.num_gpus")
    cluster["num_nodes"] = gpus // per_node


def _locate(error: ConfigError, origins: Mapping[str, tuple[str, Any]]) -> ConfigError:
    """Name the file and line (or the ``--set``) that the faulty key came from."""
    key = re.sub(r"\[\d+\]$", "", error.key)
    while key:
        if key in origins:
            source, locate = origins[key]
            line = (locate(error.key) or locate(key)) if locate else None  # an inline table's key: its line
            return ConfigError(error.message, key=error.key, source=source, line=line)
        key = key.rpartition(".")[0]
    return ConfigError(error.message, key=error.key, source=error.source or REFERENCE, line=error.line)


def _merge(base: dict, user: Mapping, origins: dict, origin: tuple[str, Any], prefix: str = "") -> None:
    for key, value in user.items():
        dotted = f"{prefix}{key}"
        origins[dotted] = origin
        if isinstance(value, dict) and isinstance(base.get(key), dict) and not prefix:
            _merge(base[key], value, origins, origin, f"{dotted}.")
        else:
            base[key] = value


def _read(path: Path) -> str:
    return read_input_text(path, what="scenario")   # a byte-order mark, as some editors write, is skipped


def _parse(text: str, source: str) -> dict:
    try:
        return parse_toml(text, source=source)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(match.group(1)) if match else None
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", message) if match else message
        hint = _bare_word(text, line) if reason == "Invalid value" else None
        raise ConfigError(hint or f"malformed TOML: {reason}", source=source, line=line) from None


def _bare_word(text: str, line: int | None) -> str | None:
    """``section.key = word: strings need quotes in TOML: "word"`` when ``line`` gives a bare word as a value."""
    lines = text.splitlines()
    if line is None or not 0 < line <= len(lines):
        return None
    match = re.fullmatch(r"\s*([\w.\"-]+)\s*=\s*([A-Za-z_][\w.:/+-]*)\s*(?:#.*)?", lines[line - 1])
    if not match:
        return None
    headers = [re.fullmatch(r"\s*\[\[?\s*([\w.\"-]+)\s*\]\]?\s*(?:#.*)?", row) for row in lines[:line - 1]]
    section = next((h.group(1) + "." for h in reversed(headers) if h), "")
    key, word = match.groups()
    return f'{section}{key} = {word}: strings need quotes in TOML: "{word}"'


def parse_override(text: str) -> tuple[str, Any]:
    """``section.key=value`` (a ``--set``, or the live server's override); the value is read as TOML (bounded:
    clusterplan/parsing.py), else taken as a plain string; a bad key or non-UTF-8 value is a ``ConfigError``."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][\w-]*\.[\w.\"-]+", key):
        raise ConfigError("expected section.key=value", source=f"--set {_printable(text)}")
    if _printable(raw) != raw:
        raise ConfigError(f"not UTF-8 text: {_printable(raw.strip())}", key=key, source="--set")
    try:
        value = parse_toml(f"v = {raw.strip()}", source="--set", key=key, first_line=None)["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    section, _, name = key.partition(".")
    return f"{section}.{name.strip(chr(34))}", value


def _printable(text: str) -> str:
    """``text`` with the bytes a command line held that were not UTF-8 (surrogate escapes) written as ``\\xff``."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:        # a surrogate no command line makes
        data = text.encode("utf-8", "backslashreplace")
    return data.decode("utf-8", "backslashreplace")
