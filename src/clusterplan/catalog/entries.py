"""Catalog entries: frozen dataclasses, one per family of hardware or offer.

Every entry carries ``source``, and ``date``, the day its figures were observed, unless it is an
ASSUMPTION (``assumption = true``): an assumed figure was observed nowhere and carries no date. Priced entries carry
``price_usd`` (the planning figure) and, where sources disagree,
``price_low_usd``/``price_high_usd``; ``assumption = true`` marks a figure no
public source gave. Quantities are SI (bytes, bytes/s, FLOP/s, W, s); the
TOML files may write them with units ("80GB", "3.35TB/s", "200Gbps").
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.schema import FROZEN, check, unit


@dataclass(**FROZEN)
class Entry:
    """What every catalog entry has: its id, a name and where its figures come from."""

    id: str
    name: str
    source: str
    date: str = ""        # when the figures were observed; "" for an ASSUMPTION (observed nowhere)
    notes: str = ""


def undated_assumption(entry: Entry) -> None:
    """The dating rule: an ASSUMPTION entry carries no observation date (a sourced one keeps its own)."""
    assumed = getattr(entry, "assumption", False)
    check(not (assumed and entry.date), "date",
          f"an ASSUMPTION entry carries no observation date; remove date = {entry.date!r}")


@dataclass(**FROZEN)
class Priced(Entry):
    """An entry with a price; ``per`` says what one price buys."""

    price_usd: float = unit("USD")
    price_low_usd: float | None = unit("USD", default=None)
    price_high_usd: float | None = unit("USD", default=None)
    assumption: bool = False

    def __post_init__(self) -> None:
        undated_assumption(self)
        check(self.price_usd >= 0, "price_usd", f"must be >= 0, got {self.price_usd}")
        low = self.price_usd if self.price_low_usd is None else self.price_low_usd
        high = self.price_usd if self.price_high_usd is None else self.price_high_usd
        check(low <= self.price_usd <= high, "price_usd",
              f"must lie within price_low_usd ({low}) and price_high_usd ({high}), got {self.price_usd}")

    @property
    def per(self) -> str:
        return "unit"


@dataclass(**FROZEN)
class Gpu(Priced):
    """An accelerator: its price per GPU and the specs the models need."""

    tdp_w: float = unit("W")
    hbm_bytes: float = unit("B")
    hbm_bw_Bps: float = unit("B/s")
    bf16_flops: float = unit("FLOP/s")
    fp8_flops: float = unit("FLOP/s", default=0.0)
    nvlink_bw_Bps: float = unit("B/s", default=0.0)  # per GPU, per direction; 0 = PCIe only
    pcie_bw_Bps: float = unit("B/s", default=64e9)    # host link per direction (Gen5 x16)
    intra_node: str = "pcie"          # how GPUs of a node meet: "nvswitch", "mesh" or "pcie"
    nvls: bool = False                # NVLink SHARP (in-switch reduction) available
    intra_efficiency: float = 0.8     # calibrated: ring busbw / link bandwidth inside a node
    nvls_efficiency: float = 0.0      # calibrated: NVLS all-reduce algbw / link bandwidth
    gemm_efficiency: float = 0.75     # large BF16 GEMM throughput / peak (docs/training.md)
    gemm_k0: float = 0.0              # inner size at which a GEMM runs at half its large-k rate (docs/training.md)
    attention_efficiency: float = 0.6  # best fused attention kernel, forward FLOP/s / BF16 peak (docs/training.md)
    flash2_efficiency: float = -1.0    # FlashAttention-2 forward FLOP/s / BF16 peak; -1 = attention_efficiency
    default_server: str
    spec_source: str

    def __post_init__(self) -> None:
        Priced.__post_init__(self)
        check(self.intra_node in ("nvswitch", "mesh", "pcie"), "intra_node",
              f"must be 'nvswitch', 'mesh' or 'pcie', got {self.intra_node!r}")
        check(self.intra_node == "pcie" or self.nvlink_bw_Bps > 0, "nvlink_bw_Bps",
              f"must be > 0 for intra_node {self.intra_node!r}")
        check(not self.nvls or self.intra_node == "nvswitch", "nvls", "needs intra_node = 'nvswitch'")
        check(self.gemm_k0 >= 0, "gemm_k0", f"must be >= 0, got {self.gemm_k0}")
        if self.flash2_efficiency < 0:
            object.__setattr__(self, "flash2_efficiency", self.attention_efficiency)
        for name in ("intra_efficiency", "nvls_efficiency", "gemm_efficiency", "attention_efficiency",
                     "flash2_efficiency"):
            check(0 <= getattr(self, name) <= 1, name, f"must be in [0, 1], got {getattr(self, name)}")

    @property
    def per(self) -> str:
        return "GPU"


@dataclass(**FROZEN)
class Server(Priced):
    """A GPU server platform; the price excludes the GPUs and the fabric NICs."""

    gpu: str
    num_gpus: int
    max_nics: int
    max_power_w: float = unit("W")
    typical_power_w: float = unit("W")
    rack_units: int
    # The NVLink (scale-up) domain: the GPUs one NVLink switch system joins (docs/nvl72.md). 0 = the server's own
    # GPUs (an HGX baseboard); a rack-scale system (GB200 NVL72) joins the GPUs of many servers (its compute trays)
    # through ``domain_switches`` NVLink switch trays (catalog id ``domain_switch``), over ``domain_racks`` racks
    # (1: NVL72; 2: NVL36x2, each rack half the trays and half the switch trays).
    nvlink_domain_gpus: int = 0
    domain_switch: str = ""
    domain_switches: int = 0
    domain_racks: int = 1

    def __post_init__(self) -> None:
        Priced.__post_init__(self)
        check(0 < self.typical_power_w <= self.max_power_w, "typical_power_w",
              f"must be > 0 and <= max_power_w ({self.max_power_w}), got {self.typical_power_w}")
        if not self.nvlink_domain_gpus:
            object.__setattr__(self, "nvlink_domain_gpus", self.num_gpus)
        check(self.nvlink_domain_gpus % self.num_gpus == 0, "nvlink_domain_gpus",
              f"must be whole servers of {self.num_gpus} GPUs, got {self.nvlink_domain_gpus}")
        rack_scale = self.nvlink_domain_gpus > self.num_gpus
        check(rack_scale == bool(self.domain_switch and self.domain_switches > 0), "domain_switch",
              "a domain larger than one server needs its NVLink switch trays (domain_switch, domain_switches > 0), "
              "and only such a domain has them")
        check(self.domain_racks >= 1 and self.servers_per_domain % self.domain_racks == 0
              and self.domain_switches % self.domain_racks == 0, "domain_racks",
              f"must split the domain's {self.servers_per_domain} servers and {self.domain_switches} switch trays "
              f"evenly, got {self.domain_racks}")

    @property
    def servers_per_domain(self) -> int:
        return self.nvlink_domain_gpus // self.num_gpus

    @property
    def per(self) -> str:
        return "server, without GPUs and fabric NICs"


@dataclass(**FROZEN)
class Nic(Priced):
    """A fabric network adapter (one port at ``rate_Bps``)."""

    rate_Bps: float = unit("B/s")
    power_w: float = unit("W")

    @property
    def per(self) -> str:
        return "NIC"


@dataclass(**FROZEN)
class Switch(Priced):
    """A fabric switch: ``radix`` ports at ``port_rate_Bps``."""

    radix: int
    port_rate_Bps: float = unit("B/s")
    power_w: float = unit("W")
    rack_units: int

    @property
    def per(self) -> str:
        return "switch"


@dataclass(**FROZEN)
class Transceiver(Priced):
    """An optical module serving ``ports`` logical ports at ``rate_Bps`` each."""

    rate_Bps: float = unit("B/s")
    ports: int = 1
    power_w: float = unit("W")

    @property
    def per(self) -> str:
        return "module"


MEDIA = ("copper", "multimode", "singlemode")


@dataclass(**FROZEN)
class Cable(Priced):
    """A cable of one medium, up to ``reach_m`` long, carrying ``links`` links (a copper splitter: 2 or 4)."""

    medium: str = "multimode"
    reach_m: float = 50.0
    links: int = 1

    def __post_init__(self) -> None:
        Priced.__post_init__(self)
        check(self.medium in MEDIA, "medium", f"must be one of {', '.join(MEDIA)}, got {self.medium!r}")
        check(self.reach_m > 0, "reach_m", f"must be > 0, got {self.reach_m}")
        check(self.links >= 1, "links", f"must be >= 1, got {self.links}")

    @property
    def per(self) -> str:
        return "link" if self.links == 1 else "cable"


@dataclass(**FROZEN)
class Fabric(Entry):
    """A scale-out network technology: which NIC, switch, optics and cable it uses."""

    technology: str
    link_rate_Bps: float = unit("B/s")
    nic: str
    switch: str
    nic_transceiver: str
    switch_transceiver: str
    cable: str                        # the standard medium, with the two transceivers above
    copper_cable: str = ""            # a copper (DAC) cable for node links within a rack ("" = none)
    singlemode_nic_transceiver: str = ""     # single-mode optics for links past the cable's reach ("" = none)
    singlemode_switch_transceiver: str = ""
    singlemode_cable: str = ""
    hop_latency_s: float = unit("s")
    efficiency: float = 0.95          # calibrated: achievable share of line rate for large messages
    latency_s: float = unit("s", default=0.0)  # added to NCCL's network latency per inter-node step
    jitter_cv: float = 0.0            # per-rank step-time coefficient of variation (stragglers)
    # False: flows hashed onto one path each (ECMP), collisions not avoided; unset: the technology's default,
    # true for InfiniBand (adaptive routing in its switches), false for Ethernet (plain RoCE hashes flows)
    adaptive_routing: bool | None = None

    def __post_init__(self) -> None:
        check(self.technology in ("infiniband", "ethernet"), "technology",
              f"must be 'infiniband' or 'ethernet', got {self.technology!r}")
        check(0 < self.efficiency <= 1, "efficiency", f"must be in (0, 1], got {self.efficiency}")
        check(self.jitter_cv >= 0, "jitter_cv", f"must be >= 0, got {self.jitter_cv}")
        if self.adaptive_routing is None:
            object.__setattr__(self, "adaptive_routing", self.technology == "infiniband")


@dataclass(**FROZEN)
class StorageTier(Priced):
    """Shared storage bought in building blocks; the price is per usable TB."""

    unit_capacity_tb: float = unit("TB")
    unit_read_Bps: float = unit("B/s")
    unit_write_Bps: float = unit("B/s")
    unit_power_w: float = unit("W")
    unit_rack_units: int
    client_Bps: float = unit("B/s")   # the most one server reads or writes on this tier

    def __post_init__(self) -> None:
        Priced.__post_init__(self)
        for name in ("unit_capacity_tb", "unit_read_Bps", "unit_write_Bps", "client_Bps"):
            check(getattr(self, name) > 0, name, f"must be > 0, got {getattr(self, name)}")

    @property
    def per(self) -> str:
        return "usable TB"


@dataclass(**FROZEN)
class Rack(Priced):
    """A rack enclosure."""

    rack_units: int

    @property
    def per(self) -> str:
        return "rack"


@dataclass(**FROZEN)
class Pdu(Priced):
    """A rack power distribution unit."""

    @property
    def per(self) -> str:
        return "PDU"


@dataclass(**FROZEN)
class Cooling(Priced):
    """A cooling method: capex per kW of IT load and the densest rack it can cool."""

    max_rack_power_w: float = unit("W")

    @property
    def per(self) -> str:
        return "kW of IT load"


@dataclass(**FROZEN)
class Service(Priced):
    """A one-off service priced per node (integration: rack, cable, burn-in)."""

    @property
    def per(self) -> str:
        return "node"


PRICING_MODES = ("on-demand", "reserved-1y", "reserved-3y", "spot")


@dataclass(**FROZEN)
class CloudOffer(Priced):
    """One cloud GPU offer in one pricing mode; the price is per GPU-hour. Capacity is finite (docs/cloud.md):
    ``max_gpus`` is the largest block supplied at once, ``capacity_days`` the days from signing to its first
    GPU-hour (0: at once). A reservation commits ``term_years`` (from the pricing: 1 or 3), billed whole."""

    provider: str
    instance: str
    gpu: str
    gpus_per_instance: int
    pricing: str
    max_gpus: int
    capacity_source: str
    capacity_days: float = 0.0
    term_years: int = -1              # -1: from the pricing (reserved-1y: 1, reserved-3y: 3, else 0)
    # spot only: instances reclaimed per 1000 instance-days, and where that figure comes from (docs/size.md)
    reclaim_per_1000_instance_days: float = 0.0
    reclaim_source: str = ""
    ended: str = ""                   # a past price kept as history: the month it ended (YYYY-MM); "" = current

    def __post_init__(self) -> None:
        Priced.__post_init__(self)
        check(self.pricing in PRICING_MODES, "pricing",
              f"must be one of {', '.join(PRICING_MODES)}, got {self.pricing!r}")
        spot = self.pricing == "spot"
        check(not spot or (self.reclaim_per_1000_instance_days > 0 and self.reclaim_source),
              "reclaim_per_1000_instance_days", "a spot offer needs a reclaim rate > 0 and its reclaim_source")
        check(_number(self.max_gpus) and self.max_gpus > 0, "max_gpus", f"must be > 0 GPUs, got {self.max_gpus!r}")
        check(_number(self.capacity_days) and self.capacity_days >= 0, "capacity_days",
              f"must be >= 0 days, got {self.capacity_days!r}")
        term = {"reserved-1y": 1, "reserved-3y": 3}.get(self.pricing, 0)
        if self.term_years == -1:
            object.__setattr__(self, "term_years", term)
        check(_number(self.term_years) and (self.term_years > 0 if term else self.term_years == 0), "term_years",
              (f"must be > 0 years for {self.pricing}" if term else f"{self.pricing} commits no term")
              + f", got {self.term_years!r}")

    @property
    def per(self) -> str:
        return "GPU-hour"


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


FAILURE_SCOPES = ("gpu", "node", "link", "fabric-link", "switch")


@dataclass(**FROZEN)
class FailureRate(Entry):
    """One cause of job interruptions and how often it strikes each component of its scope.

    ``scope`` names what is counted: every GPU, node, fabric link (NIC, optics and cable to the
    leaf) or switch the job uses. The rate is per 1000 component-days, the form cluster studies
    publish (Meta: failures per 1000 node-days); ``repair`` says the failure takes its node out
    of service until repaired, so spare nodes must cover it.
    """

    scope: str
    per_1000_unit_days: float
    low_per_1000_unit_days: float | None = None
    high_per_1000_unit_days: float | None = None
    repair: bool

    def __post_init__(self) -> None:
        check(self.scope in FAILURE_SCOPES, "scope",
              f"must be one of {', '.join(FAILURE_SCOPES)}, got {self.scope!r}")
        check(self.per_1000_unit_days > 0, "per_1000_unit_days", f"must be > 0, got {self.per_1000_unit_days}")
        low = self.low_per_1000_unit_days
        high = self.high_per_1000_unit_days
        check((low is None or 0 < low <= self.per_1000_unit_days)
              and (high is None or high >= self.per_1000_unit_days), "per_1000_unit_days",
              f"must lie within low ({low}) and high ({high}), got {self.per_1000_unit_days}")


@dataclass(**FROZEN)
class LeadTime(Entry):
    """One step between an order and the first GPU-hour (docs/size.md): the days it takes, with the range
    sources give; ``days_per_1000_gpus`` grows it with the cluster (installing more racks takes longer)."""

    days: float
    low_days: float
    high_days: float
    days_per_1000_gpus: float = 0.0
    assumption: bool = False

    def __post_init__(self) -> None:
        undated_assumption(self)
        check(0 <= self.low_days <= self.days <= self.high_days, "days",
              f"must lie within low_days ({self.low_days}) and high_days ({self.high_days}), got {self.days}")
        check(self.days_per_1000_gpus >= 0, "days_per_1000_gpus", f"must be >= 0, got {self.days_per_1000_gpus}")

    def for_gpus(self, num_gpus: int) -> tuple[float, float, float]:
        """(days, low, high) for a cluster of ``num_gpus``."""
        extra = self.days_per_1000_gpus * num_gpus / 1000
        return self.days + extra, self.low_days + extra, self.high_days + extra
