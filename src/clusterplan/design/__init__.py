"""From a scenario to a buildable cluster: fabric, racks and power."""

from clusterplan.design.cabling import CableRun
from clusterplan.design.design import Design, Staffing, design
from clusterplan.design.racks import RackLayout
from clusterplan.design.topology import Topology, fat_tree

__all__ = ["CableRun", "Design", "Staffing", "design", "RackLayout", "Topology", "fat_tree"]
