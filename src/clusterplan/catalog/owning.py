"""Catalog entries of owning (docs/cost.md): licences priced per GPU- or node-year, and the asset classes whose
warranty and economic life set support and residual value; and every family's entry class."""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.catalog.entries import (Cable, CloudOffer, Cooling, Entry, Fabric, FailureRate, Gpu, LeadTime, Nic,
                                         Pdu, Priced, Rack, Server, Service, StorageTier, Switch, Transceiver,
                                         undated_assumption)
from clusterplan.schema import FROZEN, check

LICENCE_UNITS = ("GPU", "node")


@dataclass(**FROZEN)
class Licence(Priced):
    """A software licence or subscription priced per ``unit`` (GPU or node) and year (docs/cost.md).

    ``bundled_with``: catalog ids of GPUs or servers whose purchase includes it for ``bundled_years``
    (NVIDIA AI Enterprise with H100 PCIe and H200 NVL): those years are not charged again.
    """

    unit: str = "GPU"
    bundled_with: tuple[str, ...] = ()
    bundled_years: float = 0.0

    def __post_init__(self) -> None:
        Priced.__post_init__(self)
        check(self.unit in LICENCE_UNITS, "unit", f"must be one of {', '.join(LICENCE_UNITS)}, got {self.unit!r}")
        check(0 <= self.bundled_years <= 30, "bundled_years", f"must be between 0 and 30, got {self.bundled_years}")

    @property
    def per(self) -> str:
        return f"{self.unit}-year"


ASSET_CATEGORIES = ("compute", "network", "storage", "facility")


@dataclass(**FROZEN)
class AssetClass(Entry):
    """A class of owned hardware (one BoM category): its warranty and its economic life, in years (docs/cost.md).

    Support is bought when the warranty ends; capex is written off straight-line over the life, and what is
    left at the end of the horizon is the residual value.
    """

    category: str
    warranty_years: float
    life_years: float
    assumption: bool = False

    def __post_init__(self) -> None:
        undated_assumption(self)
        check(self.category in ASSET_CATEGORIES, "category",
              f"must be one of {', '.join(ASSET_CATEGORIES)}, got {self.category!r}")
        check(0 <= self.warranty_years <= 30, "warranty_years", f"must be between 0 and 30, got {self.warranty_years}")
        check(1 <= self.life_years <= 30, "life_years", f"must be between 1 and 30, got {self.life_years}")


FAMILIES: dict[str, type[Entry]] = {
    "gpus": Gpu, "servers": Server, "nics": Nic, "switches": Switch,
    "transceivers": Transceiver, "cables": Cable, "fabrics": Fabric,
    "storage": StorageTier, "racks": Rack, "pdus": Pdu, "cooling": Cooling,
    "services": Service, "cloud": CloudOffer, "failures": FailureRate,
    "leadtimes": LeadTime, "licences": Licence, "assets": AssetClass,
}
