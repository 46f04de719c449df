"""How ``clusterplan size`` builds one GPU type: the one place that decides its server, its NVLink domain, its NICs,
its cooling and the GPU counts searched (docs/size.md).

Every GPU is built on its catalog default server (``default_server``), in whole NVLink domains: the counts are one
domain, then powers of two of domains (8, 16, 32, ... GPUs on an 8-GPU HGX server; 72, 144, 288, ... GPUs on a
GB200 NVL72 compute tray, whose ``nvlink_domain_gpus`` is the rack's 72). The scenario keeps its NICs per GPU (at
most the server's ``max_nics``) and its cooling when that cooling takes one domain rack; when it cannot (an
~120 kW NVL72 rack on 40 kW air), the cheapest catalog cooling that can.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.catalog import Catalog, Cooling, Server
from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec


@dataclass(**FROZEN)
class Platform:
    """One GPU type as ``size`` builds it."""

    gpu: str
    server: str                       # the GPU's default server (catalog id)
    gpus_per_node: int
    nics_per_node: int
    cooling: str                      # catalog id
    domain_gpus: int                  # GPUs of one NVLink domain: the server's, or the rack's (72 on NVL72)
    counts: tuple[int, ...]           # GPU counts searched: one domain, then powers of two of domains

    @property
    def rack_scale(self) -> bool:
        return self.domain_gpus > self.gpus_per_node


def platform(spec: Spec, catalog: Catalog, gpu: str, max_gpus: int, *, key: str) -> Platform:
    """``gpu`` on its default server in whole NVLink domains up to ``max_gpus``; errors name ``key``."""
    entry = catalog.get("gpus", gpu, key=key)
    server: Server = catalog.get("servers", entry.default_server, key=key)
    per_gpu = spec.network.nics_per_node / spec.cluster.gpus_per_node
    nics = max(1, min(server.max_nics, round(per_gpu * server.num_gpus)))
    domain = server.nvlink_domain_gpus
    counts = tuple(domain * 2**k for k in range(40) if domain * 2**k <= max_gpus)
    if not counts:
        raise ConfigError(f"must be at least one NVLink domain of {domain} GPUs ({gpu} on {server.id}), "
                          f"got {max_gpus}", key="size.max_gpus")
    return Platform(gpu=gpu, server=server.id, gpus_per_node=server.num_gpus, nics_per_node=nics,
                    cooling=cooling(spec, catalog, server), domain_gpus=domain, counts=counts)


def domain_rack_w(catalog: Catalog, server: Server) -> float:
    """The nameplate draw of one rack of an NVLink domain (one server's, for a server-sized domain)."""
    switch_w = catalog.get("switches", server.domain_switch).power_w * server.domain_switches \
        if server.domain_switch else 0.0
    return (server.servers_per_domain * server.max_power_w + switch_w) / server.domain_racks


def cooling(spec: Spec, catalog: Catalog, server: Server) -> str:
    """The scenario's cooling if it takes one domain rack, else the cheapest catalog cooling that does (else the
    scenario's, and the design says why it cannot be built)."""
    rack_w = domain_rack_w(catalog, server)
    own: Cooling = catalog.get("cooling", spec.facility.cooling, key="facility.cooling")
    if own.max_rack_power_w >= rack_w:
        return own.id
    able = [c for c in catalog.families["cooling"].values() if c.max_rack_power_w >= rack_w]
    return min(able, key=lambda c: (c.price_usd, c.id)).id if able else own.id
