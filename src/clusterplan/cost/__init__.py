"""What the cluster costs to own, and what renting the same capacity costs."""

from clusterplan.cost.bom import LineItem, bill_of_materials, one_off_items
from clusterplan.cost.cloud import CloudCost, Hybrid, burst_fraction, cloud_cost, hybrid
from clusterplan.cost.tco import HOURS_PER_YEAR, Costs, costs, electricity_usd_per_year

__all__ = ["LineItem", "bill_of_materials", "one_off_items", "CloudCost", "Hybrid", "burst_fraction",
           "cloud_cost", "hybrid", "HOURS_PER_YEAR", "Costs", "costs", "electricity_usd_per_year"]
