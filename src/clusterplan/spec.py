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
from clusterplan.limits import FAILURE_RATE_LIMIT, LIMITS, PRICE_LIMIT_USD, within
from clusterplan.names import ATTENTION, PRECISIONS, RECOMPUTE, SHARDING
from clusterplan.schema import FROZEN, build, check, locator, unit

TOPOLOGIES = ("fat-tree", "rail-optimized")


def _positive(value: float, key: str) -> None:
    check(value > 0, key, f"must be > 0, got {value}")


def _non_negative(value: float | None, key: str) -> None:
    check(value is None or value >= 0, key, f"must be >= 0, got {value}")


@dataclass(**FROZEN)
class Cluster:
    gpu: str
    num_nodes: int
    gpus_per_node: int
    server: str = ""  # "" = the GPU's default platform

    def __post_init__(self) -> None:
        _positive(self.num_nodes, "num_nodes")
        _positive(self.gpus_per_node, "gpus_per_node")

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
        _positive(self.nics_per_node, "nics_per_node")
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
        _non_negative(self.usable_tb, "usable_tb")
        _non_negative(self.tb_per_gpu, "tb_per_gpu")
        _non_negative(self.read_Bps_per_gpu, "read_Bps_per_gpu")
        _non_negative(self.burst_buffer_tb, "burst_buffer_tb")


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
        _non_negative(self.electricity_usd_per_kwh, "electricity_usd_per_kwh")
        check(self.pue >= 1, "pue", f"must be >= 1, got {self.pue}")
        _positive(self.rack_power_kw, "rack_power_kw")
        _non_negative(self.colocation_usd_per_kw_month, "colocation_usd_per_kw_month")
        _non_negative(self.pdus_per_rack, "pdus_per_rack")


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
            _non_negative(getattr(self, name), name)
        _positive(self.gpus_per_engineer, "gpus_per_engineer")


@dataclass(**FROZEN)
class Finance:
    years: int
    utilization: float
    maintenance_fraction_per_year: float
    discount_rate: float
    software_usd_per_gpu_year: float = unit("USD")
    utilization_from_trace: str = ""   # a job trace whose replay sets the utilization ("" = use utilization)
    utilization_policy: str = "easy"   # the scheduling policy of that replay

    def __post_init__(self) -> None:
        check(1 <= self.years <= 30, "years", f"must be between 1 and 30, got {self.years}")
        check(self.utilization_policy in ("fifo", "easy", "conservative", "fairshare"), "utilization_policy",
              f"must be fifo, easy, conservative or fairshare, got {self.utilization_policy!r}")
        check(0 < self.utilization <= 1, "utilization", f"must be in (0, 1], got {self.utilization}")
        _non_negative(self.maintenance_fraction_per_year, "maintenance_fraction_per_year")
        check(0 <= self.discount_rate < 1, "discount_rate", f"must be in [0, 1), got {self.discount_rate}")
        _non_negative(self.software_usd_per_gpu_year, "software_usd_per_gpu_year")


@dataclass(**FROZEN)
class About:
    """What the scenario is called and why; shown by reports and compare, used by no model."""

    name: str = ""
    notes: str = ""


@dataclass(**FROZEN)
class Cloud:
    offers: tuple[str, ...]
    burst_offer: str = ""  # "" = no hybrid option


@dataclass(**FROZEN)
class Workload:
    """A training job for the performance model (docs/training.md); no model = no workload.

    Layout keys left at 0 (or "") are chosen by the layout search; the ones set are held fixed.
    """

    model: str = ""                  # a preset name (``clusterplan train --list-models``)
    model_config: str = ""           # or a Hugging Face config.json, relative to the scenario file
    tokens: float = unit("count", default=0.0)   # token budget for time- and cost-to-train (0 = none)
    gpus: int = 0                    # GPUs the job uses, whole nodes (0 = the whole cluster)
    seq_len: int = 0                 # 0 = the model's published context length
    global_batch: int = 0            # sequences per step (0 = about 4M tokens, rounded to the layout)
    tp: int = 0
    pp: int = 0
    dp: int = 0
    cp: int = 0
    mbs: int = 0                     # micro-batch size, sequences
    virtual_stages: int = 0          # interleaved pipeline stages per GPU (1 = plain 1F1B)
    recompute: str = ""              # none | selective | full | block (the fewest layers that fit)
    zero: int = -1                   # 0..3 (3 = FSDP full sharding); -1 = search
    sharding: str = "full"           # ZeRO/FSDP across all data-parallel ranks, or "hybrid" (within a node)
    sequence_parallel: bool = True   # Megatron sequence parallelism with TP
    tp_overlap: bool = True          # TP collectives overlap the GEMMs they feed (Transformer Engine userbuffers)
    precision: str = "bf16"          # bf16 | fp8 (GEMMs in FP8, the rest in BF16)
    sparsity_speedup: float = 1.0    # 2:4 sparsity what-if: GEMM throughput multiplier (1 = dense)
    gemm_efficiency: float = 0.0     # measured BF16 GEMM throughput / peak (train --calibration); 0 = the catalog's
    attention: str = "flash"         # the GPU's best fused kernel, flash2, flash1 (2022-23 kernels) or unfused (2021)

    def __post_init__(self) -> None:
        _non_negative(self.tokens, "tokens")
        for name in ("gpus", "seq_len", "global_batch", "tp", "pp", "dp", "cp", "mbs", "virtual_stages"):
            _non_negative(getattr(self, name), name)
        check(not (self.model and self.model_config), "model_config", "give model or model_config, not both")
        check(self.recompute in ("", *RECOMPUTE), "recompute",
              f"must be none, selective, full or block, got {self.recompute!r}")
        check(-1 <= self.zero <= 3, "zero", f"must be 0, 1, 2 or 3, got {self.zero}")
        check(self.sharding in SHARDING, "sharding", f"must be 'full' or 'hybrid', got {self.sharding!r}")
        check(self.precision in PRECISIONS, "precision", f"must be 'bf16' or 'fp8', got {self.precision!r}")
        check(self.attention in ATTENTION, "attention",
              f"must be one of {', '.join(ATTENTION)}, got {self.attention!r}")
        check(self.sparsity_speedup >= 1, "sparsity_speedup", f"must be >= 1, got {self.sparsity_speedup}")
        check(0 <= self.gemm_efficiency <= 1, "gemm_efficiency", f"must be in [0, 1], got {self.gemm_efficiency}")

    @property
    def defined(self) -> bool:
        return bool(self.model or self.model_config)


@dataclass(**FROZEN)
class ReliabilitySettings:
    """Failures, checkpoints and restarts of the training job (docs/reliability.md)."""

    failures: tuple[str, ...]         # catalog ids of the failure causes (``clusterplan catalog --family failures``)
    failure_rates: Mapping[str, float] = field(default_factory=dict)  # overrides, per 1000 component-days
    days: float                       # wall-clock length of the run, for the expected interruptions
    checkpoint_interval_min: float    # 0 = Daly's optimum
    async_checkpoint: bool            # only the GPU-to-host copy (and the metadata) blocks training
    checkpoint_metadata_s: float      # blocking per checkpoint whatever its size: planning, metadata, commit
    checkpoint_bytes_per_param: float
    checkpoints_kept: int
    dataset_tb: float = unit("TB")    # 0 = workload.tokens x bytes_per_token
    bytes_per_token: float
    detect_min: float                 # failure to detection
    restart_overhead_min: float       # detection to training again, less the checkpoint reload
    repair_hours: float               # a failed node out of service
    spare_confidence: float           # probability that the spares cover the nodes in repair
    target_overhead: float            # most goodput the checkpoint tier's finite write bandwidth may cost

    def __post_init__(self) -> None:
        check(len(self.failures) > 0, "failures", "must name at least one failure cause")
        check(len(set(self.failures)) == len(self.failures), "failures", "names a cause twice")
        for cause, rate in self.failure_rates.items():
            check(rate > 0, f"failure_rates.{cause}",
                  f"must be > 0 per 1000 component-days, got {rate} (leave a cause out of reliability.failures "
                  f"to ignore it)")
        for name in ("days", "checkpoint_bytes_per_param", "bytes_per_token", "repair_hours"):
            _positive(getattr(self, name), name)
        for name in ("checkpoint_interval_min", "checkpoint_metadata_s", "dataset_tb", "detect_min",
                     "restart_overhead_min"):
            _non_negative(getattr(self, name), name)
        check(self.checkpoints_kept >= 1, "checkpoints_kept", f"must be >= 1, got {self.checkpoints_kept}")
        check(0 < self.spare_confidence < 1, "spare_confidence", f"must be in (0, 1), got {self.spare_confidence}")
        check(0 < self.target_overhead < 1, "target_overhead", f"must be in (0, 1), got {self.target_overhead}")


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
    about: About = field(default_factory=About)

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
        key, value = _parse_override(override)
        section, _, name = key.partition(".")
        target = table.setdefault(section, {})
        if not isinstance(target, dict):
            raise ConfigError("is not a section", key=section, source=f"--set {override}")
        target[name] = value
        origins[key] = (f"--set {override}", None)
        origins.setdefault(section, (f"--set {override}", None))
    try:
        return Scenario(spec=build(Spec, table), origins=origins)
    except ConfigError as error:
        raise _locate(error, origins) from None


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
    try:
        return path.read_text(encoding="utf-8-sig")   # a byte-order mark, as some editors write, is skipped
    except OSError as error:
        raise ConfigError(f"cannot read scenario: {error.strerror}", source=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("cannot read scenario: not UTF-8 text", source=str(path)) from None


def _parse(text: str, source: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(match.group(1)) if match else None
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", message) if match else message
        raise ConfigError(f"malformed TOML: {reason}", source=source, line=line) from None


def _parse_override(text: str) -> tuple[str, Any]:
    """``section.key=value``; the value is read as TOML, else taken as a plain string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][\w-]*\.[\w.\"-]+", key):
        raise ConfigError("expected section.key=value", source=f"--set {text}")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    section, _, name = key.partition(".")
    return f"{section}.{name.strip(chr(34))}", value
